import type { Answer } from './api.ts'
import { h, uid } from './dom.ts'
import { formatCount, formatPercent, formatSeconds } from './format.ts'
import type { Filter } from './view.ts'

export interface Column<Row> {
  label: string
  value: (row: Row) => string
  numeric?: boolean
}

/** A ranked list: its columns, the label of a row, and the filters a click on it adds. */
export interface ListSpec<Row> {
  route: string
  columns: Column<Row>[]
  name: (row: Row) => string
  /** Shown after the name, quieter: what tells equal names apart (a page's host). */
  detail?: (row: Row) => string
  drill: (row: Row) => Filter[] | null
}

export interface PageRow {
  origin: string
  path: string
  title: string
  sessions: number
  visitors: number
  bounce_rate: number
  avg_duration: number
}

export interface BreakdownRow {
  name: string | null
  prefix?: string | null
  sessions: number
  visitors: number
  bounce_rate: number
}

export const PAGES: ListSpec<PageRow> = {
  route: 'pages',
  name: (r) => r.path || '/',
  detail: (r) => r.origin.replace(/^[a-z]+:\/\//, ''),
  drill: (r) => [{ name: 'path', operator: 'is', value: [r.path] }],
  columns: [
    { label: 'Sessions', value: (r) => formatCount(r.sessions), numeric: true },
    { label: 'Visitors', value: (r) => formatCount(r.visitors), numeric: true },
    { label: 'Bounce', value: (r) => formatPercent(r.bounce_rate), numeric: true },
    { label: 'Time on page', value: (r) => formatSeconds(r.avg_duration), numeric: true },
  ],
}

/** A dimension's rows; a qualified value (a city in its country) drills down by both. */
export function breakdownSpec(route: string, prefixName?: string): ListSpec<BreakdownRow> {
  return {
    route,
    name: (r) => (r.name === null ? '(none)' : r.prefix ? `${r.name}, ${r.prefix}` : r.name),
    drill: (r) => {
      if (r.name === null) return null
      const own: Filter = { name: route, operator: 'is', value: [r.name] }
      return prefixName && r.prefix ? [{ name: prefixName, operator: 'is', value: [r.prefix] }, own] : [own]
    },
    columns: [
      { label: 'Sessions', value: (r) => formatCount(r.sessions), numeric: true },
      { label: 'Visitors', value: (r) => formatCount(r.visitors), numeric: true },
      { label: 'Bounce', value: (r) => formatPercent(r.bounce_rate), numeric: true },
    ],
  }
}

type Ok<T> = Extract<Answer<T>, { ok: true }>

/**
 * The table of one answer, and a "Load more" button while the server sends a next cursor
 * (X-Next-Cursor); each row's name is a button that adds its filters.
 */
export function renderList<Row>(
  spec: ListSpec<Row>,
  first: Ok<Row[]>,
  more: (cursor: string) => Promise<Answer<Row[]>>,
  onDrill: (filters: Filter[]) => void,
): HTMLElement {
  const caption = uid('list')
  const tbody = h('tbody')
  // Only worth its room when it tells rows apart: pages of several hosts.
  const showDetail = spec.detail !== undefined && new Set(first.body.map((row) => spec.detail!(row))).size > 1
  const append = (rows: Row[]) => {
    for (const row of rows) {
      const filters = spec.drill(row)
      const name = spec.name(row)
      const cell = filters
        ? h('button', { className: 'drill name', type: 'button', title: `Filter by ${name}`, onclick: () => onDrill(filters) }, name)
        : h('span', { className: 'muted name' }, name)
      const detail = showDetail ? spec.detail?.(row) : undefined
      tbody.append(h('tr', {}, h('th', { scope: 'row' }, cell, detail ? h('span', { className: 'detail' }, detail) : null), ...spec.columns.map((c) => h('td', { className: c.numeric ? 'num' : '' }, c.value(row)))))
    }
  }
  append(first.body)
  const status = h('p', { className: 'list-status', role: 'status' })
  const footer = h('div', { className: 'list-foot' }, status)
  const table = h(
    'table',
    { 'aria-describedby': caption },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), ...spec.columns.map((c) => h('th', { scope: 'col', className: c.numeric ? 'num' : '' }, c.label)))),
    tbody,
  )
  const offer = (cursor: string | null) => {
    footer.querySelector('button')?.remove()
    if (!cursor) return
    const button = h('button', { type: 'button', className: 'more' }, 'Load more')
    button.addEventListener('click', async () => {
      button.disabled = true
      const next = await more(cursor)
      if (next.ok) {
        append(next.body)
        offer(next.headers.get('X-Next-Cursor'))
        status.textContent = `${tbody.rows.length} rows`
      } else {
        button.disabled = false
        status.textContent = `Could not load more: ${next.status} ${next.message}`
      }
    })
    footer.prepend(button)
  }
  offer(first.headers.get('X-Next-Cursor'))
  if (first.body.length === 0) status.textContent = 'No data in this window.'
  return h('div', { className: 'list' }, h('span', { id: caption, className: 'sr-only' }, `${spec.route} ranked by sessions`), table, footer)
}
