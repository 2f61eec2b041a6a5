/**
 * 500 internal_error from a real engine failure (the sessions table is gone) and from an
 * unexpected exception: the client sees the envelope only, the log has the cause and request id.
 * A runtime of its own, since the failure destroys part of the schema.
 */
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../src/log.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { credentialHeaders, NOW, seedFixture, type FixtureClients } from './openapi-support.ts'

let rt: TestRuntime
let clients: FixtureClients
const lines: Record<string, unknown>[] = []
let app: ReturnType<typeof testApp>

beforeAll(async () => {
  rt = await openTestRuntime()
  clients = await seedFixture(rt)
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const logger = createLogger('info', sink)
  app = testApp(rt, { now: () => NOW, logger, runner: rt.runner })
  app.get('/insights/:projectId/_boom', () => {
    throw new Error('kaboom in /srv/quarry/src/secret-module.ts with password=hunter2')
  })
  // The routes work before the failure.
  expect((await app.request('/insights/alpha/metrics', { headers: credentialHeaders(clients.root) })).status).toBe(200)
  await rt.runner.command({ name: 'drop_sessions', sql: 'DROP TABLE sessions', params: {} })
})

afterAll(async () => {
  await rt?.dispose()
})

const logOf = (requestId: string) => lines.filter((l) => l.requestId === requestId)

describe('500 internal_error', () => {
  it('from an engine failure: no SQL, table name or stack in the body; the cause is logged with the request id', async () => {
    for (const url of ['/insights/alpha/metrics', '/insights/alpha/pages', '/insights/alpha/country']) {
      const requestId = `trace-500-${lines.length}`
      const res = await app.request(url, { headers: { ...credentialHeaders(clients.root), 'X-Request-Id': requestId } })
      const text = await res.text()
      expect(res.status, text).toBe(500)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(JSON.parse(text)).toEqual({
        status: 500,
        error: 'Internal Server Error',
        code: 'internal_error',
        message: expect.any(String),
        requestId,
      })
      expect(text).not.toMatch(/sessions|SELECT|FROM|UNKNOWN_TABLE|Code: \d+|DB::|quarry\.|\.ts|\n\s+at /)

      const logged = logOf(requestId)
      const failure = logged.find((l) => l.level === 50 && l.msg === 'request failed')
      expect(failure, JSON.stringify(logged)).toBeDefined()
      // The log keeps what the body does not: the engine's own message naming the missing table.
      expect(JSON.stringify(failure)).toMatch(/sessions/)
      expect(logged.find((l) => l.msg === 'request')).toMatchObject({ status: 500, requestId })
    }
  })

  it('from an unexpected exception, with the same envelope', async () => {
    const res = await app.request('/insights/alpha/_boom', { headers: credentialHeaders(clients.root) })
    const text = await res.text()
    expect(res.status).toBe(500)
    const body = JSON.parse(text) as { requestId: string }
    expect(body).toMatchObject({ status: 500, error: 'Internal Server Error', code: 'internal_error' })
    expect(text).not.toMatch(/kaboom|secret-module|hunter2|\.ts/)
    expect(body.requestId).toBe(res.headers.get('x-request-id'))
    expect(JSON.stringify(logOf(body.requestId))).toContain('kaboom')
  })

  it('leaves routes that do not need the lost table working', async () => {
    const res = await app.request('/export/events?projectId=alpha', { headers: credentialHeaders(clients.root) })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0)
  })
})
