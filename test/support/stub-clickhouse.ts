/**
 * A stand-in for a ClickHouse server on loopback, for the engine-fault and cancellation tests of
 * the HTTP engine. It can refuse connections (nothing listens), hang (accept, read, never answer),
 * drop (accept, read, close the socket) or serve. Serving, it answers what a real server would for
 * the statements Quarry sends: `KILL QUERY`, `SELECT 1 AS ok` (readiness), a "slow" query that runs
 * until killed or past its max_execution_time, and anything else by handing the statement and its
 * parameters to a real engine (`proxy`, usually an embedded chDB runtime).
 *
 * Like a real server, a running query does not stop because its client went away (ClickHouse only
 * notices a closed connection when it writes, and not at all for readonly queries by default): only
 * KILL QUERY or its time limit end it. `running()` plays the part of `system.processes`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export type StubMode = 'refuse' | 'hang' | 'drop' | 'serve'

export interface StubQuery {
  queryId: string
  sql: string
  /** `param_<name>` values as the client formatted them. */
  params: Record<string, string>
  database: string | null
}

export interface ProxyAnswer {
  status: number
  /** Pieces of an iterable go out as they come, after the headers, as a server streams a result. */
  body: string | AsyncIterable<string>
  headers?: Record<string, string>
}

/** An answer sent whole, as the engine gave it. */
export type TextAnswer = ProxyAnswer & { body: string }

export interface StubOptions {
  /** Serves every statement that is neither KILL, readiness nor slow. */
  proxy?: (q: StubQuery) => Promise<ProxyAnswer>
  /** Statements that run "forever" (until killed or past their max_execution_time). */
  slow?: (q: StubQuery) => boolean
}

interface Running {
  query: StubQuery
  started: number
  finish(outcome: 'killed' | 'timeout'): void
}

const SUMMARY = JSON.stringify({ read_rows: '1', read_bytes: '1', written_rows: '0', written_bytes: '0', total_rows_to_read: '0', result_rows: '1', result_bytes: '0', elapsed_ns: '1000' })

/** A ClickHouse error as the HTTP interface sends it; the client parses code and message from the body. */
export function clickhouseError(code: number, name: string, message: string): TextAnswer {
  return {
    status: 500,
    body: `Code: ${code}. DB::Exception: ${message}. (${name}) (version 26.1.1.1 (official build))\n`,
    headers: { 'X-ClickHouse-Exception-Code': String(code) },
  }
}

export class StubClickHouse {
  #server: Server
  #port = 0
  #mode: StubMode = 'serve'
  readonly #sockets = new Set<Socket>()
  readonly #running = new Map<string, Running>()
  /** Every statement received, in order, whatever the mode. */
  readonly received: StubQuery[] = []
  /** Query ids named by KILL QUERY statements. */
  readonly kills: string[] = []
  /** How each slow query ended. */
  readonly outcomes = new Map<string, 'killed' | 'timeout'>()

  constructor(readonly opts: StubOptions = {}) {
    this.#server = this.#create()
  }

  get port(): number {
    return this.#port
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`
  }

  get mode(): StubMode {
    return this.#mode
  }

  /** The queries the "server" is executing, as system.processes would list them. */
  running(): StubQuery[] {
    return [...this.#running.values()].map((r) => r.query)
  }

  async start(): Promise<this> {
    await this.#listen(0)
    return this
  }

  /** Switches behaviour; 'refuse' stops listening (connections are refused), leaving it listens again on the same port. */
  async setMode(mode: StubMode): Promise<void> {
    if (mode === this.#mode) return
    const wasRefusing = this.#mode === 'refuse'
    this.#mode = mode
    if (mode === 'refuse' || mode === 'drop' || mode === 'hang') this.#dropAll()
    if (mode === 'refuse') {
      await new Promise<void>((resolve) => this.#server.close(() => resolve()))
      this.#server = this.#create()
    } else if (wasRefusing) {
      await this.#listen(this.#port)
    }
  }

  async close(): Promise<void> {
    for (const r of this.#running.values()) r.finish('killed')
    this.#dropAll()
    if (this.#server.listening) await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #dropAll() {
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
  }

  #create(): Server {
    const server = createServer((req, res) => void this.#handle(req, res))
    server.keepAliveTimeout = 10_000
    server.on('connection', (socket) => {
      this.#sockets.add(socket)
      socket.on('close', () => this.#sockets.delete(socket))
      // A hanging or dropping server takes the connection and then misbehaves.
      if (this.#mode === 'drop') socket.once('data', () => socket.destroy())
    })
    return server
  }

  #listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject)
        this.#port = (this.#server.address() as { port: number }).port
        resolve()
      })
    })
  }

  async #handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://stub')
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString()
    const params: Record<string, string> = {}
    for (const [k, v] of url.searchParams) if (k.startsWith('param_')) params[k.slice('param_'.length)] = v
    const query: StubQuery = {
      queryId: url.searchParams.get('query_id') ?? '',
      sql: [url.searchParams.get('query'), body].filter(Boolean).join('\n'),
      params,
      database: url.searchParams.get('database'),
    }
    this.received.push(query)
    if (this.#mode === 'hang') return // never answers; the socket stays open until someone closes it
    if (this.#mode !== 'serve') {
      req.socket.destroy()
      return
    }
    const send = (a: ProxyAnswer) => {
      if (res.destroyed || res.headersSent) return
      res.writeHead(a.status, {
        'Content-Type': 'text/plain; charset=UTF-8',
        'X-ClickHouse-Query-Id': query.queryId,
        'X-ClickHouse-Summary': SUMMARY,
        ...a.headers,
      })
      if (typeof a.body === 'string') res.end(a.body)
      else void streamBody(res, a.body)
    }

    if (/^\s*KILL\s+QUERY/i.test(query.sql)) {
      const id = params.id ?? /query_id\s*=\s*'([^']+)'/.exec(query.sql)?.[1] ?? ''
      this.kills.push(id)
      this.#running.get(id)?.finish('killed')
      send({ status: 200, body: '' })
      return
    }
    if (/^\s*SELECT 1 AS ok\b/.test(query.sql)) {
      send({ status: 200, body: '{"ok":1}\n' })
      return
    }
    if (this.opts.slow?.(query)) {
      const limitS = Number(/max_execution_time = ([\d.]+)/.exec(query.sql)?.[1] ?? 3600)
      const started = Date.now()
      const timer = setTimeout(() => entry.finish('timeout'), limitS * 1000)
      const entry: Running = {
        query,
        started,
        finish: (outcome) => {
          if (!this.#running.has(query.queryId)) return
          clearTimeout(timer)
          this.#running.delete(query.queryId)
          this.outcomes.set(query.queryId, outcome)
          if (outcome === 'killed') send(clickhouseError(394, 'QUERY_WAS_CANCELLED', 'Query was cancelled'))
          else send(clickhouseError(159, 'TIMEOUT_EXCEEDED', `Timeout exceeded: elapsed ${limitS} seconds, maximum: ${limitS}`))
        },
      }
      this.#running.set(query.queryId, entry)
      return
    }
    if (this.opts.proxy) {
      send(await this.opts.proxy(query).catch((err: Error) => clickhouseError(1001, 'STD_EXCEPTION', err.message)))
      return
    }
    send(clickhouseError(60, 'UNKNOWN_TABLE', 'the stub serves no tables'))
  }
}

async function streamBody(res: ServerResponse, pieces: AsyncIterable<string>) {
  res.flushHeaders()
  for await (const piece of pieces) {
    if (res.destroyed) return
    res.write(piece)
  }
  res.end()
}

/**
 * Serves statements from a real engine: the SQL and the client-formatted parameters go to `exec`
 * unchanged (chDB binds a string parameter's text as the server would parse it).
 */
export function proxyTo(exec: (sql: string, params: Record<string, string>) => Promise<string>) {
  return async (q: StubQuery): Promise<TextAnswer> => {
    try {
      return { status: 200, body: await exec(q.sql, q.params) }
    } catch (err) {
      const e = err as { code?: string; type?: string; message?: string }
      return clickhouseError(Number(e.code ?? 1001) || 1001, e.type ?? 'STD_EXCEPTION', e.message ?? String(err))
    }
  }
}
