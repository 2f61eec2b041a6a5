import { z, type RouteConfig } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { Logger } from 'pino'
import type { AppEnv } from '../app-env.ts'
import type { Statement } from '../clickhouse/run.ts'
import { attachmentHeaders, streamResponse } from '../http/export-stream.ts'
import { EXPORT_FORMATS, mediaType, STREAMED_FORMAT_NAMES, type MediaType, type StreamedFormatName } from '../query/export-formats.ts'
import { describedHeaders } from './openapi-shared.ts'

/** What the two export routes share once a format streams: the attachment, HEAD, the API document. */

/** Each streamed format's body in the API document, under its media type. */
export const STREAMED_CONTENT = Object.fromEntries(
  STREAMED_FORMAT_NAMES.map((name) => [mediaType(name), { schema: z.string().openapi({ description: EXPORT_FORMATS[name].body ?? name }) }]),
) as Record<MediaType<StreamedFormatName>, { schema: z.ZodString }>

export const HEAD_HEADERS = describedHeaders('X-Quarry-Rows', 'X-Quarry-Size-Estimate', 'Content-Disposition')

/**
 * The HEAD twin of a streamed GET route, for the API document (Hono answers HEAD with the GET
 * handler). Its responses are the GET's without bodies; an error's status and headers say what the
 * GET's body would.
 */
export function headRoute(get: RouteConfig): RouteConfig {
  const ok = get.responses[200] as { headers?: Record<string, unknown> }
  return {
    ...get,
    method: 'head',
    summary: `Headers of a streamed ${get.path} export without its body: the exact row count and a size estimate`,
    responses: {
      ...get.responses,
      200: {
        description: 'The headers the GET would answer, without streaming; with a streamed format also X-Quarry-Rows and X-Quarry-Size-Estimate',
        headers: { ...(ok.headers as object), ...HEAD_HEADERS },
      },
    },
  }
}

export interface StreamedRequest {
  format: StreamedFormatName
  statement: Statement
  /** A header row written before the engine's bytes (CSV). */
  prefix?: string
  /** The file name without its extension. */
  name: string
  headers: Record<string, string>
  timeoutS: number
  logger: Logger
}

/** Rows the size estimate reads: enough for a stable bytes-per-row, few enough to cost little. */
const SAMPLE_ROWS = 10_000

/** `count` and `sample`: the row count, and the statement limited to its first rows (for the estimate). */
export interface HeadFacts {
  count: () => Promise<number>
  sample: (limit: number) => Statement
}

/** A streamed export's response: the stream (GET), or its headers with the row count and size estimate (HEAD). */
export async function streamedExport(c: Context<AppEnv>, out: StreamedRequest, head: HeadFacts): Promise<Response> {
  const spec = EXPORT_FORMATS[out.format]
  const file = {
    headers: out.headers,
    contentType: spec.contentType,
    filename: `${out.name}.${spec.extension}`,
    compressible: spec.text,
  }
  const runner = c.get('runner')
  const run = { timeoutS: out.timeoutS, stats: c.get('stats') }
  if (c.req.method === 'HEAD') {
    const rows = await head.count()
    let sampled = 0
    for await (const chunk of runner.stream(head.sample(SAMPLE_ROWS), spec.clickhouse, { ...run, signal: c.req.raw.signal })) {
      sampled += chunk.byteLength
    }
    const prefix = out.prefix ? Buffer.byteLength(out.prefix) : 0
    const estimate = prefix + (rows <= SAMPLE_ROWS ? sampled : Math.round((sampled * rows) / SAMPLE_ROWS))
    return c.body(null, 200, { ...attachmentHeaders(file), 'X-Quarry-Rows': String(rows), 'X-Quarry-Size-Estimate': String(estimate) })
  }
  return streamResponse(c, {
    ...file,
    open: (signal) => runner.stream(out.statement, spec.clickhouse, { ...run, signal }),
    prefix: out.prefix === undefined ? undefined : new TextEncoder().encode(out.prefix),
    blocks: spec.blocks,
    format: out.format,
    logger: out.logger,
  })
}
