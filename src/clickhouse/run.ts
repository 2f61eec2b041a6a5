import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { watchStatement, type Telemetry } from '../telemetry/statement.ts'
import { commandOnServer } from './engine/http.ts'
import type { Engine } from './engine/index.ts'
import { classifyEngineError, EngineQueryError, EngineUnavailableError, errorClass, QueryTimeoutError } from './errors.ts'
import { OverloadedError, type QueryGate } from './gate.ts'
import { linkedSignal } from './signals.ts'
import { LEADING_COMMENTS } from './sql-text.ts'

/** What one request's queries cost, summed; reported in Server-Timing and X-Quarry-Stats. */
export interface QueryStats {
  dbMs: number
  queries: number
  /**
   * Statements asked for, done or not: a request that asked for one waits on the engine, and
   * admission's pace counts it among the requests ahead (a cache hit never asks).
   */
  asked: number
  /**
   * Shared work the request waited for (a planning read another request ran, a snapshot write under
   * way): its queries then go ahead as committed (gate.ts), not judged as a new request's first. A
   * burst released at once by such a wait was refused 503 by the queue's pace (benchmarks/README.md).
   */
  waited: number
  /** What they read, where the engine reports it (Engine.reportsReads). */
  read?: { rows: number; bytes: number }
}

export const emptyStats = (): QueryStats => ({ dbMs: 0, queries: 0, asked: 0, waited: 0 })

/** A statement without SETTINGS or FORMAT, and the values for its `{name:Type}` placeholders. */
export interface Statement {
  name: string
  sql: string
  params: Record<string, unknown>
  /** Settings the statement needs to mean what it says (e.g. join_use_nulls). */
  settings?: Record<string, string | number>
}

export interface RunOptions {
  timeoutS: number
  signal?: AbortSignal
  stats?: QueryStats
  /** HTTP routes read only; the CLI (seed, migrate, clients) writes. */
  readonly?: boolean
  /** Ahead of the gate's queue: a tiny read that many requests wait on (gate.ts). */
  urgent?: boolean
}

/** A build step (long, at the builds' low priority) or a snapshot write (short, at the requests'). */
export type BackgroundKind = 'build' | 'snapshot'

export interface CommandOptions {
  background?: BackgroundKind
  /**
   * Once aborted, the statement is not sent; in a background lane or on a server, one running is
   * stopped too. Embedded outside a lane it runs to its end: chDB's call cannot be left early.
   */
  signal?: AbortSignal
}

export interface QueryRunner {
  /** Records statements instead of sending them (explain=sql): reads answer no rows. */
  readonly dryRun?: boolean
  rows<T>(stmt: Statement, opts: RunOptions): Promise<T[]>
  /** Raw bytes in an output format, for exports; passes the gate for its whole duration. */
  stream(stmt: Statement, format: string, opts: RunOptions): AsyncIterable<Uint8Array>
  /**
   * A statement that returns no rows (DDL, INSERT); writes are allowed. `background`: a long one
   * that requests should not wait for (a build step), sent where the engine runs it beside them.
   */
  command(stmt: Statement, opts?: CommandOptions): Promise<void>
}

/**
 * The exact text sent for a read. Settings go into the statement itself: under chDB,
 * client-level settings become SETs that would stick to the shared session.
 * `queryId` travels as `log_comment`, which is how a running query is found to be killed where the
 * engine does not take our query ids (chDB); explain=sql shows the statement without it.
 */
export function finalSql(stmt: Statement, opts: RunOptions, format: string, queryId?: string): string {
  const settings: Record<string, string | number> = {
    max_execution_time: opts.timeoutS,
    output_format_json_quote_64bit_integers: 0,
    // ClickHouse 26.7 (chDB 3.4) answers a bare count() over a window of events from the
    // events_by_name projection plus its exact-count shortcut, and counts a granule twice
    // (156,352 for 148,160 events; 72,462 for 39,118 on a 10M-event project): X-Quarry-Rows and
    // totalCount were wrong. Without implicit projections the rows are counted.
    optimize_use_implicit_projections: 0,
    ...stmt.settings,
  }
  if (queryId !== undefined) settings.log_comment = queryId
  if (opts.readonly !== false) settings.readonly = 2
  const list = Object.entries(settings).map(([k, v]) => `${k} = ${typeof v === 'number' ? v : `'${v}'`}`)
  return `${stmt.sql.trimEnd().replace(/;$/, '')}\nSETTINGS ${list.join(', ')}\nFORMAT ${format}`
}

/**
 * How long a read may take: its max_execution_time plus some slack for the engine to say so itself.
 * Over HTTP it counts from the query's start: past it, a server that accepted the query but stays
 * silent counts as unavailable, however long the client's socket timeout (which must outlast exports
 * and DDL) is. Embedded, it counts from the moment the query asked the gate for a slot: chDB runs one
 * parameterised query at a time, so a query the gate admitted may still wait behind the others, and
 * max_execution_time does not count that wait; past it the query is killed and answers 504.
 */
export function readDeadlineMs(timeoutS: number): number {
  return Math.ceil(timeoutS * 1000 + Math.min(5000, Math.max(1000, timeoutS * 500)))
}

/**
 * `readonly = 2` in a statement's SETTINGS clause does not cover everything: ClickHouse lets
 * `INSERT INTO FUNCTION file(…)/url(…)/s3(…) … SELECT … SETTINGS readonly = 2` write (the clause
 * belongs to the SELECT), and chDB, running locally, honours `INTO OUTFILE`. So a read is also
 * refused before it is sent unless it is a query (SELECT, WITH … SELECT, or a parenthesised one)
 * and writes no file. Thrown as READONLY (164), as ClickHouse refuses the other writes.
 */
export function assertReadStatement(sql: string): void {
  const body = sql.replace(LEADING_COMMENTS, '')
  if (!/^(?:SELECT|WITH)\b|^\(/i.test(body) || /\bINTO\s+OUTFILE\b/i.test(body)) {
    throw new EngineQueryError('refused before sending: a read-only statement must be a query that writes nothing', '164')
  }
}

/** The caller went away before its turn at the gate: nothing is sent. */
const cancelledBeforeStart = () => new Error('the request was cancelled before its query started')

/** A refusal of the gate itself: the statement never ran, so nothing else counted it. */
const refusedByGate = (watch: { failed(errorClass: string): void }) => (err: unknown) => {
  if (err instanceof OverloadedError) watch.failed('overloaded')
  throw err
}

/**
 * Reads run interpreted. ClickHouse compiles an expression, aggregate or sort the third time a shape
 * is seen, inside the query that sees it: on L the fourth /metrics, /pages, first breakdown and
 * first chart of a process took 110-270 ms against 50-160, the p99 of a 50-request cell. Compiled,
 * the same statements were no faster (country 30d: 58 against 56 ms of CPU, medians of 15). And
 * chDB 26.7's compiled min/max over DateTime64 orders times before 1970 after later ones.
 */
const INTERPRETED = { compile_expressions: 0, compile_aggregate_expressions: 0, compile_sort_description: 0 }

export function createQueryRunner(engine: Engine, gate: QueryGate, logger: Logger, telemetry?: Telemetry): QueryRunner {
  return {
    async rows<T>(stmt: Statement, opts: RunOptions): Promise<T[]> {
      const queryId = randomUUID()
      const sql = finalSql({ ...stmt, settings: { ...INTERPRETED, ...stmt.settings } }, opts, 'JSONEachRow', queryId)
      if (opts.readonly !== false) assertReadStatement(stmt.sql)
      const askedAt = performance.now()
      if (opts.stats) opts.stats.asked += 1
      const watch = watchStatement(telemetry, stmt.name)
      return gate.run(async () => {
        if (opts.signal?.aborted) {
          watch.failed('cancelled')
          throw cancelledBeforeStart()
        }
        const started = performance.now()
        const budgetMs = readDeadlineMs(opts.timeoutS) - (engine.mode === 'embedded' ? started - askedAt : 0)
        const deadline = AbortSignal.timeout(Math.max(1, Math.round(budgetMs)))
        const linked = linkedSignal([opts.signal, deadline])
        try {
          let text = ''
          let read: { rows: number; bytes: number } | undefined
          let on: 'line' | 'lane' | undefined
          if (engine.read) ({ text, on } = await engine.read({ sql, params: stmt.params, queryId, signal: linked.signal }))
          else {
            const result = await engine.client.exec({ query: sql, query_params: stmt.params, query_id: queryId, abort_signal: linked.signal })
            for await (const chunk of result.stream) text += chunk
            if (engine.reportsReads) read = { rows: Number(result.summary?.read_rows ?? 0), bytes: Number(result.summary?.read_bytes ?? 0) }
          }
          const elapsed = performance.now() - started
          if (opts.stats) {
            opts.stats.dbMs += elapsed
            opts.stats.queries += 1
            if (read) {
              opts.stats.read ??= { rows: 0, bytes: 0 }
              opts.stats.read.rows += read.rows
              opts.stats.read.bytes += read.bytes
            }
          }
          watch.done(elapsed, read, on)
          logger.debug({ query: stmt.name, queryId, ms: Math.round(elapsed * 10) / 10, rowsRead: read?.rows, bytesRead: read?.bytes }, 'query')
          return text
            .split('\n')
            .filter((line) => line.length > 0)
            .map((line) => JSON.parse(line) as T)
        } catch (err) {
          if (opts.signal?.aborted) {
            // The client disconnected: stop the engine's work too (a server does not notice a closed
            // connection until it writes; chDB's call only stops waiting). The slot is held until then.
            await engine.kill(queryId).catch(() => {})
            logger.debug({ query: stmt.name, queryId, ms: Math.round(performance.now() - started) }, 'query cancelled')
            watch.failed('cancelled')
            throw classifyEngineError(err)
          }
          let classified: Error
          if (!deadline.aborted) classified = classifyEngineError(err)
          else if (engine.mode === 'http') {
            // A silent server will hardly answer a kill: send it, but do not wait for it.
            void engine.kill(queryId).catch(() => {})
            classified = new EngineUnavailableError(`no answer within ${readDeadlineMs(opts.timeoutS)} ms`)
          } else {
            await engine.kill(queryId).catch(() => {})
            classified = new QueryTimeoutError(`not done within ${Math.round(performance.now() - askedAt)} ms of asking for a slot`)
          }
          watch.failed(errorClass(classified))
          logger.warn({ query: stmt.name, queryId, err: classified.message }, 'query failed')
          throw classified
        } finally {
          linked.done()
        }
      }, { urgent: opts.urgent, committed: (opts.stats?.queries ?? 0) > 0 || (opts.stats?.waited ?? 0) > 0 }).catch(refusedByGate(watch))
    },

    stream(stmt: Statement, format: string, opts: RunOptions): AsyncIterable<Uint8Array> {
      const queryId = randomUUID()
      const sql = finalSql(stmt, opts, format, queryId)
      return (async function* () {
        if (opts.readonly !== false) assertReadStatement(stmt.sql)
        const watch = watchStatement(telemetry, stmt.name)
        if (opts.stats) opts.stats.asked += 1
        // The slot is held for the whole stream, so a long export counts against the gate.
        let release: () => void = () => {}
        await new Promise<void>((acquired, refused) => {
          gate
            .run(() => {
              acquired()
              return new Promise<void>((done) => (release = done))
            })
            .catch(refused)
        }).catch(refusedByGate(watch))
        const started = performance.now()
        let bytes = 0
        // The generator may sit at a yield for good if its consumer left without returning it (a
        // client gone before the response started): the abort itself frees the slot and stops the query.
        let killing: Promise<void> | undefined
        const kill = () => (killing ??= engine.kill(queryId).catch(() => {}))
        const onAbort = () => {
          release()
          void kill()
        }
        opts.signal?.addEventListener('abort', onAbort, { once: true })
        let failed = false
        try {
          if (opts.signal?.aborted) throw cancelledBeforeStart()
          for await (const chunk of engine.streamRaw({ sql, params: stmt.params, queryId, signal: opts.signal })) {
            bytes += chunk.byteLength
            yield chunk
          }
        } catch (err) {
          failed = true
          const classified = classifyEngineError(err)
          watch.failed(opts.signal?.aborted ? 'cancelled' : errorClass(classified))
          throw classified
        } finally {
          if (!failed && opts.signal?.aborted) watch.failed('cancelled')
          else if (!failed) watch.done(performance.now() - started)
          opts.signal?.removeEventListener('abort', onAbort)
          release()
          if (opts.signal?.aborted) await kill()
          logger.debug({ query: stmt.name, queryId, ms: Math.round(performance.now() - started), bytes }, 'stream')
        }
      })()
    },

    async command(stmt: Statement, opts: CommandOptions = {}): Promise<void> {
      const started = performance.now()
      const watch = watchStatement(telemetry, stmt.name)
      try {
        // Sent as written: a trailing SETTINGS clause would be table settings on DDL and a
        // syntax error after INSERT … VALUES.
        const lane = opts.background && engine.background?.[opts.background]
        opts.signal?.throwIfAborted()
        if (lane) await lane.command(stmt.sql, stmt.params, opts.signal)
        else if (opts.signal && engine.mode === 'http') await commandOnServer(engine, stmt.sql, stmt.params, opts.signal)
        else await engine.client.command({ query: stmt.sql, query_params: stmt.params })
        watch.done(performance.now() - started)
        logger.debug({ query: stmt.name, ms: Math.round(performance.now() - started) }, 'command')
      } catch (err) {
        const classified = classifyEngineError(err)
        watch.failed(errorClass(classified))
        throw classified
      }
    },
  }
}
