/**
 * What one part of `sessions` buys a FINAL read, by the state of the parts (benchmarks/README.md,
 * "`sessions` without the forced merge"): a copy of one project's sessions, its merges stopped, read
 * as a breakdown (country, 30 days) and as a build reads it (the whole history), medians of RUNS, in
 * four states: 96 % in one part and the last 3 days in a second; plus four one-row parts; merged
 * into one part; one part plus four one-row parts. The copy is dropped at the end; `sessions` is
 * not touched. No other process may have DIR open.
 *
 *   npx tsx benchmarks/experiments/sessions-parts.ts DIR [RUNS] [PROJECT]
 */
import { Session } from 'chdb'
const s = new Session(process.argv[2]!)
const runs = Number(process.argv[3] ?? 7)
const P = process.argv[4] ?? 'p051'
s.query('DROP TABLE IF EXISTS quarry.sessions_x')
s.query('CREATE TABLE quarry.sessions_x AS quarry.sessions')
s.query('SYSTEM STOP MERGES quarry.sessions_x')
const maxAt = `(SELECT max(created_at) FROM quarry.events WHERE project_id = '${P}')`
const parts = () => s.query("SELECT count(), groupArray(rows) FROM system.parts WHERE database = 'quarry' AND table = 'sessions_x' AND active", 'TSV').trim()
const cols = s.query("SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns WHERE database = 'quarry' AND table = 'sessions' AND default_kind = ''", 'TSV').trim()
const qs: Record<string, string> = {
  'country 30d': `SELECT country, count(), uniqExact(profile_key), sum(is_bounce) FROM quarry.sessions_x FINAL WHERE project_id = '${P}' AND created_at >= ${maxAt} - INTERVAL 30 DAY GROUP BY country FORMAT Null`,
  'whole (build-like)': `SELECT count(), sum(event_count), uniqExact(profile_key), max(exit), min(entry), sum(revenue) FROM quarry.sessions_x FINAL WHERE project_id = '${P}' FORMAT Null`,
}
function time(label: string) {
  for (const [name, sql] of Object.entries(qs)) {
    const ws: number[] = []; const cs: number[] = []
    for (let i = 0; i <= runs; i++) {
      const c0 = process.cpuUsage(); const t0 = performance.now()
      s.query(sql, 'TSV')
      const w = performance.now() - t0; const c = process.cpuUsage(c0)
      if (i > 0) { ws.push(w); cs.push((c.user + c.system) / 1000) }
    }
    const med = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1]!.toFixed(0)
    console.log(label.padEnd(40), '|', name.padEnd(20), '| wall', med(ws), 'cpu', med(cs))
  }
}
// 90% of the sessions in one part, the last 3 days' in a second (a pause after steady ingestion)
s.query(`INSERT INTO quarry.sessions_x (${cols}) SELECT ${cols} FROM quarry.sessions WHERE project_id = '${P}' AND created_at < ${maxAt} - INTERVAL 3 DAY`)
s.query(`INSERT INTO quarry.sessions_x (${cols}) SELECT ${cols} FROM quarry.sessions WHERE project_id = '${P}' AND created_at >= ${maxAt} - INTERVAL 3 DAY`)
console.log('parts', parts()); time('big + last 3 days')
// plus a few one-row parts (an insert's trickle)
for (let i = 0; i < 4; i++) s.query(`INSERT INTO quarry.sessions_x (${cols}) SELECT ${cols} FROM quarry.sessions WHERE project_id = '${P}' ORDER BY created_at DESC LIMIT 1 OFFSET ${i}`)
console.log('parts', parts()); time('big + 3 days + 4 one-row')
s.query('SYSTEM START MERGES quarry.sessions_x')
s.query('OPTIMIZE TABLE quarry.sessions_x FINAL')
console.log('parts', parts()); time('one part')
for (let i = 0; i < 4; i++) s.query(`INSERT INTO quarry.sessions_x (${cols}) SELECT ${cols} FROM quarry.sessions WHERE project_id = '${P}' ORDER BY created_at DESC LIMIT 1 OFFSET ${i}`)
s.query('SYSTEM STOP MERGES quarry.sessions_x')
console.log('parts', parts()); time('one part + 4 one-row')
s.query('DROP TABLE quarry.sessions_x')
