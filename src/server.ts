import { serve, type ServerType } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import type { QuarryApp } from './app.ts'

export interface RunningServer {
  server: ServerType
  port: number
  /** Stops accepting, waits for in-flight requests up to `graceMs`, then drops what is left. */
  shutdown(graceMs: number): Promise<void>
}

export function listen(app: QuarryApp, host: string, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    // Node refuses request heads over 16 KB with a bare 431; a larger ceiling lets Quarry answer
    // long query strings itself, with a 414 in its error envelope.
    const server = serve({ fetch: app.fetch, hostname: host, port, serverOptions: { maxHeaderSize: 256 * 1024 } }, (info: AddressInfo) => {
      resolve({
        server,
        port: info.port,
        shutdown: (graceMs) =>
          new Promise<void>((done) => {
            const http = server as import('node:http').Server
            const timer = setTimeout(() => {
              http.closeAllConnections()
              done()
            }, graceMs)
            timer.unref()
            http.close(() => {
              clearTimeout(timer)
              done()
            })
            http.closeIdleConnections()
          }),
      })
    })
    server.once('error', reject)
    const http = server as import('node:http').Server
    // Time to receive a request's head, and the whole request: Quarry's requests are GETs without a
    // body, so both are short. Neither bounds the response (Node stops checking once the request is
    // in), so an hour-long export streams on; an hour here would only let a client that trickles a
    // body hold its connection that long.
    http.headersTimeout = 10_000
    http.requestTimeout = 30_000
  })
}
