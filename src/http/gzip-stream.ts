import { createGzip } from 'node:zlib'

/** Whether the client takes gzip (q > 0, by name or through *). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false
  let gzip: number | undefined
  let any: number | undefined
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (name.trim() === 'gzip' || name.trim() === 'x-gzip') gzip = q
    else if (name.trim() === '*') any = q
  }
  const q = gzip ?? any ?? 0
  return Number.isFinite(q) && q > 0
}

/**
 * Gzip (level 1: four times smaller CSV at the speed of the export itself) one chunk at a time:
 * the next chunk is asked for only once the previous one is compressed and handed on, so memory
 * stays one chunk deep, as without compression.
 */
export async function* gzipped(source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
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
