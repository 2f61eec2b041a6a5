/**
 * The formats of /export/events, each declared once. json answers one page; a streamed format
 * answers every matching event in the bytes ClickHouse writes, as an attachment.
 */

/**
 * How cells hold values: json as in the event objects (ISO text instants); csv flat, nested values
 * (properties, profile, meta) as JSON text; columnar typed (UTC timestamps, numbers, properties a
 * map), profile and meta as JSON text (a variant of two object shapes has no single column type).
 */
export type Shape = 'json' | 'csv' | 'columnar'

type Settings = Readonly<Record<string, string | number>>

export interface ExportFormat {
  contentType: string
  streams: boolean
  /** ClickHouse's output format for the rows. */
  clickhouse: string
  /** Of the attachment's file name. */
  extension: string
  shape: Shape
  /**
   * The header row, when we write it: chDB formats each streamed block on its own, so a
   * *WithNames format would repeat the header in every chunk.
   */
  header?: (keys: readonly string[]) => string
  /** Added to the statement's settings. */
  settings: Settings
  /** What a streamed body holds, for the API document. */
  body?: string
  /**
   * How the engine's chunks become one file: chDB formats each streamed block on its own, which a
   * text format survives but a Parquet file or an Arrow stream does not (src/http joins them).
   */
  blocks?: 'parquet' | 'arrow'
  /** Text, which zstd or gzip make several times smaller; binary formats compress inside or not at all. */
  text: boolean
}

/**
 * The columnar formats' settings: strings as UTF-8 strings, not bytes; LowCardinality columns as
 * plain strings, so no block carries a dictionary of its own.
 */
const COLUMNAR = {
  output_format_arrow_string_as_string: 1,
  output_format_arrow_low_cardinality_as_dictionary: 0,
} as const

/**
 * Arrow in blocks of about two granules (16,384 rows or 4 MB read; the bytes bound is what holds a
 * block to one granule, see Parquet's): each block is an Arrow stream of its own and one fetch,
 * copy and socket write, and at one granule that per-block work was about a tenth of the server's
 * CPU per row (1.05 -> 0.93 µs, alternating in one process). Four granules saved more (0.90-0.95 µs)
 * but the server's RSS grew with the block size: +223 to +280 MB over a 10M export (limit 256)
 * against +153 to +160 at two and +114 to +133 at one. Figures: benchmarks/README.md, Arrow in
 * blocks of two granules.
 */
const ARROW_BLOCKS = { max_block_size: 16384, preferred_block_size_bytes: 4_000_000 } as const

const DECLARED = {
  json: { contentType: 'application/json', streams: false, clickhouse: 'JSONEachRow', extension: 'json', shape: 'json', settings: {}, text: true },
  ndjson: {
    contentType: 'application/x-ndjson; charset=utf-8',
    streams: true,
    clickhouse: 'JSONEachRow',
    extension: 'ndjson',
    shape: 'json',
    settings: {},
    body: 'One event object per line',
    text: true,
  },
  csv: {
    contentType: 'text/csv; charset=utf-8',
    streams: true,
    clickhouse: 'CSV',
    extension: 'csv',
    shape: 'csv',
    // Quoted the way ClickHouse quotes the names of CSVWithNames.
    header: (keys: readonly string[]) => `${keys.map((k) => `"${k}"`).join(',')}\n`,
    // A null is an empty cell, not ClickHouse's \N.
    settings: { format_csv_null_representation: '' },
    body: 'Header row, then one event per row',
    text: true,
  },
  parquet: {
    contentType: 'application/vnd.apache.parquet',
    streams: true,
    clickhouse: 'Parquet',
    extension: 'parquet',
    shape: 'columnar',
    settings: {
      ...COLUMNAR,
      output_format_parquet_string_as_string: 1,
      // Measured in process on 1M events (benchmarks/experiments/export-columnar.ts): bloom
      // filters cost time and size (zstd 0.38 -> 0.56x CSV's rows/s, 52 -> 42 MB) for readers of a
      // file that scan it whole.
      output_format_parquet_compression_method: 'zstd',
      // zstd's level 1 instead of 3 (the Parquet writer takes this setting too): 30 % less CPU per
      // row for the same size (1.90 against 2.88 µs, 37.1 against 37.2 MB per 1M events; level 9:
      // 7.97 µs, 35.1 MB), about snappy's cost with files half the size of snappy's (71 MB).
      output_format_compression_level: 1,
      output_format_parquet_write_bloom_filter: 0,
      // Plain pages, no dictionaries: each block is a file of its own, so every block built its
      // dictionaries anew, the ids' and sessions' too, where no value repeats. Without them the
      // encoder spends 26 % less CPU per row (3.03 -> 2.23 µs at zstd level 3) and zstd still
      // finds the repeats: 37 MB per 1M events against 42 (export-columnar.ts, 27 Nov). The
      // column types do not change.
      output_format_parquet_max_dictionary_size: 0,
      // Its entries hold absolute page offsets, which joining the blocks' files would break.
      output_format_parquet_write_page_index: 0,
      // A server (HTTP engine) writes one file: row groups of this size bound its memory.
      output_format_parquet_row_group_size: 65536,
      // Blocks of up to four granules (32,768 rows) or about 6 MB read, where a stream's default is
      // one granule: chDB writes each block as a file of its own, and at 8,192 rows the per-file
      // work (footer, a parallel encoding task per column) was 7-14 % of the CPU. It is the
      // bytes bound, not max_block_size, that held every block to one granule (MergeTree reads
      // fewer granules when a block would pass it, 1 MB by default), in reverse key order too.
      // 6 MB gives the default columns four granules and rows with properties two: at 8 MB (three)
      // a 1M-row export with properties reached +195 and +212 MB of RSS growth in test/heavy
      // (limit 256); at 4 MB the default columns averaged under two and gave no CPU back.
      // Figures: benchmarks/README.md, Parquet in blocks of several granules.
      max_block_size: 32768,
      preferred_block_size_bytes: 6_000_000,
    },
    body: 'One Parquet file (zstd), one row group per block of rows',
    blocks: 'parquet',
    text: false,
  },
  arrow: {
    contentType: 'application/vnd.apache.arrow.stream',
    streams: true,
    clickhouse: 'ArrowStream',
    extension: 'arrows',
    shape: 'columnar',
    settings: {
      ...COLUMNAR,
      // Uncompressed bodies: LZ4/ZSTD buffers are an optional part of the format many readers lack.
      output_format_arrow_compression_method: 'none',
      // ClickHouse's own Arrow writer instead of the Arrow library's: the same schema and values
      // for readers (the messages' layout differs), a third less CPU per row (1.28 -> 0.87 µs in
      // process, 1M events, 27 Nov). chDB 3.4 turns it off by default because its macOS x86_64
      // build wrote corrupt Date32 buffers; no export has a Date column (instants are timestamps),
      // and the tests read every value back with apache-arrow. A server older than the setting
      // (HTTP engine) would refuse it as unknown.
      output_format_arrow_use_native_writer: 1,
      ...ARROW_BLOCKS,
    },
    body: 'One Arrow IPC stream: a schema, then record batches',
    blocks: 'arrow',
    text: false,
  },
} as const satisfies Record<string, ExportFormat>

export type ExportFormatName = keyof typeof DECLARED
export type StreamedFormatName = { [F in ExportFormatName]: (typeof DECLARED)[F]['streams'] extends true ? F : never }[ExportFormatName]

export const EXPORT_FORMATS: Readonly<Record<ExportFormatName, ExportFormat>> = DECLARED

/** The values of `format=`, json first (the default). */
export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as [ExportFormatName, ...ExportFormatName[]]

export const isStreamed = (name: ExportFormatName): name is StreamedFormatName => EXPORT_FORMATS[name].streams

/** A format's media type: its content type without parameters (`text/csv`). */
export type MediaType<F extends ExportFormatName> = (typeof DECLARED)[F]['contentType'] extends `${infer M};${string}`
  ? M
  : (typeof DECLARED)[F]['contentType']

export const mediaType = <F extends ExportFormatName>(name: F) => EXPORT_FORMATS[name].contentType.split(';')[0] as MediaType<F>

/** The streamed formats, in declaration order. */
export const STREAMED_FORMAT_NAMES = EXPORT_FORMAT_NAMES.filter(isStreamed)
