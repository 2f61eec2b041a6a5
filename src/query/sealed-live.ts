import type { Statement } from '../clickhouse/run.ts'
import { DIMENSIONS } from './dimensions.ts'
import { UTM_FIELDS, utmPropertyKey } from './event-columns.ts'
import type { SealedBuild } from './sealed.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/*
 * The sessions after C: the attributes a session takes from its first event (which the build's
 * held sessions take too), where a statement reads the live sessions, and the statements that write
 * the live sessions and the events after C under a stamp, and check for sessions continued across C.
 */

/** The session attributes a session takes from its first event: every filterable dimension's column. */
const SESSION_ATTRIBUTES: readonly string[] = DIMENSIONS.filter((d) => d.filterable).map((d) => d.column)

/** The event expression an attribute comes from (UTM values live in properties, OpenPanel's convention). */
const eventExpression = (attribute: string) =>
  (UTM_FIELDS as readonly string[]).includes(attribute) ? `properties['${utmPropertyKey(attribute)}']` : attribute

/** The slots every statement with the session-of-events partial or attribute lists takes. */
export const attributeFragments = {
  first_attributes: SESSION_ATTRIBUTES.map((a) => `tupleElement(min((t, ${eventExpression(a)})), 2) AS ${a}`).join(',\n'),
  attribute_names: SESSION_ATTRIBUTES.join(', '),
  live_attributes: SESSION_ATTRIBUTES.map((a) => `if(h.held, h.${a}, t.${a}) AS ${a}`).join(',\n    '),
}

/** The `live` CTE of a sealed statement: the written live sessions, or the statement computes them. */
export function liveSource(build: SealedBuild): string {
  return build.liveStamp === undefined ? renderSql('_sealed_live', attributeFragments) : renderSql('_sealed_live_snapshot')
}

/**
 * Where a statement's live branch (`{{live_table}}` … `{{live_stamp}}`) reads the live sessions: the
 * written rows in place, or the `live` CTE that computes them. In place rather than through the CTE
 * over them: M's statements 1 ms faster (benchmarks/README.md, twenty-first stop).
 */
export function liveRows(build: SealedBuild): { live_table: string; live_stamp: string } {
  return build.liveStamp === undefined ? { live_table: 'live', live_stamp: '' } : { live_table: 'sealed_live', live_stamp: renderSql('_sealed_live_stamp') }
}

/** Writes the live sessions of a build under a stamp (sql/queries/sealed_live_write.sql). */
export const sealedLiveWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_write',
  sql: renderSql('sealed_live_write', attributeFragments),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt), held_from: clickhouseInstant(build.heldFrom) },
})

/** Writes the events after C with their profiles' numbers under a stamp (sql/queries/sealed_live_events_write.sql). */
export const sealedLiveEventsWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_events_write',
  sql: renderSql('sealed_live_events_write'),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt) },
})

/** How many sealed sessions events from C on now continue. */
export const sealedCrossingStatement = (projectId: string, build: SealedBuild, from: string): Statement => ({
  name: 'sealed_crossing',
  sql: renderSql('sealed_crossing'),
  params: { project: projectId, version: build.version, from },
})
