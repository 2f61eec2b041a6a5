import type { Context } from 'hono'
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Logger } from 'pino'
import type { AppEnv } from '../app-env.ts'
import { concatArrowStream } from './arrow-concat.ts'
import { encoded, negotiateCoding } from './content-coding.ts'
import { concatParquet } from './parquet-concat.ts'

export interface StreamedExport {
  /** Starts the engine's stream; `signal` aborts it when the client goes away. */
  open(signal: AbortSignal): AsyncIterable<Uint8Array>
  /** Bytes written once before the engine's (a header row the engine cannot write once). */
  prefix?: Uint8Array
  contentType: string
  filename: string
  /** Headers of the response once it streams (an error before the first chunk carries none of them). */
  headers?: Record<string, string>
  /** What the log line calls the stream. */
  format: string
  /** A binary format whose per-block chunks must be joined into one file (see export-formats.ts). */
  blocks?: 'parquet' | 'arrow'
  /** Compressed (zstd or gzip) when the client takes it: text formats only. */
  compressible: boolean
  logger: Logger
}

/**
 * A streamed export as a response, in the bytes the engine writes. The body pulls one chunk per
 * read, so a slow client slows the query down instead of filling memory; a client that goes away
 * cancels it. The first chunk decides the status: a refusal (busy, bad query) is still a JSON error.
 */
export async function streamResponse(c: Context<AppEnv>, out: StreamedExport): Promise<Response> {
  const abort = new AbortController()
  const requestSignal = c.req.raw.signal
  const onClientGone = () => abort.abort(new Error('the client went away'))
  requestSignal.addEventListener('abort', onClientGone, { once: true })
  const detach = () => requestSignal.removeEventListener('abort', onClientGone)

  const engine = out.open(abort.signal)
  const joined = out.blocks === 'parquet' ? concatParquet(engine) : out.blocks === 'arrow' ? concatArrowStream(engine) : engine
  const chunks = joined[Symbol.asyncIterator]()
  let first: IteratorResult<Uint8Array>
  try {
    first = await chunks.next()
  } catch (err) {
    detach()
    throw err
  }
  let bytes = 0
  let lines = 0
  // JSONEachRow escapes newlines inside values: each one ends a row. Other formats count bytes only.
  const byLine = out.format === 'ndjson'
  async function* raw() {
    try {
      if (out.prefix) yield out.prefix
      for (let next = first; !next.done; next = await chunks.next()) {
        bytes += next.value.byteLength
        if (byLine) lines += newlines(next.value)
        yield next.value
      }
    } finally {
      await chunks.return?.()
    }
  }
  const coding = out.compressible ? negotiateCoding(c.req.header('accept-encoding')) : undefined
  const source = coding ? encoded(coding, raw()) : raw()

  let settled = false
  const started = performance.now()
  const requestId = c.get('requestId')
  const finish = (outcome: 'complete' | 'cancelled' | 'failed', err?: unknown) => {
    if (settled) return
    settled = true
    detach()
    const metrics = c.get('metrics')
    metrics?.exportBytes.inc({ format: out.format }, bytes)
    if (byLine) metrics?.exportRows.inc({ format: out.format }, lines)
    out.logger[outcome === 'failed' ? 'warn' : 'info'](
      { requestId, format: out.format, coding, outcome, bytes, ms: Math.round(performance.now() - started), ...(err ? { err: String(err) } : {}) },
      'export stream',
    )
  }

  const body = new ReadableStream<Uint8Array>(
    {
      // Bound to the request's context: the server pulls from its own, and the log lines and spans
      // of the stream's end belong to the request.
      pull: AsyncLocalStorage.bind(async (controller: ReadableStreamDefaultController<Uint8Array>) => {
        try {
          const next = await source.next()
          if (next.done) {
            controller.close()
            finish('complete')
          } else {
            controller.enqueue(next.value)
          }
        } catch (err) {
          // After a disconnect the engine reports the abort as an error: that is a cancel.
          finish(abort.signal.aborted ? 'cancelled' : 'failed', err)
          // Headers are gone: the only signal left is an unfinished response.
          controller.error(err)
        }
      }),
      cancel: AsyncLocalStorage.bind(async () => {
        abort.abort(new Error('the client went away'))
        try {
          await source.return(undefined)
        } catch {
          // The stream is over either way.
        }
        finish('cancelled')
      }),
    },
    { highWaterMark: 1 },
  )

  return c.body(body, 200, { ...attachmentHeaders(out), ...(coding ? { 'Content-Encoding': coding } : {}) })
}

const NEWLINE = 0x0a

function newlines(chunk: Uint8Array): number {
  let n = 0
  for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) n++
  return n
}

/** The headers of a streamed export, also what HEAD answers. */
export function attachmentHeaders(out: Pick<StreamedExport, 'headers' | 'contentType' | 'filename' | 'compressible'>): Record<string, string> {
  return {
    ...out.headers,
    'Content-Type': out.contentType,
    'Content-Disposition': `attachment; filename="${out.filename}"`,
    // no-transform: the app's compression middleware must leave the stream alone (its
    // CompressionStream queues thousands of chunks ahead); it is compressed here when accepted.
    'Cache-Control': 'no-store, no-transform',
    ...(out.compressible ? { Vary: 'Accept-Encoding' } : {}),
    'X-Content-Type-Options': 'nosniff',
  }
}
