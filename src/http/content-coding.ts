import { compress as zstdCompress } from '@mongodb-js/zstd'
import { createGzip } from 'node:zlib'

/** The codings a streamed text export is sent in, the preferred first when a client rates them alike. */
const CODINGS = ['zstd', 'gzip'] as const
export type StreamCoding = (typeof CODINGS)[number]

/**
 * The coding of a streamed text export for an Accept-Encoding header: the one the client rates
 * highest (q > 0, by name or through *), zstd on a tie (smaller and no slower: on an export's CSV
 * blocks 4.1x at 59 MB/s against gzip's 3.8x at 53, benchmarks/experiments/text-codings.ts; 1.27x
 * gzip's rows/s end to end); none when it names neither.
 */
export function negotiateCoding(header: string | undefined): StreamCoding | undefined {
  if (!header) return undefined
  const rated = ratings(header)
  let best: StreamCoding | undefined
  let bestQ = 0
  for (const coding of CODINGS) {
    const q = qualityOf(rated, coding)
    if (q > bestQ) [best, bestQ] = [coding, q]
  }
  return best
}

/** Whether an Accept-Encoding header takes one of `codings` (q > 0, by name or through *). */
export function acceptsCoding(header: string | undefined, ...codings: string[]): boolean {
  if (!header) return false
  const rated = ratings(header)
  return codings.some((coding) => qualityOf(rated, coding) > 0)
}

/** Each coding an Accept-Encoding header names, with its q (1 when not given). */
function ratings(header: string): Map<string, number> {
  const rated = new Map<string, number>()
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    rated.set(name.trim() === 'x-gzip' ? 'gzip' : name.trim(), Number.isFinite(q) ? q : 0)
  }
  return rated
}

const qualityOf = (rated: Map<string, number>, coding: string) => rated.get(coding) ?? rated.get('*') ?? 0

/** The source in `coding`: each chunk compressed before the next is asked for, so memory stays one chunk deep. */
export const encoded = (coding: StreamCoding, source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> =>
  coding === 'zstd' ? zstdFrames(source) : gzipped(source)

/**
 * One zstd frame per chunk, at the binding's default level (3; it takes no other): a zstd stream
 * may be several frames, which every decoder reads as one. The chunks are blocks of 8192 rows, a
 * few MB, so the frames compress about as well as one would, and each is compressed on libuv's
 * pool while the engine formats the next block.
 */
async function* zstdFrames(source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) yield await zstdCompress(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
}

/** Gzip at level 1: four times smaller CSV at the speed of the export itself. */
async function* gzipped(source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  const zip = createGzip({ level: 1 })
  const out: Buffer[] = []
  let failure: Error | undefined
  zip.on('data', (d: Buffer) => out.push(d))
  zip.on('error', (err) => (failure = err))
  const drained = () => {
    if (failure) throw failure
    return out.length > 0 ? Buffer.concat(out.splice(0)) : undefined
  }
  try {
    for await (const chunk of source) {
      await new Promise<void>((resolve, reject) => zip.write(chunk, (err) => (err ? reject(err) : resolve())))
      const compressed = drained()
      if (compressed) yield compressed
    }
    await new Promise<void>((resolve, reject) => {
      zip.once('end', resolve)
      zip.once('error', reject)
      zip.end()
    })
    const rest = drained()
    if (rest) yield rest
  } finally {
    zip.destroy()
  }
}
