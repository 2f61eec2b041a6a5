import { serve, type ServerType } from '@hono/node-server'
import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import type { QuarryApp } from './app.ts'
import { ApiError, errorBody } from './http/errors.ts'

export interface RunningServer {
  server: ServerType
  port: number
  /** Stops accepting, waits for in-flight requests up to `graceMs`, then drops what is left. */
  shutdown(graceMs: number): Promise<void>
}

/**
 * How long a connection accepted before shutdown may take to deliver its first request. Its bytes
 * may already be in the socket, unread while the event loop is busy: Node's own close() would count
 * such a connection idle and reset it, cutting a request the client sent before the signal.
 */
const FIRST_REQUEST_GRACE_MS = 2000

/** How long the listening socket stays open after the signal, for connections already queued. */
const BACKLOG_GRACE_MS = 50

/** The answer to a request that arrives once shutdown has begun: on a kept-alive connection, or on one accepted since. */
function shuttingDown(): Response {
  const requestId = randomUUID()
  const err = new ApiError(503, 'overloaded', 'Quarry is shutting down; retry shortly')
  return new Response(JSON.stringify(errorBody(err, requestId)), {
    status: 503,
    headers: { 'Content-Type': 'application/json', 'Retry-After': '1', 'X-Request-Id': requestId, Connection: 'close' },
  })
}

export function listen(app: QuarryApp, host: string, port: number): Promise<RunningServer> {
  /*
   * After a full collection V8 leaves the old generation room for the live heap times a factor it
   * derives from the recent allocation rate: after a quiet spell, or during an export, the live heap
   * plus 8 MB. It counts external memory allocated since that collection against the same room, and a
   * streamed export allocates its whole body as external memory (chDB hands every block to JavaScript
   * as a new Buffer), freed only by the young collections, every 32 MB. So an export that began in that
   * state ran a full collection of the whole heap every 32 MB of body, about 75 of them per 10M Arrow
   * rows: 0.3-0.6 µs more CPU per row, the slow half of runs that were otherwise the same. Room of twice
   * the live heap (a fixed factor of 3, inside the 1.1-4 V8 picks by itself) holds those 32 MB for any
   * heap past the 16 MB under which V8 does not start marking at all. Read at every collection, so it
   * takes effect when set at run time. Figures: benchmarks/README.md, Arrow's slow runs were garbage
   * collections.
   */
  setFlagsFromString('--heap-growing-percent=200')
  return new Promise((resolve, reject) => {
    let draining = false
    /** Responses not yet finished, so that shutdown can close their connections once they are. */
    const open = new Set<ServerResponse>()
    /** Connections with no request in progress: answered ones kept alive, and new ones not yet read. */
    const waiting = new Set<Socket>()
    /** Connections that have already been answered once: a request on one of them is a new request. */
    const reused = new WeakSet<object>()
    /** Connections accepted once shutdown had begun: taken from the backlog to be answered, not reset. */
    const late = new WeakSet<object>()
    // Once draining, a request on a kept-alive connection is a new one and is refused; so is one on a
    // connection accepted since, which a loaded machine may have queued after the signal as well as
    // before it (a 503 either way tells the client to retry). The first request of a connection
    // accepted before the signal was sent before it, and is served.
    const fetch: typeof app.fetch = (request, env, ...rest) => {
      const socket = (env as { incoming?: { socket?: object } } | undefined)?.incoming?.socket
      return draining && socket && (reused.has(socket) || late.has(socket)) ? shuttingDown() : app.fetch(request, env, ...rest)
    }
    // Node refuses request heads over 16 KB with a bare 431; a larger ceiling lets Quarry answer
    // long query strings itself, with a 414 in its error envelope.
    const server = serve({ fetch, hostname: host, port, serverOptions: { maxHeaderSize: 256 * 1024 } }, (info: AddressInfo) => {
      resolve({
        server,
        port: info.port,
        shutdown: (graceMs) =>
          new Promise<void>((done) => {
            const http = server as import('node:http').Server
            // No new connections (close), no new requests on kept-alive ones (503), and each
            // connection closes after the response in flight on it, so that close() resolves as
            // soon as the last one is done rather than when the grace period runs out.
            draining = true
            for (const res of open) {
              if (!res.headersSent) res.shouldKeepAlive = false
              else res.once('finish', () => res.socket?.end())
            }
            const timer = setTimeout(() => {
              http.closeAllConnections()
              done()
            }, graceMs)
            timer.unref()
            // net's close, not http's: it stops accepting without resetting the connections that
            // have not been read yet (see FIRST_REQUEST_GRACE_MS); it calls back once all are closed.
            // Not at once: connections the kernel has queued but the busy event loop has not
            // accepted yet would be reset with the listening socket. Each poll phase takes in one
            // of them (as measured on Node 20), and one runs between a timer and an immediate, so
            // the listener closes after the first turn of the loop that accepted none. A timer
            // alone, overdue once the loop had been busy, closed it before any (requests sent
            // before the signal reset under load); the grace's timer bounds a steady stream.
            const closeOnceDrained = (seen: number) =>
              setImmediate(() => {
                if (accepted !== seen) return void closeOnceDrained(accepted)
                NetServer.prototype.close.call(http, () => {
                  clearTimeout(timer)
                  done()
                })
              })
            setTimeout(() => closeOnceDrained(accepted), BACKLOG_GRACE_MS).unref()
            // Kept-alive connections already answered are closed now; new ones once their first
            // request is answered, or when they have sent none within the grace.
            for (const socket of waiting) if (reused.has(socket)) socket.destroy()
            const unread = setTimeout(() => {
              for (const socket of waiting) socket.destroy()
            }, FIRST_REQUEST_GRACE_MS)
            unread.unref()
          }),
      })
    })
    server.once('error', reject)
    const http = server as import('node:http').Server
    /** Connections accepted so far: shutdown closes the listener once a turn of the loop adds none. */
    let accepted = 0
    http.on('connection', (socket: Socket) => {
      accepted++
      if (draining) late.add(socket)
      waiting.add(socket)
      socket.once('close', () => waiting.delete(socket))
    })
    http.on('request', (req, res: ServerResponse) => {
      if (draining) res.shouldKeepAlive = false
      waiting.delete(req.socket)
      open.add(res)
      res.once('close', () => {
        open.delete(res)
        if (!req.socket.destroyed) waiting.add(req.socket)
      })
      res.once('finish', () => reused.add(req.socket))
    })
    // Time to receive a request's head, and the whole request: Quarry's requests are GETs without a
    // body, so both are short. Neither bounds the response (Node stops checking once the request is
    // in), so an hour-long export streams on; an hour here would only let a client that trickles a
    // body hold its connection that long.
    http.headersTimeout = 10_000
    http.requestTimeout = 30_000
  })
}
