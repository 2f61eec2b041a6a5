/**
 * Where a sealed breakdown's time goes: the whole statement against each of its branches alone and
 * against the engine's floor (a constant SELECT and a one-row read), interleaved, medians of N.
 *
 *   npx tsx benchmarks/experiments/sealed-parts.ts DATA_DIR PROJECT [RUNS] [DIMENSION]
 */
import { findDimension } from '../../src/query/dimensions.ts'
import { sealedBreakdownStatement, sealedLatestStatement } from '../../src/query/sealed.ts'
import { openSealedProject } from '../lib/sealed-project.ts'

const [dir, project, runsArg = '15', dimensionName = 'country'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: sealed-parts.ts DATA_DIR PROJECT [RUNS] [DIMENSION]')
const runs = Number(runsArg)
const read = { timeoutS: 600 }
const { rt, clock, written: build } = await openSealedProject(dir, project, true)

const end = clock.startOf('day').plus({ days: 1 })
const req = { projectId: project, range: { start: end.minus({ days: 30 }), end, timezone: 'UTC' }, filters: [], limit: 11, offset: 0 }
const statement = sealedBreakdownStatement(findDimension(dimensionName)!, req, build)
// Without its comments, so that a part taken alone does not end inside one.
const whole = { ...statement, sql: statement.sql.replace(/^\s*--[^\n]*\n/gm, '') }
// Each UNION ALL branch of the statement alone, counted.
const body = whole.sql.slice(whole.sql.indexOf('FROM (') + 'FROM ('.length, whole.sql.lastIndexOf('\n)\nGROUP BY'))
const branches = body.split(/\n\s*UNION ALL\n/)
const head = whole.sql.slice(0, whole.sql.indexOf('\nSELECT\n') + 1)
const statements: [string, { name: string; sql: string; params: Record<string, unknown> }][] = [
  ['whole statement', whole],
  ...branches.map((b, i): [string, typeof whole] => [`branch ${i + 1} alone`, { ...whole, sql: `${head}SELECT count() FROM (${b})` }]),
  ...branches.slice(1).map((b, i): [string, typeof whole] => [`whole without branch ${i + 2}`, { ...whole, sql: whole.sql.replace(`${b}\n  UNION ALL\n`, '').replace(`\n  UNION ALL\n${b}`, '') }]),
  ['SELECT 1', { name: 'one', sql: 'SELECT 1', params: {} }],
  ['sealed_latest', sealedLatestStatement([project])],
]
const times = statements.map((): number[] => [])
for (let i = 0; i < runs + 2; i++) {
  for (let k = 0; k < statements.length; k++) {
    const j = (i + k) % statements.length
    const t = performance.now()
    await rt.runner.rows(statements[j]![1], read)
    if (i >= 2) times[j]!.push(performance.now() - t)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${project}, ${dimensionName}, 30d UTC, C ${build.closedAt.toISO()}, medians of ${runs}, interleaved\n`)
console.log('| statement | ms |\n|---|--:|')
statements.forEach(([label], j) => console.log(`| ${label} | ${median(times[j]!).toFixed(1)} |`))
await rt.close()
