import { field, T, ThriftReader, ThriftWriter, type EncodedStruct, type ThriftList, type ThriftStruct } from './thrift-compact.ts'

/**
 * One Parquet file out of the per-block files chDB streams: chDB formats every block on its own, so
 * each chunk is a whole file of one row group. The row groups' bytes are passed on as they come,
 * their file offsets moved to where they land, and one footer listing them all ends the file: memory
 * holds a chunk and the footer's row groups, each written back to its bytes as it comes (about 2 KB
 * per row group with properties, geo, device and referrer, where the parsed fields took 50 KB of
 * heap: 63 MB of the server's memory at 10M rows), never the file.
 *
 * A ClickHouse server (HTTP engine) writes one file across the chunks: when the first chunk is not
 * a whole file, the stream is passed through as it is.
 */

const MAGIC = Uint8Array.from([0x50, 0x41, 0x52, 0x31]) // PAR1

// FileMetaData, RowGroup, ColumnChunk and ColumnMetaData field ids (parquet.thrift).
const FILE = { schema: 2, numRows: 3, rowGroups: 4 }
const ROW_GROUP = { columns: 1, fileOffset: 5, ordinal: 7 }
const CHUNK = { fileOffset: 2, meta: 3, offsetIndexOffset: 4, offsetIndexLength: 5, columnIndexOffset: 6, columnIndexLength: 7 }
const CHUNK_META = { dataPageOffset: 9, indexPageOffset: 10, dictionaryPageOffset: 11, bloomFilterOffset: 14 }
const PAGE_INDEX_FIELDS = new Set([CHUNK.offsetIndexOffset, CHUNK.offsetIndexLength, CHUNK.columnIndexOffset, CHUNK.columnIndexLength])

const isMagic = (b: Uint8Array, at: number) => MAGIC.every((x, i) => b[at + i] === x)

interface WholeFile {
  meta: ThriftStruct
  /** Where the footer starts: the row groups' bytes are [4, footerAt). */
  footerAt: number
}

/** The file's footer, when `chunk` is a whole Parquet file; undefined otherwise. */
export function readWholeFile(chunk: Uint8Array): WholeFile | undefined {
  if (chunk.length < 12 || !isMagic(chunk, 0) || !isMagic(chunk, chunk.length - 4)) return undefined
  const footerLength = new DataView(chunk.buffer, chunk.byteOffset + chunk.length - 8, 4).getUint32(0, true)
  const footerAt = chunk.length - 8 - footerLength
  if (footerAt < 4) return undefined
  try {
    // A copy (Uint8Array.from: a Buffer's slice is a view): the parsed footer is kept until the
    // end, and views into the chunk would keep every chunk's memory alive with it (+600 MB over 10M rows).
    const reader = new ThriftReader(Uint8Array.from(chunk.subarray(footerAt, chunk.length - 8)))
    const meta = reader.struct()
    if (reader.pos !== footerLength || !field(meta, FILE.schema) || !field(meta, FILE.numRows)) return undefined
    return { meta, footerAt }
  } catch {
    return undefined
  }
}

/** Adds `shift` to an i64 field, when present. */
function shiftField(s: ThriftStruct, id: number, shift: bigint) {
  const f = field(s, id)
  if (f && f.type === T.I64) f.value = (f.value as bigint) + shift
}

/** A row group moved by `shift` bytes, numbered `ordinal`; page index references are dropped (their entries hold offsets of their own). */
function movedRowGroup(group: ThriftStruct, shift: bigint, ordinal: number): ThriftStruct {
  shiftField(group, ROW_GROUP.fileOffset, shift)
  const ord = field(group, ROW_GROUP.ordinal)
  if (ord) ord.value = ordinal
  for (const chunk of (field(group, ROW_GROUP.columns)!.value as ThriftList).items as ThriftStruct[]) {
    for (let i = chunk.length - 1; i >= 0; i--) if (PAGE_INDEX_FIELDS.has(chunk[i]!.id)) chunk.splice(i, 1)
    shiftField(chunk, CHUNK.fileOffset, shift)
    const meta = field(chunk, CHUNK.meta)?.value as ThriftStruct | undefined
    if (meta) for (const id of Object.values(CHUNK_META)) shiftField(meta, id, shift)
  }
  return group
}

const bytesOf = (s: ThriftStruct) => new ThriftWriter().struct(s).finish()
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i])

/** Joins the chunks of a Parquet export into one file (see above). */
export async function* concatParquet(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let written = 0
  let first: { meta: ThriftStruct; schema: Uint8Array } | undefined
  const rowGroups: EncodedStruct[] = []
  let rows = 0n
  let passThrough = false
  for await (const chunk of source) {
    if (passThrough) {
      yield chunk
      continue
    }
    const file = readWholeFile(chunk)
    if (!file) {
      if (first) throw new Error('parquet: a chunk after the first is not a whole file')
      passThrough = true
      yield chunk
      continue
    }
    const schema = bytesOf([field(file.meta, FILE.schema)!])
    if (!first) {
      first = { meta: file.meta, schema }
      yield MAGIC
      written = 4
    } else if (!sameBytes(schema, first.schema)) {
      throw new Error('parquet: the blocks have different schemas')
    }
    const shift = BigInt(written - 4)
    for (const group of (field(file.meta, FILE.rowGroups)?.value as ThriftList | undefined)?.items ?? []) {
      rowGroups.push({ encoded: bytesOf(movedRowGroup(group as ThriftStruct, shift, rowGroups.length)) })
    }
    rows += field(file.meta, FILE.numRows)!.value as bigint
    const body = chunk.subarray(4, file.footerAt)
    written += body.length
    if (body.length > 0) yield body
  }
  if (passThrough || !first) return
  const meta = first.meta.map((f) => {
    if (f.id === FILE.numRows) return { ...f, value: rows }
    if (f.id === FILE.rowGroups) return { ...f, value: { elem: T.STRUCT, items: rowGroups } }
    return f
  })
  if (!field(meta, FILE.rowGroups)) throw new Error('parquet: no row group list in the footer')
  const footer = bytesOf(meta)
  const tail = new Uint8Array(footer.length + 8)
  tail.set(footer)
  new DataView(tail.buffer).setUint32(footer.length, footer.length, true)
  tail.set(MAGIC, footer.length + 4)
  yield tail
}
