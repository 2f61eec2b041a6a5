import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createRequire } from 'node:module'

const VERSION: string = createRequire(import.meta.url)('../../package.json').version

/** The OTEL_* settings Quarry decides on itself; the SDK and exporter read the others (headers, sampler, batching). */
export interface TracingConfig {
  OTEL_SDK_DISABLED: boolean
  OTEL_EXPORTER_OTLP_ENDPOINT?: string
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string
  OTEL_SERVICE_NAME: string
}

export interface Tracing {
  /** Runs `fn` in a server span that continues the request's W3C traceparent, if any. */
  request<T>(header: (name: string) => string | undefined, fn: (span: Span) => Promise<T>): Promise<T>
  /** A span for one engine statement, child of the span in whose context it is called. */
  statement(name: string, attributes: Attributes): Span
  /** Sends the spans ended so far. */
  flush(): Promise<void>
  shutdown(): Promise<void>
}

export { SpanStatusCode, type Span }

/**
 * OpenTelemetry traces over OTLP/HTTP (protobuf), or undefined when no endpoint is set: then
 * nothing is instrumented at all. Nothing is registered globally (context manager, propagator,
 * provider), so several instances can live in one process, as tests build them.
 */
export function openTracing(config: TracingConfig): Tracing | undefined {
  const traces = config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT
  if (config.OTEL_SDK_DISABLED || (!traces && !base)) return undefined
  // The signal's own endpoint is taken as is; the common one gets the traces path (OTLP exporter spec).
  const url = traces ?? `${base!.replace(/\/+$/, '')}/v1/traces`
  const resource = resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME, 'service.version': VERSION }).merge(
    detectResources({ detectors: [envDetector] }),
  )
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url }))
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] })
  const tracer = provider.getTracer('quarry', VERSION)
  const contexts = new AsyncLocalStorageContextManager().enable()
  const propagator = new W3CTraceContextPropagator()
  const getter = { get: (carrier: (name: string) => string | undefined, key: string) => carrier(key), keys: () => [] }

  return {
    request(header, fn) {
      const parent = propagator.extract(ROOT_CONTEXT, header, getter)
      const span = tracer.startSpan('request', { kind: SpanKind.SERVER }, parent)
      return contexts.with(trace.setSpan(parent, span), () => fn(span))
    },
    statement(name, attributes) {
      return tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, contexts.active())
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown()
      contexts.disable()
    },
  }
}
