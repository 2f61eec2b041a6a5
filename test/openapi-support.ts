/**
 * Shared by the OpenAPI, error-envelope and generated-client tests: a small fixture project, and a
 * validator that checks real responses against what /openapi.json documents for them.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { expect } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import type { QueryRunner } from '../src/clickhouse/run.ts'
import { createProject } from '../src/projects.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import type { TestRuntime } from './helpers/runtime.ts'

/** The clock every fixture app runs on; the events below sit inside its default ranges. */
export const NOW = new Date('2024-06-15T12:00:00.000Z')

export interface Credentials {
  id: string
  secret: string
}

export const credentialHeaders = (c: Credentials) => ({ 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret })

export interface FixtureClients {
  /** Root client of org-a (projects alpha and beta). */
  root: Credentials
  /** Read client of alpha. */
  read: Credentials
  /** Read client of beta: any request for alpha is a 403. */
  readBeta: Credentials
  write: Credentials
}

const event = (e: Record<string, unknown>) => ({
  name: 'screen_view',
  project_id: 'alpha',
  origin: 'https://shop.test',
  properties: {},
  ...e,
  profile_id: e.profile_id ?? e.device_id,
})

/**
 * Project alpha (UTC) with four sessions of three visitors, all inside the 7 days before NOW:
 * s1 (d1, 2 page views, a 500 revenue event, Chrome/DE/google/newsletter), s2 (d2, bounce,
 * Firefox/US), s3 (d1, bounce, /blog) and s4 (d3, one minute ago: the live visitor).
 */
export const FIXTURE_EVENTS = [
  event({ session_id: 's1', device_id: 'd1', created_at: '2024-06-14 10:00:00.000', path: '/home', referrer: 'https://google.com/', referrer_name: 'Google', referrer_type: 'search', country: 'DE', city: 'Berlin', region: 'Berlin', browser: 'Chrome', browser_version: '125', os: 'Linux', os_version: '6', device: 'desktop', brand: 'Dell', model: 'XPS', properties: { '__query.utm_source': 'newsletter', '__query.utm_medium': 'email', '__query.utm_campaign': 'june', '__query.utm_term': 'shoes', '__query.utm_content': 'banner' } }),
  event({ session_id: 's1', device_id: 'd1', created_at: '2024-06-14 10:01:00.000', path: '/pricing', country: 'DE', browser: 'Chrome' }),
  event({ session_id: 's1', device_id: 'd1', created_at: '2024-06-14 10:02:00.000', name: 'revenue', path: '/pricing', revenue: 500, country: 'DE', browser: 'Chrome' }),
  event({ session_id: 's2', device_id: 'd2', created_at: '2024-06-14 11:00:00.000', path: '/home', country: 'US', city: 'Boston', region: 'Massachusetts', browser: 'Firefox', browser_version: '126', os: 'Windows', os_version: '11', device: 'desktop' }),
  event({ session_id: 's3', device_id: 'd1', created_at: '2024-06-13 09:00:00.000', path: '/blog', country: 'DE', browser: 'Chrome' }),
  event({ session_id: 's4', device_id: 'd3', created_at: '2024-06-15 11:59:00.000', path: '/home', country: 'FR', browser: 'Safari' }),
]

/** Projects alpha and beta (org-a), gamma (org-b), the fixture events, group g1 of alpha and one client of each kind. */
export async function seedFixture(rt: TestRuntime): Promise<FixtureClients> {
  await createProject(rt.runner, { id: 'alpha', name: 'Alpha', timezone: 'UTC', organizationId: 'org-a' })
  await createProject(rt.runner, { id: 'beta', name: 'Beta', timezone: 'UTC', organizationId: 'org-a' })
  await createProject(rt.runner, { id: 'gamma', name: 'Gamma', timezone: 'UTC', organizationId: 'org-b' })
  await rt.engine.client.insert({ table: 'events', values: FIXTURE_EVENTS, format: 'JSONEachRow' })
  await rt.engine.client.insert({
    table: 'groups',
    values: [{ id: 'g1', project_id: 'alpha', type: 'company', name: 'G One', properties: {}, created_at: '2024-06-01 00:00:00.000', version: 1 }],
    format: 'JSONEachRow',
  })
  const make = (type: 'read' | 'write' | 'root', projectId: string | null) =>
    createClientRow(rt.runner, { type, projectId, organizationId: 'org-a', name: `${type}-${projectId}` })
  return {
    root: await make('root', null),
    read: await make('read', 'alpha'),
    readBeta: await make('read', 'beta'),
    write: await make('write', 'alpha'),
  }
}

/** A runner that records nothing and answers nothing: enough for /openapi.json and /docs. */
export const idleRunner: QueryRunner = {
  rows: async () => [],
  stream: () => (async function* () {})(),
  command: async () => {},
}

// ---------------------------------------------------------------------------------------------

export type OpenApiDocument = {
  openapi: string
  info: { title: string; description?: string }
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, unknown>
    headers?: Record<string, HeaderObject>
    securitySchemes?: Record<string, Record<string, unknown>>
  }
}
type HeaderObject = { $ref?: string; description?: string; schema?: unknown }
type ResponseObject = { description: string; headers?: Record<string, HeaderObject>; content?: Record<string, { schema?: unknown }> }
export type Operation = {
  summary?: string
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[]
  responses: Record<string, ResponseObject>
  security?: Record<string, string[]>[]
}

/**
 * Headers that Quarry (not HTTP or CORS) puts on responses; whenever a response carries one, the
 * document must describe it for that status.
 */
const QUARRY_HEADER = /^(x-(?!content-type-options$)|ratelimit-|retry-after$|link$|server-timing$)/i

const COMPONENTS_ID = 'https://quarry.test/openapi-components.json'

/** Points `#/components/…` at the schema that holds the document's components. */
function rebase<T>(node: T): T {
  if (Array.isArray(node)) return node.map(rebase) as T
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') ? `${COMPONENTS_ID}${v}` : rebase(v),
      ]),
    ) as T
  }
  return node
}

export interface CheckedResponse {
  status: number
  headers: Headers
  body: unknown
  text: string
}

/** Validates real responses against the document with ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses). */
export class ResponseValidator {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  readonly #compiled = new Map<string, ValidateFunction>()
  /** Which (operation, status) pairs were exercised, for the coverage assertions. */
  readonly seen = new Set<string>()

  constructor(readonly doc: OpenApiDocument) {
    this.#ajv.addSchema({ $id: COMPONENTS_ID, components: rebase(doc.components) })
  }

  #validator(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema)
    let fn = this.#compiled.get(key)
    if (!fn) {
      fn = this.#ajv.compile(rebase(schema) as object)
      this.#compiled.set(key, fn)
    }
    return fn
  }

  schemaErrors(schema: unknown, value: unknown): string | undefined {
    const fn = this.#validator(schema)
    return fn(value) ? undefined : this.#ajv.errorsText(fn.errors, { separator: '\n' })
  }

  #header(h: HeaderObject): HeaderObject {
    if (!h.$ref) return h
    const name = h.$ref.replace('#/components/headers/', '')
    const found = this.doc.components.headers?.[name]
    if (!found) throw new Error(`dangling header reference ${h.$ref}`)
    return found
  }

  /**
   * Reads the body and checks it and the headers against the documented response of
   * `method path` for its status; without an operation (a 405, an unknown route), against Error.
 * `opts.schema` replaces the documented body schema (explain=sql answers the Explain component).
   */
  async check(method: string, path: string | undefined, res: Response, opts: { schema?: unknown } = {}): Promise<CheckedResponse> {
    const text = await res.text()
    const where = `${method.toUpperCase()} ${path ?? '(no operation)'} → ${res.status}`
    const type = res.headers.get('content-type') ?? ''
    const media = type.split(';')[0]!.trim()
    let body: unknown = text
    if (media === 'application/json' && method.toLowerCase() !== 'head') {
      try {
        body = JSON.parse(text)
      } catch {
        throw new Error(`${where}: body is not JSON: ${text.slice(0, 200)}`)
      }
    }
    if (!path) {
      expect(media, where).toBe('application/json')
      const errors = this.schemaErrors({ $ref: '#/components/schemas/Error' }, body)
      expect(errors, `${where}: ${text.slice(0, 300)}`).toBeUndefined()
      return { status: res.status, headers: res.headers, body, text }
    }
    const operation = this.doc.paths[path]?.[method.toLowerCase()]
    if (!operation) throw new Error(`${where}: no such operation in the document`)
    const documented = operation.responses[String(res.status)]
    expect(documented, `${where}: status not documented (body ${text.slice(0, 300)})`).toBeDefined()
    this.seen.add(`${method.toUpperCase()} ${path} ${res.status}`)

    // HEAD answers the GET's status and headers without its body.
    if (method.toLowerCase() === 'head') expect(text, `${where}: a body`).toBe('')
    else {
      const content = documented!.content ?? {}
      expect(Object.keys(content), `${where}: media type ${media} not documented`).toContain(media)
      const errors = this.schemaErrors(opts.schema ?? content[media]!.schema ?? {}, body)
      expect(errors, `${where}: body does not match its schema; body ${text.slice(0, 500)}`).toBeUndefined()
    }

    // An error may keep headers that describe the request rather than its outcome (the resolved
    // range of /export/charts is set before its queries run); those are documented on the 200.
    const sources = res.status >= 400 ? [operation.responses['200']?.headers, documented!.headers] : [documented!.headers]
    const headers = Object.fromEntries(
      sources.flatMap((h) => Object.entries(h ?? {})).map(([k, v]) => [k.toLowerCase(), this.#header(v)]),
    )
    for (const [name, value] of res.headers) {
      if (!QUARRY_HEADER.test(name)) continue
      const doc = headers[name]
      expect(doc, `${where}: header ${name} is sent but not documented`).toBeDefined()
      const headerErrors = this.schemaErrors(doc!.schema ?? {}, value)
      expect(headerErrors, `${where}: header ${name}: ${value}`).toBeUndefined()
    }
    return { status: res.status, headers: res.headers, body, text }
  }
}

/** Every `METHOD path` the document describes. */
export function operationsOf(doc: OpenApiDocument): { method: string; path: string; operation: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
  )
}

export interface RouteCase {
  /** The request's path and query for a project, with the parameters that make it succeed. */
  url: (project: string, query?: string) => string
  valid: string
  /** Two or more invalid parameters, and the `details` paths that must name each of them. */
  invalid: string
  invalidPaths: string[]
}

const insights = (name: string, valid: string, invalid: string, invalidPaths: string[]): [string, RouteCase] => [
  `/insights/{projectId}/${name}`,
  { url: (project, query = '') => `/insights/${project}/${name}?${query}`, valid, invalid, invalidPaths },
]
const exportRoute = (name: string, valid: string, invalid: string, invalidPaths: string[]): [string, RouteCase] => [
  `/export/${name}`,
  { url: (project, query = '') => `/export/${name}?projectId=${project}&${query}`, valid, invalid, invalidPaths },
]

/** A route of one profile, asked about d1 (a fixture visitor with events and no stored profile). */
const profileRoute = (rest: string, valid: string, invalid: string, invalidPaths: string[]): [string, RouteCase] => [
  `/insights/{projectId}/profiles/{profileId}${rest}`,
  { url: (project, query = '') => `/insights/${project}/profiles/d1${rest}?${query}`, valid, invalid, invalidPaths },
]

const LIST_INVALID: [string, string[]] = ['limit=0&range=forever&timezone=Mars%2FBase', ['limit', 'range', 'timezone']]

/**
 * One case per documented path: a path added to the document without one fails the OpenAPI suite;
 * the reliability tests call every route with its valid parameters.
 */
export const CASES = new Map<string, RouteCase>([
  insights('metrics', 'interval=day&previous=true', 'interval=fortnight&range=forever&previous=maybe', ['interval', 'range', 'previous']),
  insights('live', 'range=7d', 'startDate=2024-06-01&limit=3', ['startDate', 'limit']),
  insights('pages', 'limit=1', ...LIST_INVALID),
  ...DIMENSIONS.map((d) => insights(d.name, 'limit=1', ...LIST_INVALID)),
  insights('overview', 'interval=week&range=30d', 'interval=minute&range=forever', ['interval', 'range']),
  insights('pages/top', 'range=7d', 'range=forever&limit=3', ['range', 'limit']),
  insights('pages/entry_exit', 'mode=exit', 'mode=middle&timezone=Mars%2FBase', ['mode', 'timezone']),
  insights('pages/performance', 'sortBy=bounce_rate&sortOrder=asc&limit=2&search=%2F', 'sortBy=title&limit=501', ['sortBy', 'limit']),
  insights('traffic/referrers', 'breakdown=utm_source', 'breakdown=country&range=forever', ['breakdown', 'range']),
  insights('traffic/geo', 'breakdown=city', 'breakdown=referrer&startDate=garbage', ['breakdown', 'startDate']),
  insights('traffic/devices', 'breakdown=os', 'breakdown=model&filters=x', ['breakdown', 'filters']),
  insights('events', 'limit=1&eventNames=screen_view&properties=%7B%7D', ...LIST_INVALID),
  insights('events/names', '', 'range=7d&limit=3', ['range', 'limit']),
  insights('events/properties', 'eventName=screen_view', 'eventName=&limit=3', ['eventName', 'limit']),
  insights('events/property_values', 'eventName=screen_view&propertyKey=__query.utm_source', 'range=7d', ['eventName', 'propertyKey', 'range']),
  insights('profiles', 'limit=1&sortOrder=asc', 'sortOrder=up&limit=0', ['sortOrder', 'limit']),
  profileRoute('', 'eventLimit=2', 'eventLimit=0&range=7d', ['eventLimit', 'range']),
  profileRoute('/sessions', 'limit=1', 'limit=0&range=7d', ['limit', 'range']),
  profileRoute('/metrics', '', 'range=7d&limit=3', ['range', 'limit']),
  insights('sessions', 'limit=1&country=DE', ...LIST_INVALID),
  insights('groups', 'type=company&limit=5', 'limit=0&search=', ['limit', 'search']),
  insights('groups/types', '', 'limit=3&type=x', ['limit', 'type']),
  ['/insights/{projectId}/groups/{groupId}', { url: (project, query = '') => `/insights/${project}/groups/g1?${query}`, valid: 'memberLimit=5', invalid: 'memberLimit=0&limit=1', invalidPaths: ['memberLimit', 'limit'] }],
  insights('funnel', 'steps=screen_view&steps=signup&groupBy=profile_id&windowHours=2', 'steps=a&windowHours=0&groupBy=device', ['steps', 'windowHours', 'groupBy']),
  insights('retention', 'range=30d', 'range=forever&limit=3', ['range', 'limit']),
  insights('retention/cohort', '', 'timezone=Mars%2FBase&interval=week', ['timezone', 'interval']),
  insights('user_flow', 'startEvent=screen_view&steps=3', 'steps=1&mode=sideways', ['startEvent', 'steps', 'mode']),
  insights('active_users', 'days=30', 'days=0&range=forever', ['days', 'range']),
  insights('engagement', '', 'range=7d&days=3', ['range', 'days']),
  exportRoute(
    'charts',
    `series=${encodeURIComponent(JSON.stringify([{ name: 'screen_view' }, { name: '*', segment: 'user' }]))}&breakdowns=${encodeURIComponent('[{"name":"country"}]')}&previous=true`,
    'interval=fortnight&limit=x',
    ['interval', 'limit'],
  ),
  exportRoute('events', 'limit=2&includes=profile', 'limit=x&format=xml', ['limit', 'format']),
])
