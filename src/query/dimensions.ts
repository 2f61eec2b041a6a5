/**
 * The breakdown dimensions. Each entry becomes a route `/insights/{projectId}/{name}`, a
 * session-level filter name, an OpenAPI path and a GROUP BY over the `sessions` table, so a
 * new dimension is one line here (test/vocabulary.test.ts holds its columns to that table).
 */
export interface Dimension {
  /** Route segment and filter name. */
  name: string
  /** Column of `sessions` holding the session's value (its first event's, or its entry/exit page). */
  column: string
  /** Column returned as `prefix`, which qualifies the name (a region's country). */
  prefix?: string
  /** Filters by this name are answered by the session's value; entry/exit pages are not filter names. */
  filterable: boolean
  description: string
}

const attribute = (name: string, description: string, prefix?: string): Dimension => ({
  name,
  column: name,
  filterable: true,
  description,
  ...(prefix ? { prefix } : {}),
})

export const DIMENSIONS: readonly Dimension[] = [
  attribute('referrer', 'Referrer URL of the session'),
  attribute('referrer_name', 'Referrer name (e.g. Google)'),
  attribute('referrer_type', 'Referrer type (search, social, …)'),
  attribute('utm_source', 'UTM source'),
  attribute('utm_medium', 'UTM medium'),
  attribute('utm_campaign', 'UTM campaign'),
  attribute('utm_term', 'UTM term'),
  attribute('utm_content', 'UTM content'),
  attribute('country', 'Country (ISO 3166-1 alpha-2)'),
  attribute('region', 'Region, with its country as prefix', 'country'),
  attribute('city', 'City, with its country as prefix', 'country'),
  attribute('device', 'Device type'),
  attribute('brand', 'Device brand'),
  attribute('model', 'Device model'),
  attribute('browser', 'Browser'),
  attribute('browser_version', 'Browser version, with the browser as prefix', 'browser'),
  attribute('os', 'Operating system'),
  attribute('os_version', 'Operating system version, with the OS as prefix', 'os'),
  { name: 'entry_page', column: 'entry_path', prefix: 'entry_origin', filterable: false, description: 'First page of the session, with its origin as prefix' },
  { name: 'exit_page', column: 'exit_path', prefix: 'exit_origin', filterable: false, description: 'Last page of the session, with its origin as prefix' },
]

const byName = new Map(DIMENSIONS.map((d) => [d.name, d]))

export const findDimension = (name: string): Dimension | undefined => byName.get(name)

/** Filter names answered by the session's own value rather than by its events. */
export const SESSION_FILTER_COLUMNS: ReadonlySet<string> = new Set(
  DIMENSIONS.filter((d) => d.filterable).map((d) => d.column),
)
