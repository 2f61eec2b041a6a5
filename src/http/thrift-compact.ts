/**
 * Thrift's compact protocol, generically: a struct is read into its fields as they are (ids, wire
 * types, values) and written back byte for byte, so a Parquet footer can be edited at the few
 * fields that hold file offsets without a schema of the rest.
 */

export const T = { TRUE: 1, FALSE: 2, BYTE: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12 } as const

export interface ThriftList {
  elem: number
  items: ThriftValue[]
}
export interface ThriftMap {
  key: number
  val: number
  entries: [ThriftValue, ThriftValue][]
}
/** A struct already written (its fields and stop byte), as a list item: written again as it is. */
export interface EncodedStruct {
  encoded: Uint8Array
}
export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftList | ThriftMap | EncodedStruct
export interface ThriftField {
  id: number
  type: number
  value: ThriftValue
}
export type ThriftStruct = ThriftField[]

export class ThriftReader {
  pos = 0
  constructor(private readonly buf: Uint8Array) {}

  private byte(): number {
    if (this.pos >= this.buf.length) throw new Error('thrift: truncated')
    return this.buf[this.pos++]!
  }

  private varint(): bigint {
    let result = 0n
    let shift = 0n
    for (;;) {
      const b = this.byte()
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return result
      shift += 7n
      if (shift > 70n) throw new Error('thrift: varint too long')
    }
  }

  private zigzag(): bigint {
    const n = this.varint()
    return (n >> 1n) ^ -(n & 1n)
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case T.TRUE:
        return true
      case T.FALSE:
        return false
      case T.BYTE:
        return this.byte()
      case T.I16:
      case T.I32:
        return Number(this.zigzag())
      case T.I64:
        return this.zigzag()
      case T.DOUBLE: {
        const bytes = this.buf.subarray(this.pos, this.pos + 8)
        if (bytes.length < 8) throw new Error('thrift: truncated')
        this.pos += 8
        return bytes
      }
      case T.BINARY: {
        const n = Number(this.varint())
        if (this.pos + n > this.buf.length) throw new Error('thrift: truncated')
        const bytes = this.buf.subarray(this.pos, this.pos + n)
        this.pos += n
        return bytes
      }
      case T.LIST:
      case T.SET: {
        const head = this.byte()
        const elem = head & 0x0f
        const size = head >> 4 === 15 ? Number(this.varint()) : head >> 4
        // A bool element is one byte (1 true, 2 false), not a type nibble.
        const items = Array.from({ length: size }, () => (elem === T.TRUE || elem === T.FALSE ? this.byte() === T.TRUE : this.value(elem)))
        return { elem, items }
      }
      case T.MAP: {
        const size = Number(this.varint())
        if (size === 0) return { key: 0, val: 0, entries: [] }
        const kinds = this.byte()
        const key = kinds >> 4
        const val = kinds & 0x0f
        return { key, val, entries: Array.from({ length: size }, () => [this.value(key), this.value(val)] as [ThriftValue, ThriftValue]) }
      }
      case T.STRUCT:
        return this.struct()
      default:
        throw new Error(`thrift: unknown type ${type}`)
    }
  }

  struct(): ThriftStruct {
    const fields: ThriftStruct = []
    let last = 0
    for (;;) {
      const head = this.byte()
      if (head === 0) return fields
      const type = head & 0x0f
      const id = head >> 4 === 0 ? Number(this.zigzag()) : last + (head >> 4)
      fields.push({ id, type, value: this.value(type) })
      last = id
    }
  }
}

export class ThriftWriter {
  private chunks: number[] = []

  private varint(n: bigint) {
    let v = n
    while (v >= 0x80n) {
      this.chunks.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    this.chunks.push(Number(v))
  }

  private zigzag(n: bigint) {
    this.varint(n >= 0n ? n << 1n : ((-n) << 1n) - 1n)
  }

  private bytes(b: Uint8Array) {
    for (const x of b) this.chunks.push(x)
  }

  private value(type: number, v: ThriftValue) {
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        return
      case T.BYTE:
        this.chunks.push((v as number) & 0xff)
        return
      case T.I16:
      case T.I32:
        return this.zigzag(BigInt(v as number))
      case T.I64:
        return this.zigzag(v as bigint)
      case T.DOUBLE:
        return this.bytes(v as Uint8Array)
      case T.BINARY:
        this.varint(BigInt((v as Uint8Array).length))
        return this.bytes(v as Uint8Array)
      case T.LIST:
      case T.SET: {
        const { elem, items } = v as ThriftList
        if (items.length < 15) this.chunks.push((items.length << 4) | elem)
        else {
          this.chunks.push(0xf0 | elem)
          this.varint(BigInt(items.length))
        }
        for (const item of items) {
          if (elem === T.TRUE || elem === T.FALSE) this.chunks.push(item ? T.TRUE : T.FALSE)
          else this.value(elem, item)
        }
        return
      }
      case T.MAP: {
        const { key, val, entries } = v as ThriftMap
        this.varint(BigInt(entries.length))
        if (entries.length === 0) return
        this.chunks.push((key << 4) | val)
        for (const [k, x] of entries) {
          this.value(key, k)
          this.value(val, x)
        }
        return
      }
      case T.STRUCT:
        return Array.isArray(v) ? this.struct(v) : this.bytes((v as EncodedStruct).encoded)
      default:
        throw new Error(`thrift: unknown type ${type}`)
    }
  }

  struct(fields: ThriftStruct): this {
    let last = 0
    for (const f of fields) {
      const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type
      const delta = f.id - last
      if (delta > 0 && delta < 16) this.chunks.push((delta << 4) | type)
      else {
        this.chunks.push(type)
        this.zigzag(BigInt(f.id))
      }
      this.value(type, f.value)
      last = f.id
    }
    this.chunks.push(0)
    return this
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.chunks)
  }
}

/** The field `id` of a struct, or undefined. */
export const field = (s: ThriftStruct, id: number) => s.find((f) => f.id === id)
