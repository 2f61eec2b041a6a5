/**
 * Where /insights/{id}/pages spends its time: each part of sql/queries/insights_pages.sql run on
 * its own (the same WITH clause, a different final SELECT), interleaved, on a bench directory.
 *
 *   npx tsx benchmarks/experiments/pages-parts.ts --dir D [--project p001] [--days 30] [--runs 5]
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { pagesStatement } from '../../src/query/insights.ts'
import { resolveRange } from '../../src/query/time-range.ts'
import { openRuntime } from '../../src/runtime.ts'
import { quantile, round } from '../lib/stats.ts'

const { values } = parseArgs({
  options: { dir: { type: 'string' }, project: { type: 'string', default: 'p001' }, days: { type: 'string', default: '30' }, runs: { type: 'string', default: '5' } },
})
const rt = await openRuntime(configSchema.parse({ QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn' }), createLogger('warn'))
const [last] = await (await rt.engine.client.query({ query: `SELECT toUnixTimestamp64Milli(max(created_at)) AS t FROM events WHERE project_id = {p:String}`, query_params: { p: values.project }, format: 'JSONEachRow' })).json<{ t: number }>()
const end = new Date(Number(last!.t))
const day = (offset: number) => new Date(end.getTime() - offset * 86_400_000).toISOString().slice(0, 10)
const range = resolveRange({ startDate: day(Number(values.days)), endDate: day(0) }, 'UTC', end, '30d')
const stmt = pagesStatement({ projectId: values.project!, range, filters: [], limit: 11, offset: 0 })
const withClause = stmt.sql.slice(0, stmt.sql.lastIndexOf('\nSELECT'))
const parts: Record<string, string> = {
  'whole query': stmt.sql,
  'views: count() of the window\'s screen views': `${withClause}\nSELECT count() FROM views`,
  'ranked: top pages by uniqExact(session_id)': `${withClause}\nSELECT * FROM ranked`,
  'titles of the ranked pages': `${withClause}\nSELECT * FROM titles`,
  'time_on_page (window function over the sessions of the ranked pages)': `${withClause}\nSELECT * FROM time_on_page`,
  'entries (sessions FINAL, bounce by entry page)': `${withClause}\nSELECT * FROM entries`,
}
const times: Record<string, number[]> = Object.fromEntries(Object.keys(parts).map((k) => [k, []]))
const names = Object.keys(parts)
for (let i = 0; i < Number(values.runs) + 1; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!
    const started = performance.now()
    const r = await rt.engine.client.exec({ query: `${parts[name]}\nSETTINGS join_use_nulls = 1\nFORMAT JSONEachRow`, query_params: stmt.params })
    for await (const _ of r.stream) {
      // drained
    }
    if (i > 0) times[name]!.push(performance.now() - started)
  }
}
console.log(`pages of ${values.project}, ${stmt.params.from} … ${stmt.params.to}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
for (const name of names) console.log(`${name.padEnd(72)} p50 ${round(quantile(times[name]!, 0.5), 1)} ms`)
await rt.close()
