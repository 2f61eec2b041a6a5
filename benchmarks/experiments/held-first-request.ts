/**
 * The first funnel by profile after an insert, with and without the held people's snapshot
 * (sql/schema/046_sealed_live_held.sql), and the steady request after it, through the planner as
 * the route has it (wall ms of the planning apart: its reads, and the write): per round, an event after C is inserted (a new device, so no session crosses
 * C), then the request is timed twice. Rounds alternate the two ways; wall and CPU ms medians (the
 * engine runs in this process). It inserts into the directory: use a copy.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/experiments/held-first-request.ts --project pl [--runs 5] [--steps 5]
 */
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { sealedFunnel } from '../../src/query/product/sealed-units.ts'
import { productRange } from '../../src/query/product/window.ts'
import { openRuntime } from '../../src/runtime.ts'
import { SealedHistory } from '../../src/services/sealed/index.ts'
import { dataClock } from '../lib/data-clock.ts'

const { values } = parseArgs({ options: { project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '5' }, steps: { type: 'string', default: '3' } } })
const project = values.project!
const logger = createLogger('warn')
const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, logger)
const { clock } = await dataClock(rt.runner, project)
const history = new SealedHistory({ runner: rt.runner, logger, now: () => clock.toJSDate(), queryTimeoutS: 600, rebuildIntervalMs: 24 * 3600_000, insertsTtlMs: 0 })
const steps = values.steps === '5' ? ['screen_view', 'search', 'add_to_cart', 'checkout', 'revenue'] : ['screen_view', 'add_to_cart', 'checkout']
const req = { projectId: project, range: productRange({ range: '30d' }, 'UTC', clock.toJSDate(), '30d'), filters: [], groupBy: 'profile_id' as const, windowHours: 24, steps }
const [last] = await rt.runner.rows<Record<string, unknown>>({ name: 'last_event', sql: 'SELECT * FROM events WHERE project_id = {project:String} ORDER BY created_at DESC LIMIT 1', params: { project } }, { timeoutS: 600 })

async function request(held: boolean) {
  const c = process.cpuUsage()
  const t = performance.now()
  const build = await history.forRequest(project, { runner: rt.runner }, ...(held ? (['held'] as const) : []))
  if (!build) throw new Error('no build holds')
  const planned = performance.now() - t
  await rt.runner.rows(sealedFunnel(req)!(build), { timeoutS: 600 })
  const used = process.cpuUsage(c)
  return { wall: performance.now() - t, planned, cpu: (used.user + used.system) / 1000, snapshot: build.heldStamp !== undefined }
}

const cells = new Map<string, { wall: number[]; planned: number[]; cpu: number[]; snapshot: boolean[] }>()
const note = (key: string, m: Awaited<ReturnType<typeof request>>) => {
  const cell = cells.get(key) ?? { wall: [], planned: [], cpu: [], snapshot: [] }
  cell.wall.push(m.wall)
  cell.planned.push(m.planned)
  cell.cpu.push(m.cpu)
  cell.snapshot.push(m.snapshot)
  cells.set(key, cell)
}
await request(true)
await request(false)
for (let i = 0; i < Number(values.runs) * 2; i++) {
  const held = i % 2 === 0
  // The planner writes a part at most every 2 s: a round that came sooner would compute its own.
  await new Promise((resolve) => setTimeout(resolve, 2_100))
  const device = `held-first-${randomUUID()}`
  const at = clock.minus({ minutes: 20 }).toUTC().toFormat('yyyy-MM-dd HH:mm:ss.SSS')
  await rt.engine.client.insert({ table: 'events', values: [{ ...last, id: randomUUID(), created_at: at, device_id: device, profile_id: device, session_id: device }], format: 'JSONEachRow' })
  const way = held ? 'snapshot' : 'reads'
  note(`${way}: first after an insert`, await request(held))
  note(`${way}: steady`, await request(held))
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${project}, ${steps.length} steps, 30d, medians of ${values.runs}, load ${loadavg()[0]!.toFixed(2)}`)
for (const [key, c] of cells) console.log(`${key}\twall ${median(c.wall).toFixed(0)} (planning ${median(c.planned).toFixed(0)})\tcpu ${median(c.cpu).toFixed(0)}\tsnapshot ${c.snapshot.join(',')}`)
await history.stop()
await rt.close()
