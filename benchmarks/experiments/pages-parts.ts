/**
 * Where a sealed /pages statement's time goes: the whole statement against the same statement
 * without each branch of its `parts`, and each branch alone, interleaved, medians of N. Cases: a
 * 30-day UTC window, yesterday (ends before C), the unaligned instants of window-cells.ts, and 30
 * days with `country is US` (event-filters.ts); CASES picks some. Branches: 1 day rows, 2 views at
 * the edges, 3 sessions at the edges, 4 views from C on and held out, 5 their entries.
 *
 *   npx tsx benchmarks/experiments/pages-parts.ts DATA_DIR PROJECT [RUNS] [CASE,CASE…]
 */
import { sealedPagesStatement } from '../../src/query/sealed-pages.ts'
import { openSealedProject } from '../lib/sealed-project.ts'

const [dir, project, runsArg = '9', only] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: pages-parts.ts DATA_DIR PROJECT [RUNS] [CASE,CASE…]')
const runs = Number(runsArg)
const read = { timeoutS: 600 }
const { rt, clock, written: build } = await openSealedProject(dir, project, true)

const today = clock.startOf('day')
const utc = today.toUTC()
const US = [{ name: 'country', operator: 'is' as const, value: ['US'] }]
const cases = {
  '30d': { start: today.minus({ days: 30 }), end: today.plus({ days: 1 }), filters: [] },
  yesterday: { start: today.minus({ days: 1 }), end: today, filters: [] },
  instants: { start: utc.minus({ days: 30 }).set({ hour: 7, minute: 13 }), end: utc.minus({ days: 1 }).set({ hour: 16, minute: 41 }), filters: [] },
  'country US': { start: today.minus({ days: 30 }), end: today.plus({ days: 1 }), filters: US },
}
type Stmt = ReturnType<typeof sealedPagesStatement>
const statements: [string, Stmt][] = []
for (const [label, { filters, ...w }] of Object.entries(cases).filter(([label]) => !only || only.split(',').includes(label))) {
  const stmt = sealedPagesStatement({ projectId: project, range: { ...w, timezone: 'UTC' }, filters, limit: 1000, offset: 0 }, build)
  const sql = stmt.sql.replace(/^\s*--[^\n]*\n/gm, '')
  const open = sql.indexOf('parts AS (') + 'parts AS ('.length
  const close = sql.indexOf('\n  ),\n  pages AS (')
  const branches = sql.slice(open, close).split('\n    UNION ALL\n')
  const withBranches = (kept: string[]) => ({ ...stmt, sql: `${sql.slice(0, open)}${kept.join('\n    UNION ALL\n')}${sql.slice(close)}` })
  const head = sql.slice(0, sql.indexOf('  parts AS (')).replace(/,\s*$/, '\n')
  statements.push([`${label}: whole`, { ...stmt, sql }])
  // The first branch names the columns, so it stays.
  branches.forEach((_, i) => i > 0 && statements.push([`${label}: without branch ${i + 1}`, withBranches(branches.filter((__, j) => j !== i))]))
  branches.forEach((b, i) => statements.push([`${label}: branch ${i + 1} alone`, { ...stmt, sql: `${head}SELECT count() FROM (${b})` }]))
}
statements.push(['SELECT 1', { name: 'one', sql: 'SELECT 1', params: {} } as Stmt])
const times = statements.map((): number[] => [])
for (let i = 0; i < runs + 1; i++) {
  for (let k = 0; k < statements.length; k++) {
    const j = (i + k) % statements.length
    const t = performance.now()
    await rt.runner.rows(statements[j]![1], read)
    if (i >= 1) times[j]!.push(performance.now() - t)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${project}, C ${build.closedAt.toISO()}, medians of ${runs}, interleaved\n`)
console.log('| statement | ms |\n|---|--:|')
statements.forEach(([label], j) => console.log(`| ${label} | ${median(times[j]!).toFixed(1)} |`))
await rt.close()
