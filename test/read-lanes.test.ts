/**
 * Reads beside the line on the embedded engine (src/clickhouse/engine/read-lanes.ts): a read that
 * finds chdb-node's one line for parameterized statements taken runs on a session of its own, its
 * values read from a file. Its values come back exactly, every statement of the sealed routes
 * answers there as the engine's own parameter binding answers it on the line, it runs beside a read
 * on the line, and an abort or an error is what it is on the line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classifyEngineError } from '../src/clickhouse/errors.ts'
import { laneStatement, openReadLanes, type ReadLanes } from '../src/clickhouse/engine/read-lanes.ts'
import { finalSql } from '../src/clickhouse/run.ts'
import { cases, get, h, model, useSealedSeams } from './fixtures/sealed-seams.ts'
import { DIMENSION_NAMES } from './fixtures/insights-model.ts'

useSealedSeams()

let lanes: ReadLanes
let unlaned: ReadLanes
beforeAll(() => {
  lanes = openReadLanes(h.rt.dir, 'quarry', 1)
  unlaned = openReadLanes(h.rt.dir, 'quarry', 0)
})
afterAll(async () => {
  await Promise.all([lanes?.close(), unlaned?.close()])
})

/** The statement as the runner sends it, its log_comment the id a kill finds it by. */
const full = (sql: string, params: Record<string, unknown>, queryId = 'lane-test') => finalSql({ name: 'lane_test', sql, params }, { timeoutS: 30 }, 'JSONEachRow', queryId)

let holds = 0
/** A read that holds the line until released (it is then killed). */
function holdLine(pool: ReadLanes): () => Promise<void> {
  const stop = new AbortController()
  const queryId = `holding-${++holds}`
  const held = pool
    .read({ sql: full('SELECT sleepEachRow(0.5) AS s, {x:UInt8} AS x FROM numbers(60) SETTINGS max_block_size = 1', { x: 0 }, queryId), params: { x: 0 }, queryId, signal: stop.signal })
    .catch(() => '')
  return async () => {
    stop.abort()
    await held
  }
}

/** A read on a lane, the line held meanwhile: a read the lanes do not take waits for the line, and fails here. */
async function onLane(sql: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
  const release = holdLine(lanes)
  try {
    const read = lanes.read({ sql, params, queryId: 'lane-test', signal })
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not taken by the lane')), 10_000).unref())
    const { text, on } = await Promise.race([read, late])
    expect(on).toBe('lane')
    return text
  } finally {
    await release()
  }
}

/** The statement on the line alone. */
async function onLine(sql: string, params: Record<string, unknown>): Promise<string> {
  const { text, on } = await unlaned.read({ sql, params, queryId: 'lane-test' })
  expect(on).toBe('line')
  return text
}

const sortedLines = (text: string) => text.split('\n').filter(Boolean).sort()

describe('a read on a lane', () => {
  it('gets every kind of value exactly as given, and its SQL holds none of them', async () => {
    const params = {
      s: "it's \\ a \"quoted\" value'); DROP TABLE events; --\n\tü {x:String}",
      n: 2 ** 53 - 1,
      big: 18446744073709551615n,
      d: '1969-12-31 23:59:59.001',
      day: '2026-03-29',
      a: ["o'neil", 'back\\slash', '', '{k:String}'],
      times: ['2026-04-14 21:00:00.000', '1970-01-01 00:00:00.000'],
      z: null,
      b: true,
      u: '0a1b2c3d-0000-4000-8000-00000000abcd',
      small: 255,
      lone: 'a\ud800b',
    }
    const sql = full(
      `SELECT {s:String} AS s, {n:UInt64} AS n, toString({big:UInt64}) AS big, toString({d:DateTime64(3, 'UTC')}) AS d, toString({day:Date}) AS day,
        {a:Array(String)} AS a, arrayMap(t -> toString(t), {times:Array(DateTime64(3, 'UTC'))}) AS times, {z:Nullable(String)} AS z, {b:Bool} AS b,
        toString({u:UUID}) AS u, {small:UInt8} AS small, {lone:String} AS lone, length({s:String}) = lengthUTF8({s:String}) + 1 AS again`,
      params,
    )
    // A lone surrogate as UTF-8 writes it: the replacement character.
    const expected = { ...params, big: '18446744073709551615', again: 1, lone: 'a\ufffdb' }
    expect(JSON.parse(await onLane(sql, params))).toEqual(expected)
    expect(JSON.parse(await onLine(sql, params))).toEqual(expected)
    const stmt = laneStatement(sql, params, '/tmp/values.jsonl')!
    for (const value of [params.s, "o'neil", '0a1b2c3d']) expect(stmt.sql).not.toContain(value)
  })

  it('is not taken by a statement it cannot carry: the line runs it', () => {
    expect(laneStatement('(SELECT {x:UInt8}) UNION ALL (SELECT 2)', { x: 1 }, '/tmp/v')).toBeUndefined()
    expect(laneStatement('SELECT {x:UInt8}', {}, '/tmp/v')).toBeUndefined()
    expect(laneStatement('SELECT {x:DateTime}', { x: new Date() }, '/tmp/v')).toBeUndefined()
    expect(laneStatement('SELECT count() FROM {t:Identifier}', { t: 'events' }, '/tmp/v')).toBeUndefined()
    expect(laneStatement('-- a comment\nSELECT 1', {}, '/tmp/v')).toEqual({ sql: 'SELECT 1' })
  })

  it('answers every statement of the sealed routes as the line does', async () => {
    const routes = ['metrics', 'pages', ...DIMENSION_NAMES]
    const asked: { what: string; sql: string; params: Record<string, unknown>; line: string[] }[] = []
    for (const c of cases(41, 4)) {
      for (const route of routes) {
        const res = await h.get(c.project, route, { ...(c.query as object), explain: 'sql' })
        expect(res.status, `${c.label} ${route}`).toBe(200)
        const { sql, params } = res.body as { sql: string[]; params: Record<string, unknown> }
        // As sent, SETTINGS and FORMAT included.
        for (const stmt of sql) asked.push({ what: `${c.label} ${route}: ${stmt.slice(0, 80)}`, sql: stmt, params, line: sortedLines(await onLine(stmt, params)) })
      }
    }
    // Every route asked, in four windows, with its planning reads.
    expect(asked.length).toBeGreaterThan(4 * routes.length)
    const release = holdLine(lanes)
    try {
      for (const a of asked) {
        const { text, on } = await lanes.read({ sql: a.sql, params: a.params, queryId: 'lane-test' })
        expect(on, a.what).toBe('lane')
        expect(sortedLines(text), a.what).toEqual(a.line)
      }
    } finally {
      await release()
    }
  })

  it('runs beside a read on the line; with no lane it waits for it (the control)', async () => {
    const long = full('SELECT sleepEachRow(0.5) AS slept, {x:UInt8} AS x FROM numbers(4) SETTINGS max_block_size = 1', { x: 1 })
    const short = full('SELECT {y:UInt8} AS y', { y: 2 })
    for (const [pool, order] of [
      [lanes, ['short', 'long']],
      [unlaned, ['long', 'short']],
    ] as const) {
      const finished: string[] = []
      const first = pool.read({ sql: long, params: { x: 1 }, queryId: 'long' }).then(() => finished.push('long'))
      await new Promise((resolve) => setTimeout(resolve, 300))
      const { text, on } = await pool.read({ sql: short, params: { y: 2 }, queryId: 'short' })
      finished.push('short')
      await first
      expect(JSON.parse(text)).toEqual({ y: 2 })
      expect(finished).toEqual(order)
      expect(on).toBe(pool === lanes ? 'lane' : 'line')
    }
  })

  it('is stopped where it runs once its signal is aborted, and the lane takes the next read', async () => {
    const stopping = new AbortController()
    // 40 blocks of half a second: 20 s unless it is stopped.
    const sql = full('SELECT sleepEachRow(0.5) AS slept, {x:UInt8} AS x FROM numbers(40) SETTINGS max_block_size = 1', { x: 1 })
    const outcome = onLane(sql, { x: 1 }, stopping.signal).then(() => 'finished', (err: Error) => err.message)
    await new Promise((resolve) => setTimeout(resolve, 800))
    const aborted = performance.now()
    stopping.abort()
    expect(await outcome).toMatch(/cancel/i)
    expect(performance.now() - aborted).toBeLessThan(10_000)
    // Only its own rows: none the stopped statement had written.
    expect(await onLane(full('SELECT {y:UInt8} AS y', { y: 3 }), { y: 3 })).toBe('{"y":3}\n')
  })

  it('waiting for a lane, is never run once its signal is aborted', async () => {
    const release = holdLine(lanes)
    const busy = lanes.read({ sql: full('SELECT sleepEachRow(0.5) AS s FROM numbers(3) SETTINGS max_block_size = 1', {}), params: {}, queryId: 'busy' })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const waiting = new AbortController()
    // Were it run, it would take 1.5 s: it is refused at once.
    const queued = lanes.read({ sql: full('SELECT sleepEachRow(0.5) AS s, {y:UInt8} AS y FROM numbers(3) SETTINGS max_block_size = 1', { y: 4 }), params: { y: 4 }, queryId: 'queued', signal: waiting.signal })
    const asked = performance.now()
    waiting.abort()
    await expect(queued).rejects.toThrow()
    expect(performance.now() - asked).toBeLessThan(200)
    await busy
    await release()
  })

  it('hands a freed lane to the first read that can run on one, past a read waiting for the line, which keeps its place', async () => {
    const release = holdLine(lanes)
    const busy = lanes.read({ sql: full('SELECT sleepEachRow(0.5) AS s FROM numbers(2) SETTINGS max_block_size = 1', {}), params: {}, queryId: 'busy-lane' })
    await new Promise((resolve) => setTimeout(resolve, 200))
    // A parenthesised statement only the line takes, then one a lane takes, both queued.
    const lineOnly = lanes.read({ sql: full('(SELECT {z:UInt8} AS z)', { z: 5 }), params: { z: 5 }, queryId: 'line-only' })
    const laneable = lanes.read({ sql: full('SELECT {y:UInt8} AS y', { y: 6 }), params: { y: 6 }, queryId: 'laneable' })
    await busy
    // The lane freed while the line is still held: the second read runs on it at once.
    const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the freed lane was left idle')), 5_000).unref())
    expect(await Promise.race([laneable, late])).toEqual({ text: '{"y":6}\n', on: 'lane' })
    // A later read for the line comes after the one that has waited for it.
    const after = lanes.read({ sql: full('(SELECT {w:UInt8} AS w)', { w: 7 }), params: { w: 7 }, queryId: 'after' })
    const order: string[] = []
    await release()
    await Promise.all([lineOnly.then((r) => order.push(r.text)), after.then((r) => order.push(r.text))])
    expect(order).toEqual(['{"z":5}\n', '{"w":7}\n'])
  })

  it('fails with the engine\'s code, so that a bad regex is still the caller\'s 400', async () => {
    const err = await onLane(full("SELECT match('a', {re:String}) AS m", { re: '(' }), { re: '(' }).catch((e: unknown) => e)
    expect(classifyEngineError(err)).toMatchObject({ clickhouseCode: '427' })
  })

  it('serves concurrent requests the numbers of the reference model', async () => {
    // The app's own engine: with a lane (two or more cores), some of these run on it.
    const data = model()
    const unfiltered = cases(43, 12).filter((x) => x.filters.length === 0).slice(0, 2)
    expect(unfiltered).toHaveLength(2)
    for (const c of unfiltered) {
      const replies = await Promise.all(DIMENSION_NAMES.map((dimension) => get(c.project, dimension, { ...(c.query as object), limit: 1000 })))
      replies.forEach((reply, i) => expect(reply.body, `${c.label} ${DIMENSION_NAMES[i]}`).toEqual(data.breakdown(c.project, DIMENSION_NAMES[i]!, c.w, [])))
    }
  })
})

describe('a read stopped part way', () => {
  // The engine's own reads (the runner): the connection's session used to keep the stopped statement's
  // rows and hand them to the next statement, another request's answer.
  const long = { name: 'stopped', sql: 'SELECT sleepEachRow(0.5) AS slept, {x:UInt8} AS x FROM numbers(40) SETTINGS max_block_size = 1', params: { x: 1 } }
  const next = () => h.rt.runner.rows({ name: 'next', sql: 'SELECT {y:UInt8} AS y', params: { y: 3 } }, { timeoutS: 30 })

  it('by its max_execution_time leaves none of its rows to the next read', async () => {
    await expect(h.rt.runner.rows(long, { timeoutS: 1 })).rejects.toThrow(/timeout|time/i)
    expect(await next()).toEqual([{ y: 3 }])
  })

  it('by its request going away leaves none of its rows to the next read', async () => {
    const gone = new AbortController()
    const read = h.rt.runner.rows(long, { timeoutS: 30, signal: gone.signal }).then(() => 'answered', () => 'stopped')
    await new Promise((resolve) => setTimeout(resolve, 800))
    gone.abort()
    expect(await read).toBe('stopped')
    expect(await next()).toEqual([{ y: 3 }])
  })
})
