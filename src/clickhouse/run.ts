import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Engine } from './engine.ts'
import { classifyEngineError } from './errors.ts'
import type { QueryGate } from './gate.ts'

/** What one request's queries cost, summed; reported in Server-Timing and X-Quarry-Stats. */
export interface QueryStats {
  dbMs: number
  rowsRead: number
  bytesRead: number
  queries: number
}

export const emptyStats = (): QueryStats => ({ dbMs: 0, rowsRead: 0, bytesRead: 0, queries: 0 })

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
}

export interface QueryRunner {
  rows<T>(stmt: Statement, opts: RunOptions): Promise<T[]>
  /** Raw bytes in an output format, for exports; passes the gate for its whole duration. */
  stream(stmt: Statement, format: string, opts: RunOptions): AsyncIterable<Uint8Array>
  /** A statement that returns no rows (DDL, INSERT); writes are allowed. */
  command(stmt: Statement): Promise<void>
}

/**
 * The exact text sent for a read. Settings go into the statement itself: under chDB,
 * client-level settings become SETs that would stick to the shared session.
 */
export function finalSql(stmt: Statement, opts: RunOptions, format: string): string {
  const settings: Record<string, string | number> = {
    max_execution_time: opts.timeoutS,
    output_format_json_quote_64bit_integers: 0,
    ...stmt.settings,
  }
  if (opts.readonly !== false) settings.readonly = 2
  const list = Object.entries(settings).map(([k, v]) => `${k} = ${typeof v === 'number' ? v : `'${v}'`}`)
  return `${stmt.sql.trimEnd().replace(/;$/, '')}\nSETTINGS ${list.join(', ')}\nFORMAT ${format}`
}

export function createQueryRunner(engine: Engine, gate: QueryGate, logger: Logger): QueryRunner {
  return {
    async rows<T>(stmt: Statement, opts: RunOptions): Promise<T[]> {
      const queryId = randomUUID()
      const sql = finalSql(stmt, opts, 'JSONEachRow')
      return gate.run(async () => {
        const started = performance.now()
        try {
          const result = await engine.client.exec({
            query: sql,
            query_params: stmt.params,
            query_id: queryId,
            abort_signal: opts.signal,
          })
          let text = ''
          for await (const chunk of result.stream) text += chunk
          const elapsed = performance.now() - started
          const rowsRead = Number(result.summary?.read_rows ?? 0)
          const bytesRead = Number(result.summary?.read_bytes ?? 0)
          if (opts.stats) {
            opts.stats.dbMs += elapsed
            opts.stats.rowsRead += rowsRead
            opts.stats.bytesRead += bytesRead
            opts.stats.queries += 1
          }
          logger.debug({ query: stmt.name, queryId, ms: Math.round(elapsed * 10) / 10, rowsRead, bytesRead }, 'query')
          return text
            .split('\n')
            .filter((line) => line.length > 0)
            .map((line) => JSON.parse(line) as T)
        } catch (err) {
          const classified = classifyEngineError(err)
          logger.warn({ query: stmt.name, queryId, err: classified.message }, 'query failed')
          throw classified
        }
      })
    },

    stream(stmt: Statement, format: string, opts: RunOptions): AsyncIterable<Uint8Array> {
      const queryId = randomUUID()
      const sql = finalSql(stmt, opts, format)
      return (async function* () {
        // The slot is held for the whole stream, so a long export counts against the gate.
        let release: () => void = () => {}
        await new Promise<void>((acquired, refused) => {
          gate
            .run(() => {
              acquired()
              return new Promise<void>((done) => (release = done))
            })
            .catch(refused)
        })
        const started = performance.now()
        let bytes = 0
        try {
          for await (const chunk of engine.streamRaw({ sql, params: stmt.params, queryId, signal: opts.signal })) {
            bytes += chunk.byteLength
            yield chunk
          }
        } catch (err) {
          throw classifyEngineError(err)
        } finally {
          release()
          if (opts.signal?.aborted) await engine.kill(queryId).catch(() => {})
          logger.debug({ query: stmt.name, queryId, ms: Math.round(performance.now() - started), bytes }, 'stream')
        }
      })()
    },

    async command(stmt: Statement): Promise<void> {
      const started = performance.now()
      try {
        // Sent as written: a trailing SETTINGS clause would be table settings on DDL and a
        // syntax error after INSERT … VALUES.
        await engine.client.command({ query: stmt.sql, query_params: stmt.params })
        logger.debug({ query: stmt.name, ms: Math.round(performance.now() - started) }, 'command')
      } catch (err) {
        throw classifyEngineError(err)
      }
    },
  }
}
