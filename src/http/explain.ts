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

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b)

/**
 * The statements with every parameter in one map, as the answer has one. A name that a later
 * statement binds to another value than an earlier one is renamed in the later one's SQL (`closed`
 * becomes `closed_2`): a map that kept either value replayed the other statement with it (the
 * bench's replay of the planning reads failed so, on an array `closed`).
 */
export function underOneMap(statements: readonly ExplainedStatement[]): { sql: string[]; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {}
  const sql = statements.map((stmt) => {
    let text = stmt.sql
    for (const [name, value] of Object.entries(stmt.params)) {
      if (!(name in params)) params[name] = value
      else if (!same(params[name], value)) {
        let n = 2
        while (`${name}_${n}` in params || `${name}_${n}` in stmt.params) n++
        const renamed = `${name}_${n}`
        text = text.replaceAll(`{${name}:`, `{${renamed}:`)
        params[renamed] = value
      }
    }
    return text
  })
  return { sql, params }
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
    const body = underOneMap(statements)
    c.res = undefined
    c.res = new Response(JSON.stringify(body), { status: 200, headers })
  })
