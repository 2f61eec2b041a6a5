/**
 * A verification whose read of the client's row fails says nothing about the credentials: it answers
 * 503 in the error envelope with Retry-After, is not cached, and does not count toward the address's
 * lockout. A warm run once got 401 ×32 and then 429 for the rest of the run with a valid client
 * whose cached verification had expired (benchmarks/README.md, twelfth stop).
 *
 * The reads fail against real chDB where a test can make them: a max_execution_time the lookup
 * cannot meet. A KILL QUERY's answer is the error chDB gives for it (code 394), and an answer cut
 * short is the real answer with its rows dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { EngineQueryError } from '../src/clickhouse/errors.ts'
import { OverloadedError } from '../src/clickhouse/gate.ts'
import type { QueryRunner } from '../src/clickhouse/run.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
let valid: { id: string; secret: string }

beforeAll(async () => {
  rt = await openTestRuntime()
  await createProject(rt.runner, { id: 'alpha', name: 'Alpha', timezone: 'UTC', organizationId: 'org-a' })
  valid = await createClientRow(rt.runner, { type: 'read', projectId: 'alpha', organizationId: 'org-a', name: 'valid' })
})

afterAll(async () => {
  await rt?.dispose()
})

type Failure = 'timeout' | 'killed' | 'cut short' | 'overloaded'

/** The runtime's runner, whose client lookups fail as `failing` says while it is set. */
function failingRunner(inner: QueryRunner) {
  const state: { failing?: Failure; lookups: number } = { lookups: 0 }
  const runner: QueryRunner = {
    ...inner,
    async rows<T>(stmt: Parameters<QueryRunner['rows']>[0], opts: Parameters<QueryRunner['rows']>[1]): Promise<T[]> {
      if (stmt.name !== 'client_by_id') return inner.rows<T>(stmt, opts)
      state.lookups += 1
      switch (state.failing) {
        case undefined:
          return inner.rows<T>(stmt, opts)
        case 'timeout':
          // 1 ms: chDB answers TIMEOUT_EXCEEDED (seen at 6 ms for this lookup).
          return inner.rows<T>(stmt, { ...opts, timeoutS: 0.001 })
        case 'killed':
          throw new EngineQueryError('Query was cancelled.', '394')
        case 'cut short':
          await inner.rows<T>(stmt, opts)
          return []
        case 'overloaded':
          throw new OverloadedError('too many queries waiting')
      }
    },
  }
  return { runner, state }
}

const LIMIT = 20

function app(inner = rt.runner) {
  let now = 0
  const { runner, state } = failingRunner(inner)
  const built = testApp(rt, {
    runner,
    auth: { clock: () => now },
    config: { ...rt.config, QUARRY_AUTH_FAILURE_LIMIT: LIMIT, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_AUTH_CACHE_TTL_S: 60 },
  })
  const get = (c: { id: string; secret: string }) =>
    built.request('/insights/alpha/metrics?range=7d', { headers: { 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret } })
  return { get, state, advance: (ms: number) => (now += ms) }
}

const unknown = { id: '00000000-0000-4000-8000-000000000001', secret: 'sec_unknown' }

describe('a verification whose read fails', () => {
  for (const failure of ['timeout', 'killed', 'cut short', 'overloaded'] as const) {
    it(`${failure}: 503 with Retry-After for every request sharing it, not cached, not counted toward the lockout`, async () => {
      const a = app()
      expect((await a.get(valid)).status).toBe(200)
      // The cached verification expires, as in the warm run.
      a.advance(61_000)
      a.state.failing = failure
      // More than the lockout's limit, all at once (they share one verification), then one by one.
      const burst = await Promise.all(Array.from({ length: LIMIT + 12 }, () => a.get(valid)))
      const alone = []
      for (let i = 0; i < LIMIT + 1; i++) alone.push(await a.get(valid))
      for (const res of [...burst, ...alone]) {
        expect(res.status).toBe(503)
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        const body = (await res.json()) as { code: string; status: number; requestId: string }
        expect(body.status).toBe(503)
        expect(body.code).toBe(failure === 'overloaded' ? 'overloaded' : 'engine_unavailable')
        expect(typeof body.requestId).toBe('string')
      }
      // An unknown id cannot be told from a known one while the read fails: 503, not 401.
      expect((await a.get(unknown)).status).toBe(503)
      a.state.failing = undefined
      const before = a.state.lookups
      expect((await a.get(valid)).status).toBe(200)
      // Read again (no "no such client" was kept), and no lockout (no 429).
      expect(a.state.lookups).toBe(before + 1)
    })
  }

  it('a real unknown client still gets 401, and counts toward the lockout', async () => {
    const a = app()
    for (let i = 0; i < LIMIT; i++) expect((await a.get(unknown)).status).toBe(401)
    const locked = await a.get(valid)
    expect(locked.status).toBe(429)
    expect(((await locked.json()) as { code: string }).code).toBe('rate_limited')
  })
})
