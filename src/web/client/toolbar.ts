import { getBlob, type Credentials } from './api.ts'
import { describeFailure } from './api.ts'
import { h, uid } from './dom.ts'
import { describeFilter, withoutFilter, type View } from './view.ts'

export interface ProjectInfo {
  id: string
  name: string
}

export interface ToolbarContext {
  view: View
  credentials: Credentials
  /** The organization's projects for a root client; null for a read client (it sees its own). */
  projects: Promise<ProjectInfo[] | null>
  navigate: (view: View) => void
  signOut: (notice?: string) => void
  /** The window the last /metrics answer resolved (X-Quarry-Range), which the export reuses. */
  resolvedRange: () => string | null
}

const RANGE_LABELS: Record<string, string> = {
  '30min': 'Last 30 minutes', lastHour: 'Last hour', last24h: 'Last 24 hours', today: 'Today', yesterday: 'Yesterday',
  '7d': 'Last 7 days', '30d': 'Last 30 days', '3m': 'Last 3 months', '6m': 'Last 6 months', '12m': 'Last 12 months',
  monthToDate: 'Month to date', lastMonth: 'Last month', yearToDate: 'Year to date', lastYear: 'Last year',
}

const labelled = (text: string, control: HTMLElement) => {
  const id = control.id || uid('ctl')
  control.id = id
  return h('span', { className: 'field' }, h('label', { for: id }, text), control)
}

/** The project's name at once; a root client's list replaces it with a picker when it arrives. */
function projectPicker(ctx: ToolbarContext): HTMLElement {
  const shown = h('span', { className: 'field project-name' }, h('span', { className: 'muted' }, 'Project '), ctx.view.project ?? '')
  void ctx.projects.then((projects) => {
    if (!projects || !shown.isConnected) return
    const select = h('select', { id: 'project', onchange: () => ctx.navigate({ ...ctx.view, project: select.value, filters: [] }) },
      ...projects.map((p) => h('option', { value: p.id, selected: p.id === ctx.view.project }, p.name && p.name !== p.id ? `${p.name} (${p.id})` : p.id)))
    shown.replaceWith(labelled('Project', select))
  })
  return shown
}

function rangePicker(ctx: ToolbarContext): HTMLElement[] {
  const ranges = (document.body.dataset.ranges ?? '').split(',').filter((r) => r && r !== 'custom')
  const custom = Boolean(ctx.view.startDate && ctx.view.endDate)
  const select = h('select', { id: 'range' },
    ...ranges.map((r) => h('option', { value: r, selected: !custom && r === ctx.view.range }, RANGE_LABELS[r] ?? r)),
    h('option', { value: 'custom', selected: custom }, 'Custom dates'))
  const start = h('input', { type: 'date', id: 'start-date', value: ctx.view.startDate ?? '' })
  const end = h('input', { type: 'date', id: 'end-date', value: ctx.view.endDate ?? '' })
  const dates = h('span', { className: 'dates', hidden: !custom }, labelled('From', start), labelled('To', end))
  select.addEventListener('change', () => {
    if (select.value === 'custom') {
      dates.hidden = false
      start.focus()
      return
    }
    ctx.navigate({ ...ctx.view, range: select.value, startDate: null, endDate: null })
  })
  const applyDates = () => {
    if (start.value && end.value) ctx.navigate({ ...ctx.view, startDate: start.value, endDate: end.value })
  }
  start.addEventListener('change', applyDates)
  end.addEventListener('change', applyDates)
  const zone = h('input', { id: 'timezone', type: 'text', placeholder: "project's", size: 14, value: ctx.view.timezone ?? '', spellcheck: 'false' })
  zone.addEventListener('change', () => ctx.navigate({ ...ctx.view, timezone: zone.value.trim() || null }))
  return [labelled('Period', select), dates, labelled('Timezone', zone)]
}

function exporter(ctx: ToolbarContext): HTMLElement {
  const formats = (document.body.dataset.exportFormats ?? '').split(',').filter((f) => f && f !== 'json')
  const format = h('select', { id: 'export-format' }, ...formats.map((f) => h('option', { value: f }, f.toUpperCase())))
  const status = h('span', { className: 'export-status', role: 'status' })
  const button = h('button', { type: 'button', id: 'export' }, 'Export events')
  button.addEventListener('click', async () => {
    const range = ctx.resolvedRange()
    if (!range || !ctx.view.project) {
      status.textContent = 'The window is not known yet; wait for the metrics.'
      return
    }
    const [start, end] = range.split('/')
    const params = new URLSearchParams({ projectId: ctx.view.project, start: start!, format: format.value })
    // X-Quarry-Range ends exclusive; /export/events takes its end inclusive to the millisecond.
    params.set('end', new Date(Date.parse(end!) - 1).toISOString())
    if (ctx.view.filters.length) params.set('filters', JSON.stringify(ctx.view.filters))
    button.disabled = true
    status.textContent = 'Exporting…'
    const answer = await getBlob(`/export/events?${params}`, ctx.credentials)
    button.disabled = false
    if (!answer.ok) {
      status.textContent = describeFailure(answer)
      return
    }
    const link = h('a', { href: URL.createObjectURL(answer.body), download: `${ctx.view.project}-events.${format.value}` })
    link.click()
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000)
    status.textContent = `Exported ${(answer.body.size / 1024).toFixed(1)} KB`
  })
  return h('span', { className: 'exporter' }, labelled('Format', format), button, status)
}

export function renderToolbar(ctx: ToolbarContext): HTMLElement {
  const signOut = h('button', { type: 'button', className: 'quiet', onclick: () => ctx.signOut() }, 'Sign out')
  return h('header', { className: 'toolbar' },
    h('h1', {}, 'Quarry'),
    h('div', { className: 'controls' }, projectPicker(ctx), ...rangePicker(ctx), exporter(ctx), signOut))
}

export function renderChips(ctx: ToolbarContext): HTMLElement {
  if (ctx.view.filters.length === 0) return h('div', { className: 'chips', 'aria-label': 'Filters' }, h('span', { className: 'muted' }, 'No filters: click a row of a table to drill down.'))
  return h('div', { className: 'chips', role: 'list', 'aria-label': 'Filters' },
    ...ctx.view.filters.map((f, i) => h('span', { role: 'listitem' },
      h('button', { type: 'button', className: 'chip', 'aria-label': `Remove filter ${describeFilter(f)}`, onclick: () => ctx.navigate(withoutFilter(ctx.view, i)) }, describeFilter(f), h('span', { 'aria-hidden': 'true' }, ' ×')))))
}
