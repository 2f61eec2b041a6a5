/** A build step on a server stops where it runs when its build is stopped (a shutdown). */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeServer, openServerRuntime, type ServerRuntime } from './helpers.ts'

describeServer('commands on a server', () => {
  let rt: ServerRuntime
  beforeAll(async () => {
    rt = await openServerRuntime('commands')
    await rt.runner.command({ name: 'table', sql: 'CREATE TABLE slow_sink (n UInt64) ENGINE = MergeTree ORDER BY n', params: {} })
  })
  afterAll(async () => {
    await rt?.dispose()
  })

  const running = async () =>
    rt.runner.rows<{ n: string }>(
      { name: 'running', sql: "SELECT count() AS n FROM system.processes WHERE query LIKE 'INSERT INTO slow_sink%'", params: {} },
      { timeoutS: 30 },
    )

  it('an aborted build step is killed on the server, and its call fails only once it is', async () => {
    const abort = new AbortController()
    // About 20 s of work, a row at a time, writing nothing back.
    const step = rt.runner.command(
      { name: 'slow step', sql: 'INSERT INTO slow_sink SELECT number FROM numbers(200) WHERE sleepEachRow(0.1) = 0', params: {} },
      { background: 'build', signal: abort.signal },
    )
    const outcome = step.then(() => 'finished', () => 'stopped')
    for (let i = 0; Number((await running())[0]!.n) === 0; i++) {
      if (i > 100) throw new Error('the step never showed in system.processes')
      await new Promise((r) => setTimeout(r, 50))
    }
    const aborted = performance.now()
    abort.abort()
    expect(await outcome).toBe('stopped')
    expect(performance.now() - aborted).toBeLessThan(10_000)
    for (let i = 0; Number((await running())[0]!.n) > 0; i++) {
      if (i > 100) throw new Error('the step still runs on the server 5 s after its call failed')
      await new Promise((r) => setTimeout(r, 50))
    }
    const [row] = await rt.runner.rows<{ n: string }>({ name: 'rows', sql: 'SELECT count() AS n FROM slow_sink', params: {} }, { timeoutS: 30 })
    expect(Number(row!.n)).toBeLessThan(200)
  })
})
