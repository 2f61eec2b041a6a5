/**
 * An OTLP/HTTP trace receiver on loopback: a plain node:http server that takes what an exporter
 * POSTs to /v1/traces and decodes it with protobufjs from the fields of opentelemetry-proto's
 * trace.proto and common.proto (same field numbers; the fields the tests do not read are skipped
 * as unknown, as any protobuf reader does).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import protobuf from 'protobufjs'

const PROTO = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`
const Request = protobuf.parse(PROTO).root.lookupType('ExportTraceServiceRequest')

export const SPAN_KIND = { SERVER: 2, CLIENT: 3 } as const

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, string | number | boolean>
  statusCode: number
  resource: Record<string, string | number | boolean>
}

interface Decoded {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: { spans?: { traceId: Uint8Array; spanId: Uint8Array; parentSpanId: Uint8Array; name: string; kind: number; attributes?: KeyValue[]; status?: { code?: number } }[] }[]
  }[]
}
interface KeyValue {
  key: string
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | { toNumber(): number }; doubleValue?: number }
}

const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('hex')
const attributes = (list: KeyValue[] = []) =>
  Object.fromEntries(
    list.map(({ key, value: v = {} }) => [
      key,
      v.stringValue ?? v.boolValue ?? (typeof v.intValue === 'object' ? v.intValue.toNumber() : v.intValue) ?? v.doubleValue ?? '',
    ]),
  )

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = []
  const requests: { path: string; contentType: string }[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '' })
      if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') {
        res.writeHead(415).end()
        return
      }
      const decoded = Request.toObject(Request.decode(Buffer.concat(chunks)), { longs: Number, defaults: true }) as Decoded
      for (const rs of decoded.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes)
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              kind: s.kind,
              attributes: attributes(s.attributes),
              statusCode: s.status?.code ?? 0,
              resource,
            })
          }
        }
      }
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
