/**
 * docker/: no Docker engine runs these files here, so they are held to the code by reading them:
 * the Dockerfile's stages, user, HOST, port and health check; the compose files' environment
 * (every variable one Quarry reads and accepts), ports, mounted configs, images; the cluster's
 * remote_servers, macros and Keeper ensemble against the services and CLICKHOUSE_CLUSTER.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { KEEP_ALIVE_IDLE_MS } from '../src/clickhouse/engine/http.ts'
import { configSchema } from '../src/config.ts'
import { CLICKHOUSE_IMAGE } from './server/clickhouse.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DOCKER = join(ROOT, 'docker')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>

// ---- a small XML reader for ClickHouse's config files: elements, attributes, text ----

interface XmlNode {
  name: string
  attrs: Record<string, string>
  children: XmlNode[]
  text: string
}

function parseXml(source: string): XmlNode {
  const text = source.replace(/<!--[\s\S]*?-->/g, '').replace(/<\?[\s\S]*?\?>/g, '')
  const root: XmlNode = { name: '#root', attrs: {}, children: [], text: '' }
  const stack = [root]
  const tag = /<(\/?)([\w.-]+)((?:\s+[\w.-]+="[^"]*")*)\s*(\/?)>|([^<]+)/g
  for (const m of text.matchAll(tag)) {
    const top = stack[stack.length - 1]!
    if (m[5] !== undefined) {
      top.text += m[5].trim()
      continue
    }
    const [, closing, name, rawAttrs, selfClosing] = m
    if (closing) {
      expect(top.name, `closing </${name}>`).toBe(name)
      stack.pop()
      continue
    }
    const attrs = Object.fromEntries([...(rawAttrs ?? '').matchAll(/([\w.-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]))
    const node: XmlNode = { name: name!, attrs, children: [], text: '' }
    top.children.push(node)
    if (!selfClosing) stack.push(node)
  }
  expect(stack).toHaveLength(1)
  expect(root.children).toHaveLength(1)
  return root.children[0]!
}

const child = (node: XmlNode | undefined, name: string) => node?.children.find((c) => c.name === name)
const children = (node: XmlNode | undefined, name: string) => node?.children.filter((c) => c.name === name) ?? []
const path = (node: XmlNode | undefined, ...names: string[]) => names.reduce((n, name) => child(n, name), node)

// ---- compose ----

interface Service {
  image?: string
  build?: { context: string; dockerfile: string; args?: Record<string, string> }
  hostname?: string
  environment?: Record<string, string | number>
  ports?: string[]
  volumes?: string[]
  depends_on?: string[] | Record<string, unknown>
  healthcheck?: { test: string[] }
}

interface Compose {
  dir: string
  services: Record<string, Service>
}

function readCompose(file: string): Compose {
  const full = join(DOCKER, file)
  const doc = parseYaml(readFileSync(full, 'utf8'), { merge: true }) as { services: Record<string, Service> }
  return { dir: dirname(full), services: doc.services }
}

/** Host file → container path of a service's bind mounts (relative host paths). */
function mounts(compose: Compose, service: Service): { host: string; container: string }[] {
  return (service.volumes ?? [])
    .filter((v) => v.startsWith('.'))
    .map((v) => {
      const [host, container] = v.split(':')
      return { host: resolve(compose.dir, host!), container: container! }
    })
}

const env = (service: Service): Record<string, string> =>
  Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]))

/** Checks shared by both compose files' Quarry service; returns its parsed configuration. */
function checkQuarry(compose: Compose) {
  const quarry = compose.services.quarry!
  expect(quarry).toBeDefined()
  const vars = env(quarry)
  // Every variable is one Quarry reads, and the set is a valid configuration.
  const known = Object.keys(configSchema.shape)
  expect(Object.keys(vars).filter((k) => !known.includes(k))).toEqual([])
  const config = configSchema.parse(vars)
  // The image is this repository's Dockerfile.
  const context = resolve(compose.dir, quarry.build!.context)
  expect(context).toBe(resolve(ROOT))
  expect(existsSync(join(context, quarry.build!.dockerfile))).toBe(true)
  expect(resolve(context, quarry.build!.dockerfile)).toBe(join(DOCKER, 'Dockerfile'))
  // A server-mode image: without the embedded engine's ~540 MB.
  expect(quarry.build!.args?.QUARRY_EMBEDDED).toBe('0')
  // The published port is the one Quarry listens on.
  expect(quarry.ports?.map((p) => Number(String(p).split(':').at(-1)))).toEqual([config.PORT])
  // It talks to a ClickHouse service of this file, on its HTTP port, with its credentials.
  const url = new URL(config.CLICKHOUSE_URL!)
  const server = compose.services[url.hostname]
  expect(server, `service ${url.hostname}`).toBeDefined()
  expect(Number(url.port)).toBe(8123)
  const serverEnv = env(server!)
  expect(config.CLICKHOUSE_USER).toBe(serverEnv.CLICKHOUSE_USER)
  expect(config.CLICKHOUSE_PASSWORD).toBe(serverEnv.CLICKHOUSE_PASSWORD)
  const dependsOn = Array.isArray(quarry.depends_on) ? quarry.depends_on : Object.keys(quarry.depends_on ?? {})
  expect(dependsOn).toContain(url.hostname)
  // Every ClickHouse server runs the pinned image the server tests use.
  for (const [name, s] of Object.entries(compose.services)) {
    if (s.image?.startsWith('clickhouse/clickhouse-server')) expect(s.image, name).toBe(CLICKHOUSE_IMAGE)
  }
  return { config, server: server! }
}

function checkMounts(compose: Compose) {
  for (const [name, service] of Object.entries(compose.services)) {
    for (const m of mounts(compose, service)) {
      expect(existsSync(m.host) && statSync(m.host).isFile(), `${name}: ${m.host}`).toBe(true)
      if (m.host.endsWith('.xml')) parseXml(readFileSync(m.host, 'utf8'))
    }
  }
}

/** A server's effective keep_alive_timeout (seconds) from its mounted config.d files. */
function keepAliveTimeout(compose: Compose, server: Service): number {
  for (const m of mounts(compose, server)) {
    if (!m.container.startsWith('/etc/clickhouse-server/config.d/')) continue
    const value = child(parseXml(readFileSync(m.host, 'utf8')), 'keep_alive_timeout')?.text
    if (value) return Number(value)
  }
  return 3 // the smallest default the server has had
}

describe('Dockerfile', () => {
  const text = readFileSync(join(DOCKER, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  const lines = text.split('\n').filter((l) => l.trim() && !l.trimStart().startsWith('#'))
  const instructions = (name: string) => lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1).trim())
  const envs = Object.fromEntries(
    instructions('ENV').flatMap((l) => [...l.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map((m) => [m[1]!, m[2]!.replace(/^"|"$/g, '')])),
  )

  it('builds in stages on a glibc Node LTS image (22 or 24; chDB ships *-gnu libraries)', () => {
    const from = instructions('FROM')
    expect(from.length).toBeGreaterThanOrEqual(2)
    for (const f of from) expect(f).toMatch(/^node:(22|24)-(bookworm|trixie)(-slim)?\b/)
    expect(text).toMatch(/COPY --from=\w+ /)
    expect(instructions('RUN').some((r) => r.includes('npm ci') && r.includes('--omit=dev'))).toBe(true)
  })

  it('leaves the embedded engine out of a server-mode build (QUARRY_EMBEDDED=0)', () => {
    expect(instructions('ARG')).toContain('QUARRY_EMBEDDED=1')
    const install = instructions('RUN').find((r) => r.includes('npm ci'))
    expect(install).toMatch(/"\$QUARRY_EMBEDDED" = "0".*--omit=optional/)
    expect(pkg.optionalDependencies).toHaveProperty('chdb')
    expect(pkg.dependencies).not.toHaveProperty('chdb')
  })

  it('runs as an unprivileged user, listening on every interface', () => {
    const user = instructions('USER').at(-1)
    expect(user).toBeDefined()
    expect(user).not.toMatch(/^(root|0)(:|$)/)
    expect(envs.HOST).toBe('0.0.0.0')
    const config = configSchema.parse(envs)
    expect(instructions('EXPOSE')).toEqual([String(config.PORT)])
  })

  it('checks health on /readyz, on the port the environment sets', () => {
    const [check] = instructions('HEALTHCHECK')
    expect(check).toBeDefined()
    expect(check).toContain('/readyz')
    expect(check).toContain('process.env.PORT')
    expect(check).toContain(`|| ${envs.PORT})`)
  })

  it('copies what the service needs and starts it', () => {
    for (const copy of instructions('COPY').filter((c) => !c.startsWith('--from'))) {
      const sources = copy.split(/\s+/).slice(0, -1)
      for (const source of sources) expect(existsSync(join(ROOT, source)), source).toBe(true)
    }
    expect(instructions('CMD').at(-1)).toBe('["node", "bin/quarry.js", "serve"]')
  })
})

describe('docker/compose.yml', () => {
  const compose = readCompose('compose.yml')

  it('runs Quarry against the ClickHouse server of the file, with a valid configuration', () => {
    const { config, server } = checkQuarry(compose)
    expect(config.CLICKHOUSE_CLUSTER).toBeUndefined()
    expect(config.CLICKHOUSE_DATABASE).toBe(env(server).CLICKHOUSE_DB)
  })

  it('mounts config files that exist and parse', () => {
    checkMounts(compose)
  })

  it("keeps the server's keep-alive longer than the client's idle sockets", () => {
    const { server } = checkQuarry(compose)
    expect(keepAliveTimeout(compose, server) * 1000).toBeGreaterThan(KEEP_ALIVE_IDLE_MS)
  })
})

describe('docker/cluster/compose.yml', () => {
  const compose = readCompose('cluster/compose.yml')
  const services = compose.services
  const servers = Object.entries(services).filter(([, s]) => s.image?.startsWith('clickhouse/clickhouse-server'))
  const keepers = Object.entries(services).filter(([, s]) => s.image?.startsWith('clickhouse/clickhouse-keeper'))

  /** The one config.d file every server mounts, parsed, with its values from_env filled per server. */
  const clusterXml = () => {
    const files = new Set(servers.flatMap(([, s]) => mounts(compose, s).map((m) => m.host)))
    expect(files.size).toBe(1)
    return parseXml(readFileSync([...files][0]!, 'utf8'))
  }
  const fromEnv = (node: XmlNode | undefined, vars: Record<string, string>) =>
    node?.attrs.from_env ? vars[node.attrs.from_env] : node?.text

  it('runs Quarry in cluster mode on a cluster the servers define', () => {
    const { config } = checkQuarry(compose)
    const remote = child(clusterXml(), 'remote_servers')
    expect(remote?.attrs.replace).toBe('true')
    expect(remote?.children.map((c) => c.name)).toEqual([config.CLICKHOUSE_CLUSTER])
  })

  it('has 2 shards x 2 replicas, each a server of the file whose macros name its shard and replica', () => {
    const { config } = checkQuarry(compose)
    const cluster = path(clusterXml(), 'remote_servers', config.CLICKHOUSE_CLUSTER!)
    const shards = children(cluster, 'shard')
    expect(shards).toHaveLength(2)
    const macros = child(clusterXml(), 'macros')
    const placed: string[] = []
    shards.forEach((shard, i) => {
      expect(child(shard, 'internal_replication')?.text).toBe('true')
      const replicas = children(shard, 'replica')
      expect(replicas).toHaveLength(2)
      for (const replica of replicas) {
        const host = child(replica, 'host')!.text
        expect(Number(child(replica, 'port')?.text)).toBe(9000)
        const service = services[host]
        expect(service, host).toBeDefined()
        expect(service!.hostname).toBe(host)
        const vars = env(service!)
        expect(fromEnv(child(macros, 'shard'), vars)).toBe(String(i + 1))
        expect(fromEnv(child(macros, 'replica'), vars)).toBe(host)
        placed.push(host)
      }
    })
    expect(placed.sort()).toEqual(servers.map(([name]) => name).sort())
    // The cluster's secret is set on every server.
    const secret = path(clusterXml(), 'remote_servers', config.CLICKHOUSE_CLUSTER!, 'secret')
    for (const [, s] of servers) expect(fromEnv(secret, env(s))).toBeTruthy()
  })

  it('points every server at the three Keeper nodes, whose ensemble lists them all', () => {
    expect(keepers).toHaveLength(3)
    const zookeeper = children(child(clusterXml(), 'zookeeper'), 'node').map((n) => `${child(n, 'host')!.text}:${child(n, 'port')!.text}`)
    const keeperFiles = new Set(keepers.flatMap(([, s]) => mounts(compose, s).map((m) => m.host)))
    expect(keeperFiles.size).toBe(1)
    const keeperMount = mounts(compose, keepers[0]![1])[0]!
    expect(keeperMount.container).toBe('/etc/clickhouse-keeper/keeper_config.xml')
    const keeper = child(parseXml(readFileSync(keeperMount.host, 'utf8')), 'keeper_server')
    const port = child(keeper, 'tcp_port')!.text
    expect(zookeeper.sort()).toEqual(keepers.map(([name]) => `${name}:${port}`).sort())
    const raft = children(child(keeper, 'raft_configuration'), 'server').map((s) => ({
      id: child(s, 'id')!.text,
      host: child(s, 'hostname')!.text,
    }))
    expect(raft.map((r) => r.host).sort()).toEqual(keepers.map(([name]) => name).sort())
    for (const [name, service] of keepers) {
      expect(service.hostname).toBe(name)
      const id = fromEnv(child(keeper, 'server_id'), env(service))
      expect(raft.find((r) => r.host === name)?.id, name).toBe(id)
    }
    for (const [name, service] of servers) {
      expect((service.depends_on as string[]).sort(), name).toEqual(keepers.map(([k]) => k).sort())
    }
    // Keeper runs the release of the servers.
    expect(new Set(keepers.map(([, s]) => s.image!.split(':')[1]))).toEqual(new Set([CLICKHOUSE_IMAGE.split(':')[1]]))
  })

  it('mounts config files that exist and parse, and keeps keep-alive above the client idle TTL', () => {
    checkMounts(compose)
    for (const [name, server] of servers) expect(keepAliveTimeout(compose, server) * 1000, name).toBeGreaterThan(KEEP_ALIVE_IDLE_MS)
  })

  it('waits for every server before Quarry starts', () => {
    const dependsOn = services.quarry!.depends_on as Record<string, { condition: string }>
    expect(Object.keys(dependsOn).sort()).toEqual(servers.map(([name]) => name).sort())
    for (const d of Object.values(dependsOn)) expect(d.condition).toBe('service_healthy')
  })
})
