import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { finished, quarry, startQuarry, waitForStderr } from './helpers/cli.ts'

// A real `quarry serve` process, stopped by a signal while an export streams to a client that
// reads slowly.

const EVENTS = 80_000
const dir = mkdtempSync(join(tmpdir(), 'quarry-shutdown-'))
let credentials: Record<string, string>

/** A port nobody listens on right now: serve with PORT=0 would not say which one it took. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

async function startServer() {
  const port = await freePort()
  const server = startQuarry(dir, ['serve'], { PORT: String(port), LOG_LEVEL: 'info' })
  const exited = finished(server)
  await waitForStderr(server, '"listening"')
  return { server, exited, base: `http://127.0.0.1:${port}` }
}

beforeAll(async () => {
  const seeded = await quarry(dir, ['seed', '--project', 'shop', '--events', String(EVENTS), '--days', '7'])
  expect(seeded.code, seeded.stderr).toBe(0)
  const created = await quarry(dir, ['clients', 'create', '--type', 'read', '--project', 'shop'])
  expect(created.code, created.stderr).toBe(0)
  const client = JSON.parse(created.stdout) as { id: string; secret: string }
  credentials = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('quarry serve on SIGTERM', () => {
  it('finishes the request in flight, refuses new ones, exits 0 within 10 s and releases the data directory', async () => {
    const { server, exited, base } = await startServer()
    const res = await fetch(`${base}/export/events?projectId=shop&format=ndjson`, { headers: credentials })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const first = await reader.read()
    expect(first.done).toBe(false)

    server.kill('SIGTERM')
    const signalled = performance.now()
    // The client holds back; the export cannot finish, so the server must still be waiting for it.
    await sleep(1000)
    expect(server.exitCode).toBeNull()
    await expect(fetch(`${base}/healthz`)).rejects.toThrow()

    const decoder = new TextDecoder()
    let body = decoder.decode(first.value, { stream: true })
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += decoder.decode(chunk.value, { stream: true })
    body += decoder.decode()
    const lines = body.split('\n').filter((line) => line.length > 0)
    expect(lines).toHaveLength(EVENTS)
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ projectId: 'shop' })

    const result = await exited
    expect(result.code).toBe(0)
    expect(performance.now() - signalled).toBeLessThan(10_000)
    expect(result.stderr).toContain('"shutting down"')

    const reopened = await quarry(dir, ['projects', 'list'])
    expect(reopened.code, reopened.stderr).toBe(0)
    expect(reopened.stdout).toContain('"id":"shop"')
  })
})

describe('quarry serve on SIGTERM while background builds run', () => {
  it('ends the builds the first requests started before closing the engine, and exits 0', async () => {
    // A data directory of its own, never served: the first insights requests start its sealed
    // history build. chDB closed under a running build statement aborted the
    // process (SIGSEGV after a libc++ bounds assertion) in about one shutdown of three.
    const fresh = mkdtempSync(join(tmpdir(), 'quarry-shutdown-builds-'))
    try {
      expect((await quarry(fresh, ['seed', '--project', 'shop', '--events', '20000', '--days', '7'])).code).toBe(0)
      const created = await quarry(fresh, ['clients', 'create', '--type', 'read', '--project', 'shop'])
      const client = JSON.parse(created.stdout) as { id: string; secret: string }
      const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
      const port = await freePort()
      const server = startQuarry(fresh, ['serve'], { PORT: String(port), LOG_LEVEL: 'info' })
      const exited = finished(server)
      await waitForStderr(server, '"listening"')
      const statuses = await Promise.all(['metrics', 'pages', 'country'].map(async (route) => (await fetch(`http://127.0.0.1:${port}/insights/shop/${route}?range=30d`, { headers })).status))
      expect(statuses).toEqual([200, 200, 200])
      server.kill('SIGTERM')
      const signalled = performance.now()
      const result = await exited
      expect(result.signal, result.stderr.slice(-2000)).toBeNull()
      expect(result.code, result.stderr.slice(-2000)).toBe(0)
      expect(performance.now() - signalled, result.stderr.slice(-2000)).toBeLessThan(10_000)
      // The builds were started; each either finished before the signal or was stopped by it.
      expect(result.stderr).toMatch(/sealed history (built|build stopped)/)
      expect(result.stderr).not.toContain('build failed')
    } finally {
      rmSync(fresh, { recursive: true, force: true })
    }
  })
})

describe('quarry serve on SIGINT', () => {
  it('exits 0 within the grace period when idle', async () => {
    const { server, exited, base } = await startServer()
    expect((await fetch(`${base}/readyz`)).status).toBe(200)
    server.kill('SIGINT')
    const signalled = performance.now()
    expect((await exited).code).toBe(0)
    expect(performance.now() - signalled).toBeLessThan(10_000)
  })
})

describe('quarry serve, response cache', () => {
  async function twice(env: Record<string, string>) {
    const port = await freePort()
    // No background builds: they are not what is tested here, and on a loaded machine a build in
    // progress made a shutdown outlast the test.
    const server = startQuarry(dir, ['serve'], { PORT: String(port), LOG_LEVEL: 'info', QUARRY_SEALED: '0', ...env })
    const exited = finished(server)
    await waitForStderr(server, '"listening"')
    try {
      // A closed window: its answer cannot change until new events arrive.
      const url = `http://127.0.0.1:${port}/insights/shop/country?startDate=2020-01-01&endDate=2020-12-31`
      const answers = []
      for (let i = 0; i < 2; i++) {
        const res = await fetch(url, { headers: credentials })
        answers.push({ status: res.status, cache: res.headers.get('x-quarry-cache'), body: await res.text() })
      }
      return answers
    } finally {
      server.kill('SIGTERM')
      await exited
    }
  }

  it('is on by default: the second identical request is answered from it, byte for byte', async () => {
    const [first, second] = await twice({})
    expect([first!.status, first!.cache]).toEqual([200, 'miss'])
    expect([second!.status, second!.cache]).toEqual([200, 'hit'])
    expect(second!.body).toBe(first!.body)
  }, 120_000)

  it('is off with QUARRY_RESPONSE_CACHE_MB=0', async () => {
    const answers = await twice({ QUARRY_RESPONSE_CACHE_MB: '0' })
    expect(answers.map((a) => [a.status, a.cache])).toEqual([
      [200, null],
      [200, null],
    ])
  }, 120_000)
})

describe('quarry serve, sealed history', () => {
  /** /pages for 30 days, before and after the build the first request starts (if one is logged within waitMs). */
  async function pagesAround(env: Record<string, string>, waitMs: number) {
    const port = await freePort()
    const server = startQuarry(dir, ['serve'], { PORT: String(port), LOG_LEVEL: 'info', QUARRY_RESPONSE_CACHE_MB: '0', ...env })
    const exited = finished(server)
    await waitForStderr(server, '"listening"')
    const get = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/insights/shop/pages?range=30d&limit=1000`, { headers: credentials })
      return { status: res.status, sealed: res.headers.get('x-quarry-sealed-until'), body: await res.text() }
    }
    try {
      const first = await get()
      const built = await waitForStderr(server, '"sealed history built"', waitMs).then(
        () => true,
        () => false,
      )
      return { first, built, second: await get() }
    } finally {
      server.kill('SIGTERM')
      await exited
    }
  }

  it('is on by default: the first /pages reads the events and starts a build, the next reads the sealed history, with the same rows', async () => {
    const { first, built, second } = await pagesAround({}, 30_000)
    expect([first.status, first.sealed]).toEqual([200, null])
    expect(built).toBe(true)
    expect(second.status).toBe(200)
    expect(second.sealed).not.toBeNull()
    expect(JSON.parse(second.body)).toEqual(JSON.parse(first.body))
  }, 60_000)

  it('is off with QUARRY_SEALED=0', async () => {
    const { first, built, second } = await pagesAround({ QUARRY_SEALED: '0' }, 5_000)
    expect([first.status, first.sealed, built, second.status, second.sealed]).toEqual([200, null, false, 200, null])
    expect(second.body).toBe(first.body)
  }, 60_000)
})
