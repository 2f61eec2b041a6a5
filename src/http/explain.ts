import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'
import { finalSql, type QueryRunner } from '../clickhouse/run.ts'
import { ApiError } from './errors.ts'

export interface ExplainedStatement {
  sql: string
  params: Record<string, unknown>
}

/** A runner that records what it would send and sends nothing. */
function recordingRunner(into: ExplainedStatement[]): QueryRunner {
  return {
    dryRun: true,
    async rows(stmt, opts) {
      into.push({ sql: finalSql(stmt, opts, 'JSONEachRow'), params: stmt.params })
      return []
    },
    stream(stmt, format, opts) {
      into.push({ sql: finalSql(stmt, opts, format), params: stmt.params })
      return (async function* () {})()
    },
    async command() {
      throw new ApiError(400, 'explain_unsupported', 'this request writes; it cannot be explained')
    },
  }
}

/**
 * Gives each request its runner. With `explain=sql` a root client receives the statements and
 * parameters the request would run, instead of its data; the handler runs unchanged against a
 * recording runner, so what is shown is exactly what would be sent.
 */
export const explainable = (runner: QueryRunner) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const explain = c.req.queries('explain')
    if (explain === undefined) {
      c.set('runner', runner)
      return next()
    }
    if (explain.length !== 1 || explain[0] !== 'sql') {
      throw new ApiError(400, 'invalid_parameters', 'explain: the only value is "sql"', [{ path: 'explain', message: 'the only value is "sql"' }])
    }
    if (c.get('client').type !== 'root') {
      throw new ApiError(403, 'explain_forbidden', 'only root clients may use explain=sql')
    }
    const statements: ExplainedStatement[] = []
    c.set('runner', recordingRunner(statements))
    await next()
    if (c.error) return
    // Keep the headers middleware and the handler set (CORS, limits, range), not the body.
    const headers = new Headers(c.res.headers)
    headers.set('Content-Type', 'application/json; charset=UTF-8')
    headers.delete('Content-Disposition')
    headers.delete('Content-Length')
    // The replaced body may have been encoded by its route (streamed exports gzip themselves).
    headers.delete('Content-Encoding')
    const body = { sql: statements.map((s) => s.sql), params: Object.assign({}, ...statements.map((s) => s.params)) }
    c.res = undefined
    c.res = new Response(JSON.stringify(body), { status: 200, headers })
  })
