import type { Statement } from '../clickhouse/run.ts'
import { renderSql } from './sql-templates.ts'

/**
 * A set below this share of the sessions sealed from its day on is tested as a hash set of its
 * numbers (IN), a larger one with its bitmap. L, 30 days, 1.48M sealed sessions, a country
 * breakdown (medians of 7-9, same rows): `name is revenue` (73k sessions, 5 %) 163-167 ms with the
 * bitmap, 117-123 with IN; `path is /blog` (117k, 8 %) 135 against 140; `name is screen_view`
 * (every session) 173-188 against 335-379. IN builds its hash set from every number of the set,
 * then looks each session up in it, where the bitmap answers each lookup by a search of its
 * containers.
 */
const LIST_BELOW_SHARE = 1 / 12

/** Whether a set of `posted` sessions, among `sealed` sealed from its day on, is tested with IN. */
export const testedAsList = (posted: number, sealed: number): boolean => posted < sealed * LIST_BELOW_SHARE

const PLACEHOLDER = /\{(\w+):[^{}]+\}/g

/** The build's postings that match `predicate` from the UTC day of `from` on, as `sessions` gives them. */
const postings = (predicate: string, from: string, sessions: string) => renderSql('_sealed_event_postings', { predicate, from, sessions }).trim()

/**
 * How a sealed statement tests that a sealed session is in a postings set (a filter on an event's
 * name, origin or path): with IN where the set is known to be small, with its bitmap otherwise. A
 * set is known by its predicate and first day with their values, per build (`small`); those the
 * statement tests that are not known yet are noted, for one read of their sizes (`sizes`).
 */
export class PostingsChoice {
  /** The sets tested whose size is not known, by key. */
  readonly unknown = new Map<string, { predicate: string; from: string }>()

  constructor(private readonly small: ReadonlyMap<string, boolean> = new Map()) {}

  /** The condition on a sealed session's number `sno`; `values`, the statement's parameters so far. */
  test(predicate: string, from: string, values: Record<string, unknown>): string {
    const key = JSON.stringify([predicate, from, [...`${predicate} ${from}`.matchAll(PLACEHOLDER)].map((m) => values[m[1]!])])
    const small = this.small.get(key)
    if (small === undefined) this.unknown.set(key, { predicate, from })
    return small
      ? `sno IN (${postings(predicate, from, 'arrayJoin(bitmapToArray(sessions))')})`
      : `bitmapContains((${postings(predicate, from, 'groupBitmapMergeState(sessions)')}), sno)`
  }

  /** The read of the unknown sets' sizes, its rows numbered by `keys`; undefined when every size is known. */
  sizes(params: Record<string, unknown>): { statement: Statement; keys: string[] } | undefined {
    if (this.unknown.size === 0) return undefined
    const keys = [...this.unknown.keys()]
    const sets = [...this.unknown.values()].map(({ predicate, from }, set) => renderSql('_sealed_postings_size', { set: String(set), from, posted: postings(predicate, from, 'bitmapCardinality(groupBitmapMergeState(sessions))') }).trim())
    return { statement: { name: 'sealed_postings_sizes', sql: renderSql('sealed_postings_sizes', { sets: sets.join('\nUNION ALL\n') }), params }, keys }
  }
}
