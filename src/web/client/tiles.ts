import { h } from './dom.ts'
import { change, formatChange, formatCount, formatDecimal, formatPercent, formatSeconds } from './format.ts'

export interface MetricValues {
  unique_visitors: number
  total_sessions: number
  bounce_rate: number
  avg_session_duration: number
  total_screen_views: number
  views_per_session: number
  total_revenue: number
}

export interface MetricsBody {
  metrics: MetricValues
  series: (MetricValues & { date: string })[]
  previous?: MetricValues
}

/** The tiles, in order: which number, its label, how it reads, and whether a rise is good news. */
const TILES: { key: keyof MetricValues; label: string; format: (n: number) => string; higherIsBetter: boolean }[] = [
  { key: 'unique_visitors', label: 'Visitors', format: formatCount, higherIsBetter: true },
  { key: 'total_sessions', label: 'Sessions', format: formatCount, higherIsBetter: true },
  { key: 'bounce_rate', label: 'Bounce rate', format: formatPercent, higherIsBetter: false },
  { key: 'avg_session_duration', label: 'Session duration', format: formatSeconds, higherIsBetter: true },
  { key: 'views_per_session', label: 'Views per session', format: formatDecimal, higherIsBetter: true },
  { key: 'total_revenue', label: 'Revenue', format: formatCount, higherIsBetter: true },
]

export function renderTiles(body: MetricsBody): HTMLElement {
  return h(
    'div',
    { className: 'tiles' },
    ...TILES.map(({ key, label, format, higherIsBetter }) => {
      const value = body.metrics[key]
      const previous = body.previous?.[key]
      const pct = change(value, previous)
      const tone = pct === null || pct === 0 ? 'flat' : pct > 0 === higherIsBetter ? 'good' : 'bad'
      return h(
        'div',
        { className: 'tile', 'data-metric': key, 'data-value': value, 'data-previous': previous },
        h('div', { className: 'tile-label' }, label),
        h('div', { className: 'tile-value' }, format(value)),
        h(
          'div',
          { className: `tile-change ${tone}`, title: previous === undefined ? undefined : `previous period: ${format(previous)}` },
          previous === undefined ? '' : pct === null ? (previous === 0 ? 'none before' : '') : `${formatChange(pct)} vs previous`,
        ),
      )
    }),
  )
}
