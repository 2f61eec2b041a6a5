import type { Metrics } from './metrics.ts'
import { SpanStatusCode, type Tracing } from './tracing.ts'

/** What the engine's runner reports to: metrics always, spans when tracing is on. */
export interface Telemetry {
  metrics: Metrics
  tracing?: Tracing
}

export interface StatementWatch {
  /** `on`: where the embedded engine ran a read (read-lanes.ts). */
  done(ms: number, read?: { rows: number; bytes: number }, on?: 'line' | 'lane'): void
  /** `errorClass` only: an engine's message may quote a bound value. */
  failed(errorClass: string): void
}

const NONE: StatementWatch = { done() {}, failed() {} }

/** One engine statement's duration, reads and span, by its name; never its SQL or parameters. */
export function watchStatement(telemetry: Telemetry | undefined, statement: string): StatementWatch {
  if (!telemetry) return NONE
  const { metrics, tracing } = telemetry
  const span = tracing?.statement(statement, { 'db.system.name': 'clickhouse', 'quarry.statement': statement })
  return {
    done(ms, read, on) {
      metrics.engineDuration.observe({ statement }, ms / 1000)
      if (on) {
        metrics.engineReads.inc({ on })
        span?.setAttribute('quarry.engine.on', on)
      }
      if (read) {
        metrics.engineRowsRead.inc({ statement }, read.rows)
        metrics.engineBytesRead.inc({ statement }, read.bytes)
        span?.setAttributes({ 'quarry.rows_read': read.rows, 'quarry.bytes_read': read.bytes })
      }
      span?.end()
    },
    failed(errorClass) {
      metrics.engineErrors.inc({ statement, class: errorClass })
      span?.setAttribute('error.type', errorClass)
      span?.setStatus({ code: SpanStatusCode.ERROR, message: errorClass })
      span?.end()
    },
  }
}
