/**
 * One Arrow IPC stream out of what the engine writes: chDB formats every block as a stream of its
 * own (schema, record batch, end-of-stream marker), a ClickHouse server writes one stream across
 * arbitrary chunks. Reading the messages as they pass (8 bytes of prefix, the flatbuffer Message,
 * its body) serves both: the first schema goes out, every later one must be the same and is
 * dropped, end-of-stream markers are dropped, and one ends the output. Memory holds at most one
 * message that straddles two chunks.
 */

const CONTINUATION = 0xffffffff
const SCHEMA = 1
const EOS = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])

/** header_type and bodyLength of a flatbuffer `Message` table. */
function readMessage(meta: Uint8Array): { type: number; bodyLength: number } {
  const view = new DataView(meta.buffer, meta.byteOffset, meta.byteLength)
  const table = view.getUint32(0, true)
  const vtable = table - view.getInt32(table, true)
  const vtableLength = view.getUint16(vtable, true)
  const slot = (i: number) => (4 + 2 * i < vtableLength ? view.getUint16(vtable + 4 + 2 * i, true) : 0)
  // Message fields: 0 version, 1 header_type, 2 header, 3 bodyLength.
  const typeAt = slot(1)
  const bodyAt = slot(3)
  const bodyLength = bodyAt === 0 ? 0n : view.getBigInt64(table + bodyAt, true)
  if (bodyLength < 0n || bodyLength > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('arrow: bad body length')
  return { type: typeAt === 0 ? 0 : view.getUint8(table + typeAt), bodyLength: Number(bodyLength) }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0

export async function* concatArrowStream(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  // Chunks of a message not whole yet, and how many bytes the parse needs before trying again
  // (a large message spanning many small chunks is joined once, not once per chunk).
  const pending: Uint8Array[] = []
  let pendingLength = 0
  let need = 8
  let schema: Uint8Array | undefined
  for await (const chunk of source) {
    pending.push(chunk)
    pendingLength += chunk.length
    if (pendingLength < need) continue
    const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending)
    const out: Uint8Array[] = []
    let pos = 0
    need = 8
    for (;;) {
      if (buf.length - pos < 8) break
      const view = new DataView(buf.buffer, buf.byteOffset + pos, 8)
      // Streams since Arrow 0.15 mark every message with 0xFFFFFFFF; the length follows.
      const prefixed = view.getUint32(0, true) === CONTINUATION
      const metaLength = prefixed ? view.getInt32(4, true) : view.getInt32(0, true)
      const headerLength = prefixed ? 8 : 4
      if (metaLength === 0) {
        pos += headerLength
        continue
      }
      if (metaLength < 0) throw new Error('arrow: bad message length')
      if (buf.length - pos < headerLength + metaLength) {
        need = headerLength + metaLength
        break
      }
      const meta = buf.subarray(pos + headerLength, pos + headerLength + metaLength)
      const { type, bodyLength } = readMessage(meta)
      const end = pos + headerLength + metaLength + bodyLength
      if (buf.length < end) {
        need = end - pos
        break
      }
      const message = buf.subarray(pos, end)
      if (type !== SCHEMA) out.push(message)
      else if (!schema) {
        schema = Uint8Array.from(message)
        out.push(message)
      } else if (!sameBytes(message, schema)) {
        throw new Error('arrow: the blocks have different schemas')
      }
      pos = end
    }
    pending.length = 0
    pendingLength = buf.length - pos
    if (pendingLength > 0) pending.push(Uint8Array.from(buf.subarray(pos)))
    if (out.length === 1) yield out[0]!
    else if (out.length > 1) yield Buffer.concat(out)
  }
  if (pendingLength > 0) throw new Error('arrow: the stream ended inside a message')
  if (schema) yield EOS
}
