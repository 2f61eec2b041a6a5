import { Session } from 'chdb'
import { PLACEHOLDER, quoted } from '../sql-text.ts'
import { killEmbedded } from './embedded-kill.ts'

/**
 * Long background statements (the sealed builds) on a chDB session of their own, beside requests.
 *
 * chdb-node runs parameterized queries one after another, process-wide (libchdb's parameter state is
 * not isolated between connections), so each statement of a build held every request's queries
 * behind it: up to 3.5 s per request while a 600k-event project was built, and a build step of a
 * large project runs for tens of seconds. A statement without parameters runs in parallel. So the
 * values go into a Memory table as data, and the statement reads each back with a scalar subquery,
 * which ClickHouse folds into a constant before it prunes by the key: the SQL sent holds only our own
 * names and a job number, never a value.
 *
 * Two lanes, each a session of its own: the builds' at the lowest CPU priority, and the snapshots'
 * at the requests' (a snapshot write is short, and requests wait for it or compute its part on the
 * line meanwhile: at nice 19 beside them, /pages' on L took 1.6–3.5 s). A thread cannot lower its
 * nice once raised without privilege, so one session cannot serve both.
 */
export interface BackgroundLane {
  /**
   * `signal`: once aborted, the statement is not started, or is stopped where it runs (KILL QUERY).
   * Its call then fails only once the engine has let go of it: chDB closed under a running
   * statement aborts the process.
   */
  command(sql: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<void>
  close(): Promise<void>
}

const VALUES = 'quarry_background_values'

/** A value's text as ClickHouse parses it for its type: scalars, and arrays of strings (a snapshot's held-out keys). */
function valueText(name: string, value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return `[${value.map(quoted).join(',')}]`
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  throw new TypeError(`background statement: parameter ${name} is not a scalar`)
}

/** `sql` with each `{name:Type}` read from the job's values (the names and types are the statement's own). */
function withJobValues(sql: string, job: number): string {
  return sql.replace(PLACEHOLDER, (_, name: string, type: string) => `CAST((SELECT value FROM ${VALUES} WHERE job = ${job} AND name = '${name}'), ${quoted(type)})`)
}

/** Job numbers, shared by the lanes of the process: their values are in one table. */
let jobs = 0

/** `nice`: the lane's query threads' Linux nice (19, the lowest priority, needs no privilege; a raise would). */
export function openBackgroundLane(dir: string, database: string, nice: number): BackgroundLane {
  let session: Promise<Session> | undefined
  const open = () =>
    (session ??= (async () => {
      const s = new Session(dir)
      await s.queryAsync(`USE ${database}`)
      if (nice !== 0) await s.queryAsync(`SET os_thread_priority = ${nice}`)
      await s.queryAsync(`CREATE TABLE IF NOT EXISTS ${VALUES} (job UInt64, name String, value String) ENGINE = Memory`)
      return s
    })())
  // One statement at a time, as in the line: builds of several projects take turns, so their memory
  // does not add up.
  let tail: Promise<unknown> = Promise.resolve()
  const run = async (sql: string, params: Record<string, unknown>, signal?: AbortSignal) => {
    signal?.throwIfAborted()
    const s = await open()
    const job = ++jobs
    const rows = Object.entries(params).map(([name, value]) => JSON.stringify({ job, name, value: valueText(name, value) }))
    if (rows.length > 0) await s.insert({ table: VALUES, values: Buffer.from(`${rows.join('\n')}\n`), format: 'JSONEachRow' })
    // The job's own mark, so that a kill cannot reach the lane's next statement.
    const mark = `quarry-background-${process.pid}-${job}`
    const stop = () => void killEmbedded(dir, mark).catch(() => {})
    try {
      await s.queryAsync(`SET log_comment = '${mark}'`)
      signal?.throwIfAborted()
      signal?.addEventListener('abort', stop, { once: true })
      await s.queryAsync(withJobValues(sql, job))
    } finally {
      signal?.removeEventListener('abort', stop)
      if (rows.length > 0) await s.queryAsync(`ALTER TABLE ${VALUES} DELETE WHERE job = ${job} SETTINGS mutations_sync = 2`)
    }
  }
  return {
    command(sql, params, signal) {
      const done = tail.then(() => run(sql, params, signal))
      tail = done.catch(() => {})
      return done
    },
    async close() {
      await tail
      if (session) (await session).close()
    },
  }
}
