/**
 * Where a sealed breakdown's time goes: the whole statement against each of its branches alone and
 * against the engine's floor (a constant SELECT and a one-row read), interleaved, medians of N.
 *
 *   npx tsx benchmarks/experiments/sealed-parts.ts DATA_DIR PROJECT [RUNS] [DIMENSION]
 */
import { randomInt } from 'node:crypto'
import { DateTime } from 'luxon'
import pino from 'pino'
import { loadConfig } from '../../src/config.ts'
import { findDimension } from '../../src/query/dimensions.ts'
import { newestClosing } from '../../src/query/page-rollup.ts'
import { readSealedLatest, sealedBreakdownStatement, sealedLatestStatement, sealedLiveWriteStatement } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { sealProject } from '../../src/services/sealed/builder.ts'

const [dir, project, runsArg = '15', dimensionName = 'country'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: sealed-parts.ts DATA_DIR PROJECT [RUNS] [DIMENSION]')
const runs = Number(runsArg)
const logger = pino({ level: 'warn' })
const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0', QUARRY_PAGE_ROLLUPS: '0' }), logger)
const read = { timeoutS: 600 }
const [first] = await rt.runner.rows<{ last: string }>(
  { name: 'last', sql: 'SELECT max(created_at) AS last FROM events WHERE project_id = {p:String}', params: { p: project } },
  read,
)
const clock = DateTime.fromSQL(first!.last, { zone: 'UTC' }).plus({ minutes: 30 })
let [row] = await rt.runner.rows<Parameters<typeof readSealedLatest>[0] & object>(sealedLatestStatement(project), read)
if (!row) {
  await sealProject(project, { runner: rt.runner, logger, closedAt: newestClosing(clock, 'UTC'), timeoutS: 900 })
  ;[row] = await rt.runner.rows<Parameters<typeof readSealedLatest>[0] & object>(sealedLatestStatement(project), read)
}
// The live sessions under a stamp of this run's own, as the planner writes them.
const stamp = randomInt(1, 2 ** 48)
const build = { ...readSealedLatest(row)!.build, liveStamp: stamp }
await rt.runner.command(sealedLiveWriteStatement(project, build, stamp))

const end = clock.startOf('day').plus({ days: 1 })
const req = { projectId: project, range: { start: end.minus({ days: 30 }), end, timezone: 'UTC' }, filters: [], limit: 11, offset: 0 }
const whole = sealedBreakdownStatement(findDimension(dimensionName)!, req, build)
// Each UNION ALL branch of the statement alone, counted.
const body = whole.sql.slice(whole.sql.indexOf('FROM (') + 'FROM ('.length, whole.sql.lastIndexOf('\n)\nGROUP BY'))
const branches = body.split(/\n\s*UNION ALL\n/)
const head = whole.sql.slice(0, whole.sql.indexOf('\nSELECT\n') + 1)
const statements: [string, { name: string; sql: string; params: Record<string, unknown> }][] = [
  ['whole statement', whole],
  ...branches.map((b, i): [string, typeof whole] => [`branch ${i + 1} alone`, { ...whole, sql: `${head}SELECT count() FROM (${b})` }]),
  ...branches.slice(1).map((b, i): [string, typeof whole] => [`whole without branch ${i + 2}`, { ...whole, sql: whole.sql.replace(`${b}\n  UNION ALL\n`, '').replace(`\n  UNION ALL\n${b}`, '') }]),
  ['SELECT 1', { name: 'one', sql: 'SELECT 1', params: {} }],
  ['sealed_latest', sealedLatestStatement(project)],
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
