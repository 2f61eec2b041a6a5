import type { Statement } from '../clickhouse/run.ts'
import type { Chart } from './chart-series.ts'
import { EXPORT_FORMATS, type StreamedFormatName } from './export-formats.ts'
import { renderSql } from './sql-templates.ts'

/**
 * /export/charts as rows (format=csv|ndjson|parquet|arrow): one row per point of every series.
 * The chart is assembled as for JSON; ClickHouse only writes its points in the format, so every
 * format of both export routes comes out of one writer.
 */

export interface ChartPoint {
  seriesId: string
  /** The series' event name ("*": every event). */
  event: string
  /** Breakdown name → this series' value; empty without breakdowns. */
  breakdowns: Record<string, string>
  /** The bucket's start, ISO 8601 with the request timezone's offset. */
  date: string
  count: number
  /** The value of the same bucket in the previous period; null without previous=true. */
  previous: number | null
}

/** The columns of a point row, in output order (the CSV header). */
export const CHART_POINT_KEYS = ['seriesId', 'event', 'breakdowns', 'date', 'count', 'previous'] as const satisfies readonly (keyof ChartPoint)[]

/** Every point of the chart, series by series in the chart's order, buckets in time order. */
export const chartPoints = (chart: Chart): ChartPoint[] =>
  chart.series.flatMap((s) =>
    s.data.map((d) => ({
      seriesId: s.id,
      event: s.event.name,
      breakdowns: s.event.breakdowns ?? {},
      date: d.date,
      count: d.count,
      previous: d.previous?.value ?? null,
    })),
  )

/** The points in `format`: handed over as one JSONEachRow parameter, typed as the format wants. */
export function chartPointsStatement(points: readonly ChartPoint[], format: StreamedFormatName, limit?: number): Statement {
  const shape = EXPORT_FORMATS[format].shape
  return {
    name: 'export_charts_points',
    sql: renderSql('export_charts_points', {
      breakdowns: shape === 'csv' ? 'toJSONString(breakdowns)' : 'breakdowns',
      date: shape === 'columnar' ? "parseDateTime64BestEffort(date, 3, 'UTC')" : 'date',
      limit: limit === undefined ? '' : `LIMIT ${Math.floor(limit)}`,
    }),
    params: { points: points.map((p) => JSON.stringify(p)).join('\n') },
    // One thread reads the text in order: the rows come out as the chart lists them.
    settings: { max_threads: 1, ...EXPORT_FORMATS[format].settings },
  }
}
