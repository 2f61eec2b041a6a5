/**
 * /manage/projects and /manage/projects/{id}, read-only, for root clients, called through the
 * client generated from /openapi.json: OpenPanel's `{data}` shapes, the organization's projects
 * only (newest first), and the refusals.
 */
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import type { paths } from './generated/quarry-api.js'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
let app: ReturnType<typeof testApp>
const clients: Record<'root' | 'otherRoot' | 'read' | 'write', { id: string; secret: string }> = {} as never

/** Created one after another, so their creation times order them. */
const PROJECTS = [
  { id: 'alpha', name: 'Alpha site', timezone: 'Europe/Paris', organizationId: 'org-a' },
  { id: 'beta', name: 'Beta app', timezone: 'UTC', organizationId: 'org-a' },
  { id: 'gamma', name: 'Gamma', timezone: 'Asia/Tokyo', organizationId: 'org-b' },
  { id: 'delta', name: 'Delta', timezone: 'America/New_York', organizationId: 'org-a' },
]

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  for (const p of PROJECTS) {
    await createProject(rt.runner, p)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  clients.root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-a', name: 'root a' })
  clients.otherRoot = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-b', name: 'root b' })
  clients.read = await createClientRow(rt.runner, { type: 'read', projectId: 'alpha', organizationId: 'org-a', name: 'read' })
  clients.write = await createClientRow(rt.runner, { type: 'write', projectId: 'alpha', organizationId: 'org-a', name: 'write' })
  app = testApp(rt)
})

afterAll(async () => {
  await rt?.dispose()
})

const as = (who?: keyof typeof clients) =>
  createClient<paths>({
    baseUrl: 'http://quarry.test',
    fetch: async (req) => app.fetch(req),
    headers: who ? { 'openpanel-client-id': clients[who].id, 'openpanel-client-secret': clients[who].secret } : {},
  })

/** What the list must be, from the rows created above: the organization's, newest first. */
const expectedOf = (organizationId: string) =>
  PROJECTS.filter((p) => p.organizationId === organizationId)
    .reverse()
    .map((p) => ({ id: p.id, name: p.name, organizationId: p.organizationId, timezone: p.timezone }))

describe('/manage/projects', () => {
  it("lists the root client's organization's projects, newest first, in OpenPanel's {data} shape", async () => {
    const { data, response } = await as('root').GET('/manage/projects')
    expect(response.status).toBe(200)
    expect(data!.data.map(({ id, name, organizationId, timezone }) => ({ id, name, organizationId, timezone }))).toEqual(expectedOf('org-a'))
    for (const p of data!.data) {
      expect(p.deleteAt).toBeNull()
      expect(p.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    }
    const other = await as('otherRoot').GET('/manage/projects')
    expect(other.data!.data.map((p) => p.id)).toEqual(expectedOf('org-b').map((p) => p.id))
  })

  it('answers one project of the organization; another organization\'s is not found', async () => {
    const { data, response } = await as('root').GET('/manage/projects/{id}', { params: { path: { id: 'beta' } } })
    expect(response.status).toBe(200)
    expect(data!.data).toMatchObject({ id: 'beta', name: 'Beta app', organizationId: 'org-a', timezone: 'UTC', deleteAt: null })
    for (const id of ['gamma', 'nope']) {
      const res = await as('root').GET('/manage/projects/{id}', { params: { path: { id } } })
      expect(res.response.status, id).toBe(404)
      expect(res.error).toMatchObject({ code: 'project_not_found' })
    }
  })

  it('refuses read and write clients (403), missing credentials (401) and unknown parameters (400)', async () => {
    for (const who of ['read', 'write'] as const) {
      const res = await as(who).GET('/manage/projects')
      expect(res.response.status, who).toBe(403)
      expect(res.error).toMatchObject({ code: 'client_type_not_allowed' })
    }
    const anonymous = await as().GET('/manage/projects')
    expect(anonymous.response.status).toBe(401)
    const res = await app.request('/manage/projects?limit=5', { headers: { 'openpanel-client-id': clients.root.id, 'openpanel-client-secret': clients.root.secret } })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ code: 'invalid_parameters', details: [expect.objectContaining({ path: 'limit' })] })
  })

  it('is read-only: other methods are 405', async () => {
    const headers = { 'openpanel-client-id': clients.root.id, 'openpanel-client-secret': clients.root.secret }
    for (const method of ['POST', 'PATCH', 'DELETE']) {
      const path = method === 'POST' ? '/manage/projects' : '/manage/projects/alpha'
      const res = await app.request(path, { method, headers })
      expect(res.status, method).toBe(405)
    }
  })
})
