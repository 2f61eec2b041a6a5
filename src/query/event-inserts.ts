import { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * What every build over events before an instant C needs to stay exact, per project: how many
 * inserts were logged (event_inserts, sql/schema/011) since `since`, and how many of them reached
 * before C; with `verified` (a `last_logged` read before), where the inserts logged after it begin.
 */
export interface InsertQuery {
  projectId: string
  closedAt: DateTime
  since: DateTime
  verified?: string
}

/** One statement for every entry: read the rows with insertCounts. */
export const eventInsertsStatement = (entries: readonly InsertQuery[]): Statement => ({
  name: 'event_inserts_since',
  sql: renderSql('event_inserts_since'),
  // Named apart from the route statements' own, so that explain=sql's one map renames none of them.
  params: {
    inserts_projects: entries.map((e) => e.projectId),
    inserts_closed: entries.map((e) => clickhouseInstant(e.closedAt)),
    inserts_since: entries.map((e) => clickhouseInstant(e.since)),
    inserts_verified: entries.map((e) => e.verified ?? clickhouseInstant(e.since)),
  },
})

/** The count of one entry: what event_inserts_since gives it. */
export interface InsertCount {
  inserts: number
  closed_inserts: number
  /** The newest insert counted, as the engine wrote it (to pass back as `verified`). */
  last_logged: string
  verified_inserts: number
  unverified_from: string
}

/** A row of event_inserts_since: an entry's count, by its position (from 1). */
export type InsertCountRow = InsertCount & { entry: number }

const NEVER = clickhouseInstant(DateTime.fromMillis(0, { zone: 'utc' }))

/** Each entry's count from the statement's rows, in the entries' order; none logged for an entry without a row. */
export const insertCounts = (entries: readonly InsertQuery[], rows: readonly InsertCountRow[]): InsertCount[] => {
  const byEntry = new Map(rows.map(({ entry, ...count }) => [Number(entry), count]))
  return entries.map(
    (e, i) => byEntry.get(i + 1) ?? { inserts: 0, closed_inserts: 0, last_logged: NEVER, verified_inserts: 0, unverified_from: clickhouseInstant(e.closedAt) },
  )
}

/** The part of a build a planner checks: which version, its C, and the inserts counted when built. */
export interface VersionedBuild {
  version: number
  closedAt: DateTime
  insertsSince: DateTime
  inserts: number
}
