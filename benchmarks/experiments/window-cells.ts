/**
 * Every insights endpoint and /export/charts over windows the sealed history answers least well
 * (ISO instants that start and end mid-hour, `timezone` overrides with a half-hour offset and with
 * DST) beside the 30d UTC reference, in process (app.request, no response cache), on the data's
 * clock. Cells are visited round-robin, so a slow stretch of the machine lands on every cell alike:
 * read the ratios to the reference, not the absolute figures. Medians of wall time and of the
 * process's CPU.
 *
 *   npx tsx benchmarks/experiments/window-cells.ts DATA_DIR PROJECT [RUNS] [ROUTE,ROUTE…]
 */
import { loadavg } from 'node:os'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, runsArg = '7', only] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: window-cells.ts DATA_DIR PROJECT [RUNS] [ROUTE,ROUTE…]')
const runs = Number(runsArg)
const { rt, clock, app, headers } = await sealedProjectApp(dir, project, 'window-cells')

const day = clock.toUTC().startOf('day')
const windows: Record<string, Record<string, string>> = {
  '30d UTC': { range: '30d', timezone: 'UTC' },
  'instants': { startDate: day.minus({ days: 30 }).set({ hour: 7, minute: 13 }).toISO({ suppressMilliseconds: true })!, endDate: day.minus({ days: 1 }).set({ hour: 16, minute: 41 }).toISO({ suppressMilliseconds: true })! },
  'Kolkata': { range: '30d', timezone: 'Asia/Kolkata' },
  'New_York': { range: '30d', timezone: 'America/New_York' },
}
const chart = (segment: string) => ({ path: '/export/charts', extra: { projectId: project, interval: 'day', series: JSON.stringify([{ name: 'screen_view', segment }]) } })
const routes: Record<string, { path: string; extra: Record<string, string> }> = {
  metrics: { path: `/insights/${project}/metrics`, extra: {} },
  pages: { path: `/insights/${project}/pages`, extra: {} },
  ...Object.fromEntries(DIMENSIONS.map((d) => [d.name, { path: `/insights/${project}/${d.name}`, extra: {} }])),
  'charts events': chart('event'),
  'charts users': chart('user'),
}
const chosen = only ? only.split(',') : Object.keys(routes)
const cells = chosen.flatMap((route) => Object.keys(windows).map((w) => ({ route, w, url: `http://q${routes[route]!.path}?${new URLSearchParams({ ...routes[route]!.extra, ...windows[w]! })}` })))
const wall = new Map<string, number[]>()
const cpu = new Map<string, number[]>()
const sealedSeen = new Map<string, number>()
const loads: number[] = []
for (let i = 0; i <= runs; i++) {
  loads.push(loadavg()[0]!)
  for (const cell of i % 2 ? [...cells].reverse() : cells) {
    const key = `${cell.route}|${cell.w}`
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    const res = await app.request(cell.url, { headers })
    await res.arrayBuffer()
    const ms = performance.now() - t0
    const c = process.cpuUsage(c0)
    if (res.status !== 200) throw new Error(`${key}: ${res.status} ${cell.url}`)
    // The first round writes the snapshots and warms the caches: not counted.
    if (i === 0) continue
    wall.set(key, [...(wall.get(key) ?? []), ms])
    cpu.set(key, [...(cpu.get(key) ?? []), (c.user + c.system) / 1000])
    if (res.headers.has('x-quarry-sealed-until')) sealedSeen.set(key, (sealedSeen.get(key) ?? 0) + 1)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
console.log(`${project}, clock ${clock.toISO()}, medians of ${runs} round-robin rounds, load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`)
console.log(`instants: ${windows.instants!.startDate} – ${windows.instants!.endDate}\n`)
console.log(`| route | ${Object.keys(windows).join(' | ')} |\n|---|${Object.keys(windows).map(() => '--:').join('|')}|`)
for (const route of chosen) {
  const ref = median(wall.get(`${route}|30d UTC`)!)
  const cellText = (w: string) => {
    const key = `${route}|${w}`
    const m = median(wall.get(key)!)
    const s = sealedSeen.get(key) === runs ? '' : ' (not sealed)'
    return `${m.toFixed(0)} (${median(cpu.get(key)!).toFixed(0)})${w === '30d UTC' ? '' : ` ${(m / ref).toFixed(1)}×`}${s}`
  }
  console.log(`| ${route} | ${Object.keys(windows).map(cellText).join(' | ')} |`)
}
await rt.close()
