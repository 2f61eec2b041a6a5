import { h, s } from './dom.ts'
import { formatCount } from './format.ts'
import type { MetricsBody, MetricValues } from './tiles.ts'

const LINES: { key: keyof MetricValues; label: string; className: string }[] = [
  { key: 'unique_visitors', label: 'Visitors', className: 'l1' },
  { key: 'total_sessions', label: 'Sessions', className: 'l2' },
  { key: 'total_screen_views', label: 'Page views', className: 'l3' },
]

const HEIGHT = 220
const PAD = { top: 12, right: 12, bottom: 26, left: 48 }

/** Bucket labels: the time of day only when buckets are shorter than a day. */
function label(date: string, hourly: boolean): string {
  const [day, time] = date.split('T')
  return hourly ? `${day!.slice(5)} ${time!.slice(0, 5)}` : day!
}

function niceMax(max: number): number {
  if (max <= 0) return 1
  const step = 10 ** Math.floor(Math.log10(max))
  return Math.ceil(max / step) * step
}

function draw(series: MetricsBody['series'], width: number): SVGSVGElement {
  const plotW = Math.max(width - PAD.left - PAD.right, 10)
  const plotH = HEIGHT - PAD.top - PAD.bottom
  const top = niceMax(Math.max(0, ...series.flatMap((b) => LINES.map((l) => b[l.key]))))
  const x = (i: number) => PAD.left + (series.length <= 1 ? plotW / 2 : (i * plotW) / (series.length - 1))
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH
  const hourly = series.length > 1 && Date.parse(series[1]!.date) - Date.parse(series[0]!.date) < 86_400_000
  const ticks = [0, top / 2, top]
  const labelAt = [...new Set([0, Math.floor((series.length - 1) / 2), series.length - 1])].filter((i) => i >= 0)
  const summary = LINES.map((l) => `${l.label} peak ${formatCount(Math.max(0, ...series.map((b) => b[l.key])))}`).join(', ')
  return s(
    'svg',
    { width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', 'aria-label': `${series.length} buckets; ${summary}` },
    ...ticks.map((t) =>
      s('g', { className: 'grid' }, s('line', { x1: PAD.left, x2: PAD.left + plotW, y1: y(t), y2: y(t) }), s('text', { x: PAD.left - 6, y: y(t) + 4, 'text-anchor': 'end' }, formatCount(t))),
    ),
    ...labelAt.map((i) =>
      s('text', { className: 'axis', x: x(i), y: HEIGHT - 8, 'text-anchor': i === 0 ? 'start' : i === series.length - 1 ? 'end' : 'middle' }, label(series[i]!.date, hourly)),
    ),
    ...LINES.map((l) =>
      s('polyline', { className: `line ${l.className}`, fill: 'none', points: series.map((b, i) => `${x(i).toFixed(1)},${y(b[l.key]).toFixed(1)}`).join(' ') }),
    ),
    ...series.map((b, i) =>
      s(
        'rect',
        { className: 'hover', x: x(i) - plotW / Math.max(series.length, 1) / 2, y: PAD.top, width: plotW / Math.max(series.length, 1), height: plotH },
        s('title', {}, `${label(b.date, hourly)}\n${LINES.map((l) => `${l.label}: ${formatCount(b[l.key])}`).join('\n')}`),
      ),
    ),
  )
}

/** Visitors, sessions and page views per bucket (the interval the server picked from the span). */
export function renderChart(body: MetricsBody, host: HTMLElement): HTMLElement {
  const legend = h('ul', { className: 'legend' }, ...LINES.map((l) => h('li', { className: l.className }, l.label)))
  const plot = h('div', { className: 'plot' })
  const root = h('div', {}, legend, plot)
  let drawnAt = -1
  const redraw = () => {
    const width = Math.floor(plot.clientWidth || host.clientWidth || 600)
    if (width === drawnAt) return
    drawnAt = width
    plot.replaceChildren(draw(body.series, width))
  }
  queueMicrotask(redraw)
  new ResizeObserver(redraw).observe(plot)
  return root
}
