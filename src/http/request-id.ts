import { randomUUID } from 'node:crypto'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Honours an incoming X-Request-Id when it is a plain token, otherwise mints one. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header('x-request-id')
  const id = incoming && SANE_ID.test(incoming) ? incoming : randomUUID()
  c.set('requestId', id)
  c.header('X-Request-Id', id)
  await next()
})
