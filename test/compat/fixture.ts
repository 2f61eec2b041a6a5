/**
 * The data the replays of OpenPanel clients run against: project `shop` (UTC) with ten days of
 * deterministic traffic, one event a year older than the rest (an export without dates must reach
 * it), and project `other` of the same organization. Expected answers are computed from these rows
 * in plain TypeScript, never read back from Quarry.
 */
import { createClientRow } from '../../src/auth/clients.ts'
import { createProject } from '../../src/projects.ts'
import type { EventRow } from '../helpers/event-row.ts'
import { seededRandom } from '../helpers/random.ts'
import { afterAll, beforeAll } from 'vitest'
import { openTestRuntime, testApp, type TestRuntime } from '../helpers/runtime.ts'

export const NOW = new Date('2026-03-11T12:00:00.000Z')
export const DAYS = Array.from({ length: 10 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`)
/** More pages than the 10 rows OpenPanel's old default gave, fewer than its 1000. */
export const PATHS = Array.from({ length: 14 }, (_, i) => (i === 0 ? '/' : `/p${i}`))
export const COUNTRIES = ['SE', 'DE', 'US']

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`
const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '')

/** An events row as inserted; `groups` is the column migration 019 added. */
export type CompatRow = EventRow & { groups: string[] }

function row(n: number, project: string, e: Partial<CompatRow> & { created_at: string; session_id: string; device_id: string }): CompatRow {
  return {
    id: uuid(n),
    name: 'screen_view',
    profile_id: e.device_id,
    project_id: project,
    path: '/',
    origin: 'https://shop.test',
    referrer: '',
    referrer_name: '',
    referrer_type: '',
    duration: 0,
    revenue: 0,
    properties: {},
    country: '',
    city: '',
    region: '',
    longitude: null,
    latitude: null,
    os: 'Linux',
    os_version: '6',
    browser: 'Firefox',
    browser_version: '130',
    device: 'desktop',
    brand: '',
    model: '',
    sdk_name: 'web',
    sdk_version: '1.0.0',
    groups: [],
    ...e,
  }
}

/** Sessions of 1–4 page views, a click now and then, and purchases with a plan property. */
export function compatEvents(): CompatRow[] {
  const rnd = seededRandom(2020)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!
  const out: CompatRow[] = []
  let n = 0
  DAYS.forEach((day, d) => {
    const sessions = 3 + Math.floor(rnd() * 4)
    for (let s = 0; s < sessions; s++) {
      const device = `dev-${Math.floor(rnd() * 12)}`
      const session = `${day}-s${s}`
      const country = pick(COUNTRIES)
      const city = { SE: 'Stockholm', DE: 'Berlin', US: 'Boston' }[country]!
      let t = Date.parse(`${day}T00:00:00Z`) + Math.floor(rnd() * 22 * 3600_000)
      // Visitors of a company account carry its group (OpenPanel's group analytics); the rest none.
      const groups = Number(device.slice(4)) % 3 === 0 ? ['acme'] : Number(device.slice(4)) % 3 === 1 ? ['acme', 'team-eu'] : []
      const base = { session_id: session, device_id: device, country, city, region: `${city} region`, groups }
      const views = 1 + Math.floor(rnd() * 4)
      for (let v = 0; v < views; v++) {
        const path = v === 0 && d % 3 === 0 ? '/' : pick(PATHS)
        out.push(row(++n, 'shop', { ...base, created_at: stamp(t), path, properties: { __title: `Title ${path}` } }))
        t += 1000 + Math.floor(rnd() * 90_000)
        if (rnd() < 0.3) out.push(row(++n, 'shop', { ...base, name: 'click', created_at: stamp(t), path, properties: { target: 'cta' } }))
        t += 1000
      }
      if (rnd() < 0.4) {
        const plan = pick(['basic', 'pro'])
        const revenue = plan === 'pro' ? 4900 : 900 + Math.floor(rnd() * 100)
        // A cart as OpenPanel stores arrays: flattened keys, items.0.sku, items.1.sku, …
        const items = Object.fromEntries(Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, i) => [`items.${i}.sku`, pick(['A1', 'B2', 'P9'])]))
        out.push(row(++n, 'shop', { ...base, name: 'revenue', revenue, created_at: stamp(t), path: pick(['/p1', '/p2']), properties: { plan, ...items } }))
      }
    }
  })
  // A year before the rest: only an export without dates reaches it.
  out.push(row(++n, 'shop', { session_id: 'old', device_id: 'dev-old', created_at: '2025-03-01 08:00:00.000', path: '/old', country: 'SE' }))
  out.push(row(++n, 'other', { session_id: 'o1', device_id: 'dev-o', created_at: '2026-03-05 10:00:00.000', path: '/elsewhere', country: 'DE' }))
  return out
}

export interface CompatClients {
  read: { id: string; secret: string }
  root: { id: string; secret: string }
  write: { id: string; secret: string }
}

export async function seedCompat(rt: TestRuntime, events: readonly CompatRow[]): Promise<CompatClients> {
  await createProject(rt.runner, { id: 'shop', name: 'Shop', timezone: 'UTC', organizationId: 'org-c' })
  await createProject(rt.runner, { id: 'other', name: 'Other', timezone: 'UTC', organizationId: 'org-c' })
  await rt.engine.client.insert({ table: 'events', values: [...events], format: 'JSONEachRow' })
  const make = (type: 'read' | 'write' | 'root', projectId: string | null) =>
    createClientRow(rt.runner, { type, projectId, organizationId: 'org-c', name: `compat-${type}` })
  return { read: await make('read', 'shop'), root: await make('root', null), write: await make('write', 'shop') }
}

export const ms = (e: EventRow) => Date.parse(`${e.created_at.replace(' ', 'T')}Z`)
export const isoOf = (e: EventRow) => new Date(ms(e)).toISOString()

/** The export's order: newest first, then by id. */
export const exportOrder = (a: EventRow, b: EventRow) => ms(b) - ms(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const headers = (c: { id: string; secret: string }) => ({ 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret })

/** As OpenPanel clients write a query: repeated keys for lists of names, URL-encoded JSON for objects. */
export const openPanelQuery = (query: Record<string, unknown>) => {
  const out = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) for (const v of value) out.append(key, v)
    else out.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value))
  }
  return out.toString()
}

/** What a replay file runs against: its own runtime with the fixture seeded, and the app at NOW. */
export interface CompatApp {
  rt: TestRuntime
  clients: CompatClients
  app: ReturnType<typeof testApp>
}

/** Opens a CompatApp before the file's tests and disposes of it after them; its fields are set once they start. */
export function compatApp(events: readonly CompatRow[]): CompatApp {
  const env = {} as CompatApp
  beforeAll(async () => {
    env.rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
    env.clients = await seedCompat(env.rt, events)
    env.app = testApp(env.rt, { now: () => NOW })
  })
  afterAll(async () => {
    await env.rt?.dispose()
  })
  return env
}
