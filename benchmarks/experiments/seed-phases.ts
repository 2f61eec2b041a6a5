/**
 * Where a seed's time goes: one `seedProject` into a fresh directory, with the wall time and the
 * process's CPU (every chDB thread included) of each phase: module loading, opening the engine,
 * the migrations, and each statement of the seed. Variants take a part of the insert away, so that
 * runs alternated in a shell loop (one process per directory) attribute its CPU:
 *
 *   DROP=sessions_mv,session_timeline_mv,proj:events_by_name  drop views / the projection first
 *   SINK=null            insert the generated events into a Null table: the generator alone
 *   SETTINGS='a = 1'     settings put before the seed insert's own
 *   BEFORE=<file.sql>    statements run first, e.g. the sessions view re-created TO a Null copy of
 *                        `sessions` (its SELECT without its write)
 *
 *   DIR=<fresh dir> [EVENTS=1000000] npx tsx benchmarks/experiments/seed-phases.ts
 *
 * Prints one JSON line: phase -> "wall ms/CPU ms".
 */
const startCpu = process.cpuUsage()
const phases = new Map<string, [number, number]>([['boot', [performance.now(), (startCpu.user + startCpu.system) / 1000]]])
let lastCpu = startCpu
let lastWall = performance.now()
const mark = (phase: string) => {
  const cpu = process.cpuUsage()
  const now = performance.now()
  const [wall, used] = phases.get(phase) ?? [0, 0]
  phases.set(phase, [wall + now - lastWall, used + (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000])
  lastCpu = cpu
  lastWall = now
}

const { default: pino } = await import('pino')
const { loadConfig } = await import('../../src/config.ts')
const { openEngine } = await import('../../src/clickhouse/engine/index.ts')
const { migrate } = await import('../../src/clickhouse/migrate.ts')
const { createQueryGate } = await import('../../src/clickhouse/gate.ts')
const { createQueryRunner } = await import('../../src/clickhouse/run.ts')
const { createProject } = await import('../../src/projects.ts')
const { seedProject } = await import('../../src/seed/seed.ts')
type QueryRunner = import('../../src/clickhouse/run.ts').QueryRunner
mark('imports')

const dir = process.env.DIR
if (!dir) throw new Error('usage: DIR=<fresh dir> npx tsx benchmarks/experiments/seed-phases.ts')
const engine = await openEngine(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0' }))
mark('open')
await migrate(engine.client)
mark('migrate')
for (const name of (process.env.DROP ?? '').split(',').filter(Boolean)) {
  const query = name.startsWith('proj:') ? `ALTER TABLE events DROP PROJECTION ${name.slice(5)}` : `DROP VIEW ${name}`
  await engine.client.command({ query })
}
if (process.env.BEFORE) {
  const { readFileSync } = await import('node:fs')
  const { splitStatements } = await import('../../src/clickhouse/migrate.ts')
  for (const query of splitStatements(readFileSync(process.env.BEFORE, 'utf8'))) await engine.client.command({ query })
}
if (process.env.SINK === 'null') await engine.client.command({ query: 'CREATE TABLE events_sink AS events ENGINE = Null' })
mark('prepare')

const inner = createQueryRunner(engine, createQueryGate({ concurrency: 4, maxQueued: 10 }), pino({ level: 'warn' }))
const runner: QueryRunner = {
  ...inner,
  async rows(stmt, opts) {
    mark('js')
    const rows = await inner.rows<never>(stmt, opts)
    mark(stmt.name)
    return rows
  },
  async command(stmt, opts) {
    let sql = stmt.sql
    if (stmt.name === 'seed_events') {
      if (process.env.SETTINGS) sql = sql.replace('\nSETTINGS ', `\nSETTINGS ${process.env.SETTINGS}, `)
      if (process.env.SINK === 'null') sql = sql.replace('INSERT INTO events ', 'INSERT INTO events_sink ')
    }
    mark('js')
    await inner.command({ ...stmt, sql }, opts)
    mark(stmt.name)
  },
}
await createProject(runner, { id: 'demo', name: 'demo', timezone: 'UTC', organizationId: 'default' })
await seedProject(runner, { projectId: 'demo', events: Number(process.env.EVENTS ?? 1_000_000), days: 30, seed: 1, end: new Date('2026-11-01T00:00:00Z') })
mark('js')
await engine.close()
mark('close')

let wall = 0
let cpu = 0
const out: Record<string, string> = { variant: [process.env.DROP, process.env.BEFORE, process.env.SINK, process.env.SETTINGS].filter(Boolean).join(' ') }
for (const [phase, [w, c]] of phases) {
  out[phase] = `${Math.round(w)}/${Math.round(c)}`
  wall += w
  cpu += c
}
out.total = `${Math.round(wall)}/${Math.round(cpu)}`
console.log(JSON.stringify(out))
