// A minimal keep-alive HTTP GET over node:http, shared by the in-process latency loop and the
// load worker: no client library between the measurement and the socket.
import http from 'node:http'

export function agent(sockets) {
  return new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets })
}

/** GET url; resolves once the whole body is read. Never rejects: errors come back as status 0. */
export function get(url, headers, keepAliveAgent) {
  const started = performance.now()
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'GET', headers, agent: keepAliveAgent }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const body = Buffer.concat(chunks)
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - started })
      })
      res.on('error', (err) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), ms: performance.now() - started, error: String(err) }))
    })
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), ms: performance.now() - started, error: String(err) }))
    req.end()
  })
}
