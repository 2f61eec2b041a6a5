import { randomUUID } from 'node:crypto'
import { requestId as honoRequestId } from 'hono/request-id'

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Hono's request id, honouring an incoming X-Request-Id when it is a plain token: Hono's own test
 * refuses the dots and colons that tracing systems put in ids, so the generator decides instead.
 */
export const requestId = honoRequestId({
  limitLength: 128,
  generator: (c) => {
    const incoming = c.req.header('x-request-id')
    return incoming && SANE_ID.test(incoming) ? incoming : randomUUID()
  },
})
