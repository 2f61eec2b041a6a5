/**
 * The first request after a small insert after C, per M route: ROUNDS times per route, each an
 * insert (a copy of the project's last event under a new id, at its instant: C and the data's clock
 * stay), then the request, timed; then two more requests and 2.1 s (the least time between two
 * snapshots of a part) so that the next round starts settled. Medians and all samples in ms.
 * Uses only what every version of benchmarks/lib/sealed-project.ts gives, so that two checkouts can
 * be compared over the same directory, one process after the other:
 *
 *   npx tsx benchmarks/experiments/first-after-insert.ts DIR PROJECT [ROUNDS]
 */
import { randomUUID } from 'node:crypto'
import { sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, roundsArg] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: first-after-insert.ts DIR PROJECT [ROUNDS]')
const rounds = Number(roundsArg ?? 5)
const { rt, app, headers } = await sealedProjectApp(dir, project, 'first-after-insert')
const chart = `/export/charts?${new URLSearchParams({ projectId: project, range: '30d', interval: 'day', series: JSON.stringify([{ name: 'screen_view', segment: 'event' }]) })}`
const routes: [string, string][] = [
  ['metrics', `/insights/${project}/metrics?range=30d`],
  ['pages', `/insights/${project}/pages?range=30d`],
  ['country', `/insights/${project}/country?range=30d`],
  ['charts', chart],
]
const request = async (path: string) => {
  const t0 = performance.now()
  const res = await app.request(`http://q.bench${path}`, { headers })
  await res.text()
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
  return performance.now() - t0
}
const samples = new Map<string, number[]>(routes.map(([name]) => [name, []]))
for (let round = 0; round < rounds; round++) {
  for (const [name, path] of routes) {
    await rt.runner.command({
      name: 'insert_one',
      sql: 'INSERT INTO events SELECT * REPLACE ({id:String} AS id) FROM events WHERE project_id = {p:String} ORDER BY created_at DESC LIMIT 1',
      params: { id: randomUUID(), p: project },
    })
    samples.get(name)!.push(await request(path))
    await request(path)
    await new Promise((r) => setTimeout(r, 2_100))
    await request(path)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const [name, xs] of samples) console.log(`${name}: median ${median(xs).toFixed(1)} ms [${xs.map((x) => x.toFixed(0)).join(' ')}]`)
await rt.close()
