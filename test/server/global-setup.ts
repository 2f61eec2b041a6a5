/**
 * Starts one ClickHouse server for every server suite (each suite uses a database of its own),
 * or, without a Docker engine, says so in one line and lets the suites skip.
 */
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers'
import type { TestProject } from 'vitest/node'
import { CLICKHOUSE_IMAGE, dockerUnavailable, PASSWORD, skipLine, USER, type ServerInfo } from './clickhouse.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    clickhouse: ServerInfo | null
  }
}

let container: StartedTestContainer | undefined

export async function setup(project: TestProject) {
  const reason = await dockerUnavailable()
  if (reason) {
    console.log(skipLine(reason))
    project.provide('clickhouse', null)
    return
  }
  container = await new GenericContainer(CLICKHOUSE_IMAGE)
    .withEnvironment({ CLICKHOUSE_USER: USER, CLICKHOUSE_PASSWORD: PASSWORD, CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT: '1' })
    .withExposedPorts(8123)
    .withUlimits({ nofile: { soft: 262144, hard: 262144 } })
    .withWaitStrategy(Wait.forHttp('/ping', 8123).forStatusCode(200))
    .withStartupTimeout(120_000)
    .start()
  project.provide('clickhouse', {
    url: `http://${container.getHost()}:${container.getMappedPort(8123)}`,
    user: USER,
    password: PASSWORD,
  })
}

export async function teardown() {
  await container?.stop()
}
