/**
 * The listener's shutdown (src/server.ts) with connections the event loop has not accepted yet: a
 * loop kept busy past the backlog grace must still take them in and answer, not reset them with
 * the listening socket. Raw sockets, so that a reset and a 503 are told apart.
 */
import { Hono } from 'hono'
import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import type { QuarryApp } from '../src/app.ts'
import { listen } from '../src/server.ts'

const app = new Hono().get('/ok', (c) => c.json({ ok: true })) as unknown as QuarryApp

/** One request's whole answer as text, or the socket's error code. */
function exchange(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('end', () => resolve(text))
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`))
  })
}

const request = 'GET /ok HTTP/1.1\r\nHost: q.test\r\nConnection: close\r\n\r\n'

/** A connection whose connect() has been issued (the kernel queues it) before this resolves. */
async function queued(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  socket.write(request)
  // net issues the connect call on the next tick; this tick-callback runs after it.
  await new Promise((r) => process.nextTick(r))
  return socket
}

function busyFor(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}

describe('shutdown with connections not yet accepted', () => {
  it('answers a request that was served before shutdown began', async () => {
    const running = await listen(app, '127.0.0.1', 0)
    const socket = connect(running.port, '127.0.0.1')
    const answer = exchange(socket)
    socket.write(request)
    expect(await answer).toMatch(/^HTTP\/1\.1 200 /)
    await running.shutdown(1000)
  })

  it('answers 503 in the error envelope to connections queued while the loop was busy past the grace, and resets none', async () => {
    const running = await listen(app, '127.0.0.1', 0)
    const sockets = await Promise.all(Array.from({ length: 8 }, () => queued(running.port)))
    const answers = sockets.map(exchange)
    const down = running.shutdown(2000)
    // The backlog grace is 50 ms: its timer is overdue when the loop comes back.
    busyFor(150)
    const texts = await Promise.all(answers)
    for (const text of texts) {
      expect(text).toMatch(/^HTTP\/1\.1 503 /)
      expect(text).toMatch(/retry-after: 1/i)
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'overloaded' })
    }
    await down
    // And the listener is closed afterwards.
    const after = exchange(connect(running.port, '127.0.0.1'))
    expect(await after).toMatch(/^error ECONNREFUSED/)
  })
})
