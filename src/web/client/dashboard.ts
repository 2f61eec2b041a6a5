import { getJson, type Credentials } from './api.ts'
import { card, fill, type Card } from './card.ts'
import { renderChart } from './chart.ts'
import { h, uid } from './dom.ts'
import { formatCount } from './format.ts'
import { breakdownSpec, PAGES, renderList, type BreakdownRow, type ListSpec } from './tables.ts'
import { renderTiles, type MetricsBody } from './tiles.ts'
import { renderChips, renderToolbar, type ToolbarContext } from './toolbar.ts'
import { windowParams, withFilters, type Filter } from './view.ts'

const PAGE_SIZE = '10'
const LIVE_REFRESH_MS = 30_000

/** The tabbed tables: each tab a dimension route (and the dimension that qualifies it, if any). */
const GROUPS: { title: string; tabs: [route: string, label: string, prefix?: string][] }[] = [
  { title: 'Sources', tabs: [['referrer_name', 'Referrers'], ['referrer', 'URLs'], ['referrer_type', 'Types']] },
  { title: 'Campaigns', tabs: [['utm_source', 'Source'], ['utm_medium', 'Medium'], ['utm_campaign', 'Campaign'], ['utm_term', 'Term'], ['utm_content', 'Content']] },
  { title: 'Locations', tabs: [['country', 'Countries'], ['region', 'Regions', 'country'], ['city', 'Cities', 'country']] },
  { title: 'Technology', tabs: [['device', 'Devices'], ['browser', 'Browsers'], ['os', 'Systems']] },
]

/** The tab each group shows, kept while the view changes. */
const chosenTab = new Map<string, number>()
let liveTimer: ReturnType<typeof setInterval> | undefined
let generation = 0

export interface DashboardContext extends Omit<ToolbarContext, 'resolvedRange'> {
  credentials: Credentials
}

/** Stops what a drawn view still runs (the live refresh), when the page leaves it. */
export function stopDashboard(): void {
  clearInterval(liveTimer)
  generation++
}

export function renderDashboard(root: HTMLElement, ctx: DashboardContext): Promise<void> {
  const mine = ++generation
  clearInterval(liveTimer)
  document.documentElement.dataset.complete = 'false'
  let resolved: string | null = null
  const project = ctx.view.project!
  const options = { onSignedOut: () => ctx.signOut('Signed out: the server refused this client id or secret (401).') }
  const path = (route: string, extra: Record<string, string> = {}) => {
    const params = windowParams(ctx.view)
    for (const [k, v] of Object.entries(extra)) params.set(k, v)
    return `/insights/${encodeURIComponent(project)}/${route}?${params}`
  }
  const get = <T>(url: string) => getJson<T>(url, ctx.credentials)
  const drill = (filters: Filter[]) => ctx.navigate(withFilters(ctx.view, filters))

  const toolbarCtx: ToolbarContext = { ...ctx, resolvedRange: () => resolved }
  const tiles = card('Overview', 'tiles')
  const chart = card('Visitors, sessions and page views', 'chart')
  const live = card('Live', 'live')
  const pages = card('Top pages', 'pages')

  const list = <Row>(c: Card, spec: ListSpec<Row>) =>
    fill(c, () => get<Row[]>(path(spec.route, { limit: PAGE_SIZE })), (a) => {
      c.body.append(renderList(spec, a, (cursor) => get<Row[]>(path(spec.route, { limit: PAGE_SIZE, cursor })), drill))
    }, options)

  const groups = GROUPS.map((group) => {
    const c = card(group.title, `group-${group.tabs[0]![0]}`)
    const tablist = h('div', { role: 'tablist', 'aria-label': group.title, className: 'tabs' })
    const panelId = uid('panel')
    c.body.id = panelId
    c.body.setAttribute('role', 'tabpanel')
    const buttons = group.tabs.map(([route, label], i) => {
      const b = h('button', { type: 'button', role: 'tab', id: uid('tab'), 'aria-controls': panelId, 'data-route': route }, label)
      b.addEventListener('click', () => void select(i, true))
      b.addEventListener('keydown', (e) => {
        const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0
        if (step) void select((i + step + group.tabs.length) % group.tabs.length, true)
      })
      return b
    })
    tablist.append(...buttons)
    c.root.querySelector('.card-head')!.after(tablist)
    const select = (i: number, focus: boolean) => {
      chosenTab.set(group.title, i)
      buttons.forEach((b, j) => {
        b.setAttribute('aria-selected', String(i === j))
        b.tabIndex = i === j ? 0 : -1
      })
      if (focus) buttons[i]!.focus()
      c.body.setAttribute('aria-labelledby', buttons[i]!.id)
      const [route, , prefix] = group.tabs[i]!
      c.root.dataset.route = route
      return list<BreakdownRow>(c, breakdownSpec(route, prefix))
    }
    return { c, first: () => select(chosenTab.get(group.title) ?? 0, false) }
  })

  root.replaceChildren(
    renderToolbar(toolbarCtx),
    renderChips(toolbarCtx),
    h('div', { className: 'top' }, tiles.root, live.root),
    chart.root,
    h('div', { className: 'grid' }, pages.root, ...groups.map((g) => g.c.root)),
  )

  const refreshLive = () =>
    fill(live, () => get<{ visitors: number }>(`/insights/${encodeURIComponent(project)}/live`), (a) => {
      live.body.append(h('p', { className: 'live' }, h('span', { className: 'pulse', 'aria-hidden': 'true' }), h('strong', { 'data-value': a.body.visitors }, formatCount(a.body.visitors)), ' visitors in the last 5 minutes'))
    }, options)
  liveTimer = setInterval(() => void refreshLive(), LIVE_REFRESH_MS)

  const metrics = fill(tiles, () => get<MetricsBody>(path('metrics', { previous: 'true' })), (a) => {
    resolved = a.headers.get('X-Quarry-Range')
    tiles.body.append(renderTiles(a.body))
    if (resolved) tiles.body.append(h('p', { className: 'muted window' }, `Window ${resolved.replace('/', ' to ')} (${a.headers.get('X-Quarry-Timezone') ?? ''}), compared with the period just before`))
    chart.root.dataset.state = 'ready'
    chart.body.replaceChildren(renderChart(a.body, chart.body))
  }, options).then(() => {
    // The chart draws from the same answer, so it shares the tiles' outcome.
    if (tiles.root.dataset.state === 'error') {
      chart.root.dataset.state = 'error'
      chart.root.dataset.status = tiles.root.dataset.status
      chart.body.replaceChildren(h('p', { className: 'error', role: 'alert' }, 'No series: the metrics request failed (see Overview).'))
    }
    chart.root.querySelector('.cost')!.replaceWith(tiles.root.querySelector('.cost')!.cloneNode(true))
  })

  return Promise.all([metrics, refreshLive(), list(pages, PAGES), ...groups.map((g) => g.first())]).then(() => {
    if (mine !== generation) return
    document.documentElement.dataset.complete = 'true'
    document.documentElement.dataset.generation = String(mine)
    performance.mark(`quarry:complete:${mine}`)
  })
}

