import { Session } from 'chdb'
import { mkdtempSync, rmSync } from 'node:fs'
import { unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LEADING_COMMENTS, PLACEHOLDER, quoted } from '../sql-text.ts'
import { killEmbedded } from './embedded-kill.ts'

/**
 * The embedded engine's reads, each on a chDB session of ours.
 *
 * chdb-node runs parameterized statements one after another, process-wide (background.ts), and a
 * line of reads keeps about 1.1 of the 2 cores busy: M's route statements, four at a time, 46 a
 * second on it (benchmarks/experiments/read-lanes.ts). A statement without parameters runs in parallel, so a
 * read that finds the line taken goes to a lane, a session of its own, with its values in a file the
 * statement reads once: `WITH (SELECT tuple(…) FROM file(…)) AS quarry_values`, each placeholder
 * becoming `CAST(quarry_values.k, 'Type')` (a subquery per placeholder, as the background lane reads
 * its values, read 17 a second). The SQL holds only the statement's own text, a path and
 * column names of ours, never a value; the file is JSON parsed by each column's type.
 *
 * The line is a session of ours too, not the connection's: a statement stopped part way (killed, or
 * past its max_execution_time) leaves the rows it had written in the session's result, at the head of
 * the next statement's (the next request's answer got the stopped one's rows). A session whose
 * statement failed is closed once the statement has ended, and a new one opened.
 */
export interface LaneRead {
  /** The whole statement, SETTINGS and FORMAT included, its values as `{name:Type}` placeholders. */
  sql: string
  params: Record<string, unknown>
  /** The statement's log_comment, by which a kill finds it. */
  queryId: string
  signal?: AbortSignal
}

/** A read's result text, and where it ran. */
export interface LaneResult {
  text: string
  on: 'line' | 'lane'
}

export interface ReadLanes {
  /** On the line when it is free or a lane cannot take the statement, else on a lane; waiting reads are served in order of arrival. */
  read(req: LaneRead): Promise<LaneResult>
  /** Waits for the reads under way, then closes the sessions (chDB closed under a statement aborts the process). */
  close(): Promise<void>
}

const NAME = 'quarry_values'

/** A read waiting for a slot: 0 is the line, 1 to count the lanes. */
interface Waiter {
  laneable: boolean
  give(slot: number): void
}

/** A value as JSON the file's column parses, or undefined for one it cannot carry (the read goes to the line). */
function jsonValue(value: unknown): unknown {
  // A lone surrogate is sent to the line as UTF-8's replacement character; JSON would keep it as an
  // escape that ClickHouse refuses.
  if (typeof value === 'string') return Buffer.from(value, 'utf8').toString('utf8')
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'bigint') return String(value)
  if (Array.isArray(value)) {
    const items = value.map(jsonValue)
    return items.includes(undefined) ? undefined : items
  }
  return undefined
}

/** The statement as a lane runs it and the file row it reads, or undefined when it must stay on the line. */
export function laneStatement(sql: string, params: Record<string, unknown>, file: string): { sql: string; row?: string } | undefined {
  const body = sql.replace(LEADING_COMMENTS, '')
  const columns = new Map<string, { name: string; type: string; index: number }>()
  const text = body.replace(PLACEHOLDER, (_, name: string, type: string) => {
    const key = `${name}:${type}`
    if (!columns.has(key)) columns.set(key, { name, type, index: columns.size + 1 })
    return `CAST(${NAME}.${columns.get(key)!.index}, ${quoted(type)})`
  })
  if (columns.size === 0) return { sql: body }
  // An identifier names a table or column: it cannot be a value read at run time.
  if ([...columns.values()].some(({ type }) => type.trim() === 'Identifier')) return undefined
  const row: Record<string, unknown> = {}
  for (const { name, index } of columns.values()) {
    const value = Object.hasOwn(params, name) ? jsonValue(params[name]) : undefined
    if (value === undefined) return undefined
    row[`c${index}`] = value
  }
  const all = [...columns.values()]
  const schema = all.map(({ type, index }) => `c${index} ${type}`).join(', ')
  const head = `(SELECT tuple(${all.map(({ index }) => `c${index}`).join(', ')}) FROM file(${quoted(file)}, 'JSONEachRow', ${quoted(schema)})) AS ${NAME}`
  // WITH reaches a union's other branches and every subquery (enable_global_with_statement, the default).
  if (/^WITH\s+RECURSIVE\b/i.test(text)) return undefined
  if (/^WITH\b/i.test(text)) return { sql: text.replace(/^WITH\b/i, `WITH ${head},`), row: JSON.stringify(row) }
  if (/^SELECT\b/i.test(text)) return { sql: `WITH ${head}\n${text}`, row: JSON.stringify(row) }
  return undefined
}

/** Each parse error's ClickHouse code where the client would have given it (a bad regex's 427 is the caller's). */
function withCode(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err)
  const code = /Code: (\d+)\./.exec(message)?.[1]
  return Object.assign(new Error(message, { cause: err }), code ? { code } : {})
}

/** The line and `count` lanes beside it (0: every read on the line). */
export function openReadLanes(dir: string, database: string, count: number): ReadLanes {
  const files = count > 0 ? mkdtempSync(join(tmpdir(), 'quarry-values-')) : ''
  // Session 0 is the line's (parameterized statements), 1 to count the lanes'.
  const sessions: (Promise<Session> | undefined)[] = []
  const idle = Array.from({ length: count }, (_, i) => count - i)
  /** Reads waiting for a slot, first come first served; each is handed its slot, never left to race a newcomer for it. */
  const waiting: Waiter[] = []
  const running = new Set<Promise<unknown>>()
  let lineTaken = false
  let job = 0
  const open = (slot: number) =>
    (sessions[slot] ??= (async () => {
      const s = new Session(dir)
      await s.queryAsync(`USE ${database}`)
      return s
    })().catch((err: unknown) => {
      // Opened again by the next read, rather than failing every read of the slot.
      sessions[slot] = undefined
      throw err
    }))
  /**
   * Hands free slots to the waiting reads in order: the line to the first, a lane to the first that
   * can run on one. A read that only the line can take lets those behind it have a lane meanwhile.
   */
  const dispatch = () => {
    for (let i = 0; i < waiting.length && (!lineTaken || idle.length > 0); ) {
      const w = waiting[i]!
      const slot = !lineTaken ? 0 : w.laneable ? idle.pop() : undefined
      if (slot === undefined) {
        i++
        continue
      }
      if (slot === 0) lineTaken = true
      waiting.splice(i, 1)
      w.give(slot)
    }
  }
  const release = (slot: number) => {
    if (slot === 0) lineTaken = false
    else idle.push(slot)
    dispatch()
  }
  const slotFor = (laneable: boolean, signal?: AbortSignal) =>
    new Promise<number>((resolve, reject) => {
      const gone = () => {
        waiting.splice(waiting.indexOf(w), 1)
        reject(signal!.reason)
      }
      const w: Waiter = {
        laneable,
        give: (slot) => {
          signal?.removeEventListener('abort', gone)
          resolve(slot)
        },
      }
      waiting.push(w)
      signal?.addEventListener('abort', gone, { once: true })
      dispatch()
    })
  /** One read on a slot's session. Not given the signal: chDB would settle at once while the statement runs on. */
  const run = async (slot: number, req: LaneRead, send: (s: Session) => Promise<{ text(): string }>) => {
    const session = await open(slot)
    // A JavaScript abort does not stop chDB: the statement is killed, and the slot is free once it ends.
    const kill = () => void killEmbedded(dir, req.queryId).catch(() => {})
    req.signal?.addEventListener('abort', kill, { once: true })
    try {
      return (await send(session)).text()
    } catch (err) {
      sessions[slot] = undefined
      session.close()
      throw withCode(err)
    } finally {
      req.signal?.removeEventListener('abort', kill)
    }
  }
  const onLane = async (lane: number, req: LaneRead, stmt: { sql: string; row?: string }, file: string) => {
    if (stmt.row) await writeFile(file, `${stmt.row}\n`)
    try {
      return await run(lane, req, (s) => s.queryAsync(stmt.sql))
    } finally {
      if (stmt.row) await unlink(file).catch(() => {})
    }
  }
  const track = <T>(p: Promise<T>): Promise<T> => {
    running.add(p)
    return p.finally(() => running.delete(p))
  }
  return {
    async read(req) {
      req.signal?.throwIfAborted()
      const file = count > 0 ? join(files, `${++job}.jsonl`) : ''
      const stmt = count > 0 ? laneStatement(req.sql, req.params, file) : undefined
      const slot = await slotFor(stmt !== undefined, req.signal)
      try {
        req.signal?.throwIfAborted()
        if (slot === 0) return { text: await track(run(0, req, (s) => s.queryBindAsync(req.sql, req.params))), on: 'line' }
        return { text: await track(onLane(slot, req, stmt!, file)), on: 'lane' }
      } finally {
        release(slot)
      }
    },
    async close() {
      await Promise.allSettled([...running])
      for (const s of await Promise.allSettled(sessions.filter((s) => s !== undefined))) if (s.status === 'fulfilled') s.value.close()
      if (files) rmSync(files, { recursive: true, force: true })
    },
  }
}
