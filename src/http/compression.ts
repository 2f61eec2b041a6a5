import { gzipSync } from 'node:zlib'
import { compress, COMPRESSIBLE_CONTENT_TYPE_REGEX } from 'hono/compress'
import { createMiddleware } from 'hono/factory'
import { acceptsCoding } from './content-coding.ts'

/** Bodies of this many bytes or more go compressed to a client that accepts it. */
const THRESHOLD = 1024

const JSON_TYPE = /^application\/json/i
/** What hono's compress() can choose from: without one of these accepted, it never compresses. */
const CODINGS = ['gzip', 'deflate']

/**
 * gzip (or deflate) for responses of `threshold` bytes or more when the client accepts it.
 * hono's compress() can only apply its threshold to a response with Content-Length, which c.json()
 * does not set; JSON bodies are whole strings in memory already, so their length is measured here.
 * Streamed exports keep their unknown length and are compressed whenever accepted.
 *
 * Nothing is done for a client that accepts no coding: reading a body's length turns the node
 * server's own response, written straight from its string, into a web stream read back (a cache
 * hit cost twice the CPU of /healthz through the socket, 45 % of its throughput at c=32).
 */
export function compressLarge(threshold = THRESHOLD) {
  const gzip = compress({ threshold })
  return createMiddleware(async (c, next) => {
    if (!acceptsCoding(c.req.header('Accept-Encoding'), ...CODINGS)) return next()
    return gzip(c, async () => {
      await next()
      const res = c.res
      if (res.headers.has('Content-Length') || !JSON_TYPE.test(res.headers.get('Content-Type') ?? '') || !res.body) return
      const bytes = new Uint8Array(await res.arrayBuffer())
      const headers = new Headers(res.headers)
      headers.set('Content-Length', String(bytes.byteLength))
      c.res = undefined
      c.res = new Response(bytes, { status: res.status, statusText: res.statusText, headers })
    })
  })
}

/**
 * A kept body gzipped once, for the replays to clients that accept gzip, where compressLarge would
 * gzip it for each of them (a cache hit's CPU 2.4x with it); undefined where it would not.
 */
export function gzipOnce(contentType: string | null, body: Uint8Array): Uint8Array<ArrayBuffer> | undefined {
  if (body.byteLength < THRESHOLD || !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(contentType ?? '')) return undefined
  return gzipSync(body)
}
