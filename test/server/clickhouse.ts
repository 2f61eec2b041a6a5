/**
 * The ClickHouse server the server suites run against, and how to tell whether they can run.
 * The image is the one docker/compose.yml pins (test/docker.test.ts holds them together).
 */
import { getContainerRuntimeClient } from 'testcontainers'

export const CLICKHOUSE_IMAGE = 'clickhouse/clickhouse-server:26.3.33.24'

export interface ServerInfo {
  url: string
  user: string
  password: string
}

export const USER = 'quarry'
export const PASSWORD = 'quarry-test'

/** Why no container can be started here, or undefined when a Docker engine answers. */
export async function dockerUnavailable(): Promise<string | undefined> {
  try {
    const client = await getContainerRuntimeClient()
    await client.info
    return undefined
  } catch (err) {
    return String((err as Error)?.message ?? err).split('\n')[0]
  }
}

export const skipLine = (reason: string) =>
  `test:server skipped: no Docker engine reachable (${reason}); start Docker (or set DOCKER_HOST) to run the ClickHouse server suites`
