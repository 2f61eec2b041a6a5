/**
 * Long background statements (sealed builds) on the embedded engine run beside requests, not in the
 * line chdb-node keeps for parameterized queries (src/clickhouse/engine/background.ts): their values
 * travel as data and come back exactly, a request's read is not held behind one, and nothing of a
 * statement's values is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
const read = { timeoutS: 30 }

beforeAll(async () => {
  rt = await openTestRuntime()
  await rt.runner.command({ name: 't', sql: "CREATE TABLE lane_values (s String, d DateTime64(3, 'UTC'), n UInt64, b Bool) ENGINE = MergeTree ORDER BY n", params: {} })
})
afterAll(async () => rt?.dispose())

const leftBehind = async () =>
  (await rt.runner.rows<{ n: number }>({ name: 'left', sql: 'SELECT count() AS n FROM quarry_background_values', params: {} }, read))[0]!.n

describe('the background lane', () => {
  it('is the embedded engine’s', () => {
    expect(rt.engine.background).toBeDefined()
  })

  it('writes each value exactly as given, whatever its characters, and leaves none behind', async () => {
    const values = [
      { s: "it's \\ a \"quoted\" value'); DROP TABLE lane_values; --", d: '2026-03-29 01:59:59.999', n: 2 ** 53 - 1, b: true },
      { s: 'ü\t\n{x:String}', d: '1969-12-31 23:59:59.001', n: 0, b: false },
    ]
    for (const v of values) {
      await rt.runner.command(
        { name: 'lane_insert', sql: "INSERT INTO lane_values SELECT {s:String}, {d:DateTime64(3, 'UTC')}, {n:UInt64}, {b:Bool}", params: v },
        { background: 'build' },
      )
    }
    const rows = await rt.runner.rows<{ s: string; d: string; n: number; b: boolean }>(
      { name: 'lane_read', sql: 'SELECT s, toString(d) AS d, n, b FROM lane_values ORDER BY n DESC', params: {} },
      read,
    )
    expect(rows).toEqual(values)
    expect(await leftBehind()).toBe(0)
  })

  it('takes an array of strings exactly as given, whatever its characters (a snapshot\'s held-out keys)', async () => {
    const keys = ['112744911109886641065661991869057439159', "it's \\ a ['quoted'] value\\", '', 'ü\t\n{k:String}']
    await rt.runner.command(
      { name: 'lane_array', sql: "INSERT INTO lane_values SELECT arrayStringConcat(arrayMap(k -> hex(k), {keys:Array(String)}), ','), now64(3), 7, true", params: { keys } },
      { background: 'build' },
    )
    const [row] = await rt.runner.rows<{ s: string }>({ name: 'lane_array_read', sql: 'SELECT s FROM lane_values WHERE n = 7', params: {} }, read)
    const hex = (k: string) => Buffer.from(k, 'utf8').toString('hex').toUpperCase()
    expect(row!.s).toBe(keys.map(hex).join(','))
    expect(await leftBehind()).toBe(0)
  })

  it('runs builds at the lowest CPU priority and snapshots at the requests\', their jobs\' values kept apart', async () => {
    // Both at once, each holding its values a while: each lane numbers its jobs from the same counter,
    // or one reads the other's values too.
    const write = (background: 'build' | 'snapshot', n: number) =>
      rt.runner.command(
        {
          name: 'lane_priority',
          sql: "INSERT INTO lane_values SELECT toString(getSetting('os_thread_priority')), now64(3), {n:UInt64}, true FROM numbers(3) WHERE sleepEachRow(0.2) = 0 LIMIT 1 SETTINGS max_block_size = 1",
          params: { n },
        },
        { background },
      )
    await Promise.all([write('build', 11), write('snapshot', 12)])
    const rows = await rt.runner.rows<{ s: string; n: number }>({ name: 'lane_priority_read', sql: 'SELECT s, n FROM lane_values WHERE n IN (11, 12) ORDER BY n', params: {} }, read)
    expect(rows).toEqual([
      { s: '19', n: 11 },
      { s: '0', n: 12 },
    ])
    expect(await leftBehind()).toBe(0)
  })

  it('refuses a statement whose placeholder has no value, and still leaves none behind', async () => {
    await expect(
      rt.runner.command({ name: 'lane_missing', sql: "INSERT INTO lane_values SELECT {s:String}, now64(3), {n:UInt64}, true", params: { s: 'x' } }, { background: 'build' }),
    ).rejects.toThrow()
    expect(await leftBehind()).toBe(0)
  })

  it('stops a statement where it runs once its signal is aborted, and goes on with the next', async () => {
    const stopping = new AbortController()
    // 40 blocks of one row, half a second each: 20 s unless it is stopped.
    const long = rt.runner.command(
      { name: 'lane_stopped', sql: 'INSERT INTO lane_values SELECT toString(sleepEachRow(0.5)), now64(3), {n:UInt64} + number, false FROM numbers(40) SETTINGS max_block_size = 1', params: { n: 300 } },
      { background: 'build', signal: stopping.signal },
    )
    const outcome = long.then(() => 'finished', (err: Error) => err.message)
    await new Promise((resolve) => setTimeout(resolve, 800))
    const aborted = performance.now()
    stopping.abort()
    expect(await outcome).toMatch(/cancel/i)
    expect(performance.now() - aborted).toBeLessThan(10_000)
    const [written] = await rt.runner.rows<{ c: number }>({ name: 'lane_stopped_rows', sql: 'SELECT count() AS c FROM lane_values WHERE n BETWEEN 300 AND 339', params: {} }, read)
    expect(written!.c).toBeLessThan(40)
    // One not yet begun when its signal is aborted is never sent.
    await expect(rt.runner.command({ name: 'lane_never', sql: 'INSERT INTO lane_values SELECT {s:String}, now64(3), 400, true', params: { s: 'x' } }, { background: 'build', signal: stopping.signal })).rejects.toThrow()
    await rt.runner.command({ name: 'lane_after', sql: 'INSERT INTO lane_values SELECT {s:String}, now64(3), 401, true', params: { s: 'y' } }, { background: 'build' })
    const after = await rt.runner.rows<{ n: number }>({ name: 'lane_after_rows', sql: 'SELECT n FROM lane_values WHERE n IN (400, 401)', params: {} }, read)
    expect(after).toEqual([{ n: 401 }])
    expect(await leftBehind()).toBe(0)
  })

  // The control runs the same long statement in the requests' line: there the read waits for it.
  for (const background of ['build', 'snapshot', undefined] as const) {
    it(`${background ? `${background}: does not hold` : 'control: the requests’ line holds'} a parameterized read behind a long statement`, async () => {
      const finished: string[] = []
      const long = rt.runner
        .command({ name: 'lane_long', sql: 'INSERT INTO lane_values SELECT toString(sleepEachRow(0.5)), now64(3), {n:UInt64} + number, false FROM numbers(4) SETTINGS max_block_size = 1', params: { n: background === 'snapshot' ? 200 : 100 } }, { background })
        .then(() => finished.push('long'))
      // Once the long statement has surely begun.
      await new Promise((resolve) => setTimeout(resolve, 300))
      await rt.runner.rows({ name: 'lane_read', sql: 'SELECT {x:UInt8} AS x', params: { x: 1 } }, read).then(() => finished.push('read'))
      await long
      expect(finished).toEqual(background ? ['read', 'long'] : ['long', 'read'])
    })
  }
})
