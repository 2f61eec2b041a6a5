// The entries step of a /pages rollup build, two ways, on a seeded directory (here /tmp/ovh-data, p051,
// 1M events): derived again from session_timeline, or read from the sessions table that defines a
// session's entry page and bounce. Run from the project root: node benchmarks/experiments/rollup-entries.mjs
import { createRequire } from 'node:module'
import path from 'node:path'
const chdb = createRequire(path.join(process.cwd(), 'package.json'))('chdb')
const s = new chdb.Session('/tmp/ovh-data')
const P = "project_id = 'p051'", C = "toDateTime64('2099-01-01 00:00:00', 3, 'UTC')"
const HELD = "(SELECT key FROM quarry.page_rollup_keys WHERE project_id = 'p051' AND version = 0 AND kind = 5)"
const old = `SELECT toDate(started_at, 'UTC') AS day, entry.2, entry.3, count(), countIf(views <= 1) FROM (
  SELECT min(created_at) AS started_at, min(if(is_view, (created_at, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry, countIf(is_view) AS views
  FROM quarry.session_timeline WHERE ${P} AND created_at < ${C} AND session_key NOT IN ${HELD} AND session_key != reinterpretAsUInt128(sipHash128(''))
  GROUP BY session_key HAVING views > 0) GROUP BY day, entry.2, entry.3 FORMAT Null`
const now = `SELECT toDate(created_at, 'UTC') AS day, entry_origin, entry_path, count(), countIf(is_bounce) FROM quarry.sessions FINAL
  WHERE ${P} AND created_at < ${C} AND screen_view_count > 0 AND reinterpretAsUInt128(sipHash128(id)) NOT IN ${HELD}
  GROUP BY day, entry_origin, entry_path FORMAT Null`
for (const [name, sql] of [['timeline', old], ['sessions FINAL', now], ['timeline', old], ['sessions FINAL', now], ['timeline', old], ['sessions FINAL', now]]) {
  const t = performance.now(); s.query(sql); console.log(name, (performance.now() - t).toFixed(0), 'ms')
}
console.log('rows timeline:', s.query(old.replace('FORMAT Null', 'FORMAT TSV'), 'TSV').split('\n').length, 'rows sessions:', s.query(now.replace('FORMAT Null', 'FORMAT TSV'), 'TSV').split('\n').length)
console.log(s.query(`SELECT sum(x.4), sum(x.5) FROM (SELECT tuple(*) AS x FROM (${old.replace(' FORMAT Null', '')}))`, 'TSV'), s.query(`SELECT sum(x.4), sum(x.5) FROM (SELECT tuple(*) AS x FROM (${now.replace(' FORMAT Null', '')}))`, 'TSV'))
