import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * What every build over events before an instant C needs to stay exact: how many inserts were
 * logged (event_inserts, sql/schema/011) since `since`, and how many of them reached before C;
 * with `verified` (a `last_logged` read before), where the inserts logged after it begin.
 */
export const eventInsertsStatement = (projectId: string, closedAt: DateTime, since: DateTime, verified?: string): Statement => ({
  name: 'event_inserts_since',
  sql: renderSql('event_inserts_since'),
  params: { project: projectId, closed: clickhouseInstant(closedAt), since: clickhouseInstant(since), verified: verified ?? clickhouseInstant(since) },
})

/** A row of event_inserts_since. */
export interface InsertCount {
  inserts: number
  closed_inserts: number
  /** The newest insert counted, as the engine wrote it (to pass back as `verified`). */
  last_logged: string
  verified_inserts: number
  unverified_from: string
}

/** The part of a build a planner checks: which version, its C, and the inserts counted when built. */
export interface VersionedBuild {
  version: number
  closedAt: DateTime
  insertsSince: DateTime
  inserts: number
}
