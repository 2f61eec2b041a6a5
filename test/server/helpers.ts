/**
 * Runtimes on the ClickHouse server of the global setup, one database per suite, and the Insights
 * fixture loaded into one, with a client that sends real requests through the real app.
 */
import { randomBytes } from 'node:crypto'
import { createClient } from '@clickhouse/client'
import { describe, inject } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { createLogger } from '../../src/log.ts'
import { createProject } from '../../src/projects.ts'
import { openRuntime, type Runtime } from '../../src/runtime.ts'
import { buildEvents, NOW, PROJECTS } from '../fixtures/insights-data.ts'
import { insertInBlocks, queryString, requestAs, type Query, type Reply } from '../fixtures/insights-harness.ts'
import { Dataset } from '../fixtures/insights-model.ts'
import { testApp, testConfig } from '../helpers/runtime.ts'
import type { ServerInfo } from './clickhouse.ts'

export const server: ServerInfo | null = inject('clickhouse')

/** A describe that runs only when the global setup started a server. */
export const describeServer = describe.skipIf(!server)

export interface ServerRuntime extends Runtime {
  database: string
  /** Closes the runtime and drops its database. */
  dispose(): Promise<void>
}

export function serverConfig(database: string, overrides: Record<string, string> = {}) {
  return testConfig({
    CLICKHOUSE_URL: server!.url,
    CLICKHOUSE_USER: server!.user,
    CLICKHOUSE_PASSWORD: server!.password,
    CLICKHOUSE_DATABASE: database,
    ...overrides,
  })
}

export async function dropDatabase(database: string): Promise<void> {
  const admin = createClient({ url: server!.url, username: server!.user, password: server!.password })
  try {
    await admin.command({ query: `DROP DATABASE IF EXISTS ${database} SYNC` })
  } finally {
    await admin.close()
  }
}

/** A migrated runtime over HTTP on a fresh database named after the suite. */
export async function openServerRuntime(suite: string, overrides: Record<string, string> = {}): Promise<ServerRuntime> {
  const database = `quarry_${suite}_${randomBytes(4).toString('hex')}`
  const config = serverConfig(database, overrides)
  const rt = await openRuntime(config, createLogger(config.LOG_LEVEL))
  return {
    ...rt,
    database,
    async dispose() {
      await rt.close()
      await dropDatabase(database)
    },
  }
}

export interface ServerInsights {
  rt: ServerRuntime
  data: Dataset
  get<T = any>(project: string, route: string, query?: Query): Promise<Reply<T>>
  fetch<T = any>(url: string): Promise<Reply<T>>
  dispose(): Promise<void>
}

/** The Insights fixture on the server, read by org-1's root client on the fixture's pinned clock. */
export async function openServerInsights(suite: string): Promise<ServerInsights> {
  const rt = await openServerRuntime(suite, { QUARRY_RATE_LIMIT: '1000000', QUARRY_AUTH_FAILURE_LIMIT: '1000000' })
  try {
    for (const p of Object.values(PROJECTS)) {
      await createProject(rt.runner, { id: p.id, name: p.id, timezone: p.timezone, organizationId: p.organizationId })
    }
    const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-1' })
    const events = buildEvents()
    await insertInBlocks(rt.engine.client, events)
    const app = testApp(rt, { now: () => NOW })
    const fetch = (url: string): Promise<Reply> => requestAs(app, url, root)
    return {
      rt,
      data: new Dataset(events),
      fetch,
      get: (project, route, query) => {
        const qs = queryString(query)
        return fetch(`http://quarry.test/insights/${project}/${route}${qs ? `?${qs}` : ''}`)
      },
      dispose: () => rt.dispose(),
    }
  } catch (err) {
    await rt.dispose()
    throw err
  }
}
