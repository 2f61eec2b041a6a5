import type { DateTime } from 'luxon'
import type { Dimension } from './dimensions.ts'
import { compileFilters, filterTarget, type Filter, type FilterContext } from './filters.ts'
import { PostingsChoice } from './sealed-postings.ts'
import type { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/** The event columns whose distinct values sealed_event_postings holds (sql/schema/027_sealed_event_postings.sql). */
export const POSTED_COLUMNS = ['name', 'origin', 'path'] as const
const POSTED: ReadonlySet<string> = new Set(POSTED_COLUMNS)

/** The slot the build's postings statement takes (sql/queries/sealed_build_event_postings.sql). */
export const postingsFragments = { posted_columns: POSTED_COLUMNS.join(', ') }

/** What the filters of a sealed statement need of its build. */
interface Build {
  heldFrom: DateTime
  longestMs: number
}

/**
 * The earliest start of a sealed session with events at or after `start`: one sealed whole begun at
 * most the build's longest session before it, or one that spanned C.
 */
export function overlapStart(build: Build, start: DateTime): DateTime {
  const whole = start.minus({ milliseconds: build.longestMs })
  return whole < build.heldFrom ? whole : build.heldFrom
}

/**
 * A sealed statement's session filters, once for the sealed sessions and once for the live ones.
 * On sealed sessions, an event filter on a posted column is the union of the build's postings from
 * the UTC day of `ctx.from` on: the sessions it filters began at `ctx.from` or later, so every event
 * of theirs is there, whatever its day. Live sessions began at the build's `heldFrom` or later, so
 * the events' scan for them starts there, not at the window's start. Other event filters scan the
 * events as without the sealed history.
 */
export function sealedSessionFilters(filters: readonly Filter[], params: SqlParams, ctx: FilterContext, postings = new PostingsChoice()): { sealed: string; live: string } {
  const sealed = compileFilters(filters, 'sessions', params, {
    ...ctx,
    eventSessions: (predicate, column) => (POSTED.has(column) ? postings.test(predicate, ctx.from, params.values) : undefined),
    sessionKeys: true,
  })
  const live = compileFilters(filters, 'sessions', params, { ...ctx, from: `greatest(${ctx.from}, {held_from:DateTime64(3, 'UTC')})` })
  return { sealed, live }
}

const onPostings = (f: Filter) => {
  const target = filterTarget(f.name)
  return target?.level === 'event' && POSTED.has(target.column ?? '')
}

/** Whether there are filters and each is on a posted column: together, a condition on a sealed session's number alone. */
export const filtersOnPostings = (filters: readonly Filter[]): boolean => filters.length > 0 && filters.every(onPostings)

/**
 * The slots of a filtered /metrics' revenue events (sql/queries/_sealed_metrics_revenue.sql): the
 * sealed sessions that may overlap the window, from their earliest start on, where event filters
 * are looked for too. Filters all on posted columns test the revenue events' session numbers
 * directly (L, 30d, `name is revenue`: that branch 133 -> 70 ms of CPU, a scan of the sealed
 * sessions fewer).
 */
export function sealedRevenueFilters(filters: readonly Filter[], build: Build, earliest: DateTime, params: SqlParams, postings?: PostingsChoice) {
  const from = params.add(clickhouseInstant(overlapStart(build, earliest)), "DateTime64(3, 'UTC')")
  const passing = sealedSessionFilters(filters, params, { project: '{project:String}', from, to: `{to:DateTime64(3, 'UTC')}` }, postings)
  const sessions = filters.every(onPostings) ? passing.sealed : renderSql('_sealed_revenue_sessions', { overlap_from: from, sealed_filters: passing.sealed })
  return { revenue_sessions: sessions, live_filters: passing.live }
}

/** The columns of sealed_page_views (and of the views /pages adds after C) a filter can match a view on. */
const VIEW_COLUMNS: ReadonlySet<string> = new Set(['origin', 'path'])
const onPage = (f: Filter) => {
  const target = filterTarget(f.name)
  return target?.level === 'event' && VIEW_COLUMNS.has(target.column ?? '')
}
const onSession = (f: Filter) => filterTarget(f.name)?.level === 'session'
/** A filter on the event's name: a view's is `screen_view`, so on views it keeps all or none. */
const onName = (f: Filter) => {
  const target = filterTarget(f.name)
  return target?.level === 'event' && target.column === 'name'
}

/**
 * How the sealed page tables answer /pages with these filters, or undefined when they cannot: `page`
 * when each filter is on the view's own origin or path, which keeps a page with all its views or
 * none; `sessions` when some are on session attributes, which keep views by their session's number.
 * With `names`, a filter on the event's name is on the page too (insights_pages_sealed tests it on
 * `screen_view`; /metrics' page tables hold revenue events, whose name is another). Any other filter
 * (an event's other attributes, profiles, groups) needs the events.
 */
export function sealedPageFiltering(filters: readonly Filter[], names = false): 'page' | 'sessions' | undefined {
  if (!filters.every((f) => onPage(f) || onSession(f) || (names && onName(f)))) return undefined
  return filters.some(onSession) ? 'sessions' : 'page'
}

/**
 * Whether a /pages request's filters on session attributes are all on the country: the build's page
 * day rows by country (sql/schema/048_sealed_page_countries.sql) pass or fail whole with them.
 */
export const sessionFiltersOnCountry = (filters: readonly Filter[]): boolean =>
  filters.every((f) => !onSession(f) || filterTarget(f.name)?.column === 'country')

/**
 * A /pages request's filters on the sealed page tables (sealedPageFiltering accepts them, with
 * names): `page`, the condition on a page's origin and path and on the name `screen_view`;
 * `sessions`, the condition on a session (sealed or live) that its session attributes meet. A
 * filter on origin, path or name asks of a session a matching event, which a view or entry of a page
 * that passes is: so it is true there.
 */
export function sealedPageFilters(filters: readonly Filter[], params: SqlParams, ctx: FilterContext): { page: string; sessions: string } {
  const sessions = compileFilters(filters, 'sessions', params, { ...ctx, eventSessions: () => '1' })
  return { page: compileFilters(filters.filter((f) => onPage(f) || onName(f)), 'pageViews', params, ctx), sessions }
}

const rowColumns = (dimension: Dimension) =>
  new Map([[dimension.column, 'value'], ...(dimension.prefix ? [[dimension.prefix, 'prefix'] as const] : [])])

/**
 * Whether every filter is on the dimension's own value or prefix: a session passes such a filter
 * with all the sessions of its row by dimension and value or with none of them.
 */
export function filtersOnRows(dimension: Dimension, filters: readonly Filter[]): boolean {
  const columns = rowColumns(dimension)
  return filters.length > 0 && filters.every((f) => {
    const target = filterTarget(f.name)
    return target?.level === 'session' && columns.has(target.column ?? '')
  })
}

/**
 * The rows of a table by dimension and value (sealed_rollups, sealed_dimension_revenue) with the
 * columns the filters compare under the sessions' names (`value AS country`), when filtersOnRows.
 * Otherwise undefined.
 */
export function filteredRows(dimension: Dimension, filters: readonly Filter[], table: string): string | undefined {
  if (!filtersOnRows(dimension, filters)) return undefined
  const columns = rowColumns(dimension)
  return `(SELECT *, ${[...columns].map(([session, row]) => `${row} AS ${session}`).join(', ')} FROM ${table})`
}
