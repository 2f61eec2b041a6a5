/**
 * The formats of /export/events, each declared once. json answers one page; a streamed format
 * answers every matching event in the bytes ClickHouse writes, as an attachment.
 */

/** How cells hold nested values (properties, profile, meta): json as themselves, csv flat, as JSON text. */
export type Shape = 'json' | 'csv'

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
}

const DECLARED = {
  json: { contentType: 'application/json', streams: false, clickhouse: 'JSONEachRow', extension: 'json', shape: 'json', settings: {} },
  ndjson: {
    contentType: 'application/x-ndjson; charset=utf-8',
    streams: true,
    clickhouse: 'JSONEachRow',
    extension: 'ndjson',
    shape: 'json',
    settings: {},
    body: 'One event object per line',
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
