import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { finished, quarry, startQuarry, waitForStderr } from './helpers/cli.ts'

// Every command runs as `node bin/quarry.js …` in a process of its own, as a user would run it.

const dir = mkdtempSync(join(tmpdir(), 'quarry-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('bad arguments', () => {
  // These fail before the engine opens, so they can run side by side.
  it.concurrent.for([
    ['no command', [], 'missing command'],
    ['an unknown command', ['frobnicate'], 'unknown command: frobnicate'],
    ['seed without --project', ['seed', '--events', '10'], 'seed needs --project'],
    ['a non-numeric --events', ['seed', '--project', 'p', '--events', 'many'], '--events must be a positive integer'],
    ['a zero --events', ['seed', '--project', 'p', '--events', '0'], '--events must be a positive integer'],
    ['an unparseable --end', ['seed', '--project', 'p', '--end', 'yesterday'], '--end must be an ISO 8601 date-time'],
    ['an invalid timezone', ['projects', 'create', 'x', '--timezone', 'Mars/Olympus_Mons'], 'invalid timezone "Mars/Olympus_Mons"'],
    ['an invalid project id', ['projects', 'create', 'no spaces'], 'invalid project id'],
    ['an unknown option', ['projects', 'list', '--verbose'], "Unknown option '--verbose'"],
    ['an unknown client type', ['clients', 'create', '--type', 'admin', '--project', 'p'], '--type must be read, write or root'],
    ['a read client without --project', ['clients', 'create', '--type', 'read'], 'a read client needs --project'],
    ['revoke without an id', ['clients', 'revoke'], 'clients revoke needs a client id'],
  ] as const)('%s: exit 2, what is wrong and the usage on stderr', async ([, args, message], { expect }) => {
    const result = await quarry(dir, [...args])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stderr).toContain('Usage: quarry <command>')
    expect(result.stdout).toBe('')
  })

  it('help prints the usage on stdout and exits 0', async () => {
    const result = await quarry(dir, ['help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Usage: quarry <command>')
  })
})

describe('projects and clients', () => {
  const secrets: string[] = []
  let readClient: Record<string, unknown>

  it('migrate reports nothing left to apply once the schema is there', async () => {
    const first = await quarry(dir, ['migrate'])
    expect(first.code).toBe(0)
    const second = await quarry(dir, ['migrate'])
    expect(second.code).toBe(0)
    expect(jsonLines(second.stdout)).toEqual([{ applied: [] }])
  })

  it('projects create prints the project; creating it again fails', async () => {
    const created = await quarry(dir, ['projects', 'create', 'shop', '--name', 'The Shop', '--timezone', 'Europe/Stockholm', '--organization', 'acme'])
    expect(created.code).toBe(0)
    expect(jsonLines(created.stdout)).toEqual([{ id: 'shop', name: 'The Shop', timezone: 'Europe/Stockholm', organizationId: 'acme' }])
    const again = await quarry(dir, ['projects', 'create', 'shop'])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('project shop already exists')
  })

  it('projects create defaults to UTC and the default organization; projects list shows both', async () => {
    expect((await quarry(dir, ['projects', 'create', 'blog'])).code).toBe(0)
    const list = await quarry(dir, ['projects', 'list'])
    expect(list.code).toBe(0)
    expect(jsonLines(list.stdout)).toEqual([
      expect.objectContaining({ id: 'blog', name: 'blog', timezone: 'UTC', organization_id: 'default' }),
      expect.objectContaining({ id: 'shop', name: 'The Shop', timezone: 'Europe/Stockholm', organization_id: 'acme' }),
    ])
  })

  it.each([
    ['read', ['--project', 'shop'], 'shop'],
    ['write', ['--project', 'shop'], 'shop'],
    ['root', ['--organization', 'acme'], null],
  ])('clients create --type %s prints exactly one JSON line with the secret', async (type, extra, projectId) => {
    const result = await quarry(dir, ['clients', 'create', '--type', type, ...extra, '--name', `${type} client`])
    expect(result.code).toBe(0)
    const lines = jsonLines(result.stdout)
    expect(lines).toHaveLength(1)
    const client = lines[0]!
    expect(Object.keys(client).sort()).toEqual(['id', 'organizationId', 'projectId', 'secret', 'type'])
    expect(client).toEqual({ id: expect.stringMatching(UUID), secret: expect.stringMatching(/^\S{16,}$/), type, projectId, organizationId: 'acme' })
    // The explorer's sign-in link goes to stderr, for clients that can read.
    const link = `Explorer (this link signs in): http://127.0.0.1:3000/${projectId ? `?project=${projectId}` : ''}#client=${client.id}:${client.secret}`
    if (type === 'write') expect(result.stderr).not.toContain('Explorer')
    else expect(result.stderr).toContain(link)
    secrets.push(client.secret as string)
    if (type === 'read') readClient = client
  })

  it.each(['read', 'write'])('a %s client for a project that does not exist is refused with exit 1', async (type) => {
    const result = await quarry(dir, ['clients', 'create', '--type', type, '--project', 'nope'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('no project nope')
    expect(result.stdout).toBe('')
  })

  it('clients list shows every client and never a secret or its hash', async () => {
    const result = await quarry(dir, ['clients', 'list'])
    expect(result.code).toBe(0)
    const clients = jsonLines(result.stdout)
    expect(clients.map((c) => c.type).sort()).toEqual(['read', 'root', 'write'])
    expect(clients.find((c) => c.id === readClient.id)).toMatchObject({ project_id: 'shop', organization_id: 'acme', revoked_at: null })
    for (const client of clients) {
      for (const key of Object.keys(client)) expect(key).not.toMatch(/secret|hash/i)
    }
    for (const secret of secrets) expect(result.stdout).not.toContain(secret)
    // A stored hash has the form <salt hex>.<key hex>.
    expect(result.stdout).not.toMatch(/[0-9a-f]{32}\.[0-9a-f]{64}/)
  })

  it('clients revoke marks the client revoked; an unknown id is an error', async () => {
    const revoked = await quarry(dir, ['clients', 'revoke', readClient.id as string])
    expect(revoked.code).toBe(0)
    expect(jsonLines(revoked.stdout)).toEqual([{ id: readClient.id, revoked: true }])
    const list = jsonLines((await quarry(dir, ['clients', 'list'])).stdout)
    expect(list.find((c) => c.id === readClient.id)?.revoked_at).toEqual(expect.any(String))
    expect(list.filter((c) => c.revoked_at !== null)).toHaveLength(1)
    const unknown = await quarry(dir, ['clients', 'revoke', '00000000-0000-4000-8000-000000000000'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no client 00000000-0000-4000-8000-000000000000')
  })

  it('seed creates a missing project and prints what it inserted', async () => {
    const result = await quarry(dir, ['seed', '--project', 'demo2', '--events', '500', '--days', '3', '--end', '2026-01-01T00:00:00Z'])
    expect(result.code).toBe(0)
    expect(jsonLines(result.stdout)).toEqual([{ project: 'demo2', events: 500, seconds: expect.any(Number) }])
    const again = await quarry(dir, ['seed', '--project', 'demo2', '--events', '500', '--days', '3', '--end', '2026-01-01T00:00:00Z'])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already holds the events of seed 1')
    const projects = jsonLines((await quarry(dir, ['projects', 'list'])).stdout)
    expect(projects.find((p) => p.id === 'demo2')).toMatchObject({ timezone: 'UTC', organization_id: 'default' })
  })
})

describe('a data directory held by a running server', () => {
  it('makes other commands say so and exit 1', async () => {
    const server = startQuarry(dir, ['serve'], { PORT: '0', LOG_LEVEL: 'info' })
    const exited = finished(server)
    try {
      await waitForStderr(server, '"listening"')
      for (const args of [['projects', 'list'], ['seed', '--project', 'shop', '--events', '10']]) {
        const result = await quarry(dir, args)
        expect(result.code).toBe(1)
        expect(result.stderr).toBe(
          `quarry: the data directory ${dir} is locked by another process (is a Quarry server running on it?); ` +
            'stop that process or point QUARRY_DATA_DIR elsewhere\n',
        )
        expect(result.stdout).toBe('')
      }
    } finally {
      server.kill('SIGTERM')
    }
    expect((await exited).code).toBe(0)
  })
})
