import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { DIMENSIONS, type Dimension } from './dimensions.ts'
import type { PageRequest } from './insights.ts'
import { DAY_MS, type SealedBuild } from './sealed.ts'
import { attributeFragments } from './sealed-live.ts'
import { SEEN_DAYS } from './sealed-pages.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/** Each dimension's (name, prefix, value) of a sealed session, as sealed_build_rollups writes them. */
const dimensionValues = DIMENSIONS.map((d) => `('${d.name}', toString(${d.prefix ?? "''"}), toString(${d.column}))`).join(', ')

/** Writes the live visitors' last sealed day per value under a stamp (sql/queries/sealed_live_seen_write.sql). */
export const sealedLiveSeenWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_seen_write',
  sql: renderSql('sealed_live_seen_write', { ...attributeFragments, dimension_values: dimensionValues }),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt), held_from: clickhouseInstant(build.heldFrom), seen_days: SEEN_DAYS },
})

/**
 * The visitor slots of insights_breakdown_sealed.sql. Counted by the visitors' last day when the
 * window is the rollups' whole UTC days to C (no sealed session read, no filter), starts no earlier
 * than the live visitors were looked up from, and their snapshot is written; else the union of the
 * rows' bitmaps. `rollup`: the window's whole days the rollups answer.
 */
export function breakdownVisitors(dimension: Dimension, req: PageRequest, build: SealedBuild, rollup: { from: DateTime; to: DateTime }) {
  const closedDay = Math.floor(+build.closedAt / DAY_MS) * DAY_MS
  const counted =
    build.seenStamp !== undefined &&
    req.filters.length === 0 &&
    +rollup.from === +req.range.start &&
    +req.range.end >= +build.closedAt &&
    +rollup.from >= closedDay - SEEN_DAYS * DAY_MS
  if (!counted) {
    return { params: {}, fragments: { visitors: 'groupBitmapMerge(numbered)', rollup_visitors: 'visitors', counted: '', live_visitors: 'groupBitmapStateIf(vno, vno != 0)' } }
  }
  const seen = `(SELECT prefix, value, vno FROM sealed_live_seen WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {seen_stamp:UInt64} AND dimension = {dimension:String} AND seen >= toDate({from:DateTime64(3, 'UTC')}))`
  return {
    params: { seen_stamp: build.seenStamp },
    fragments: {
      visitors: 'sum(numbered)',
      rollup_visitors: 'toUInt64(0)',
      counted: renderSql('_sealed_breakdown_counted', { period: 'period' }),
      live_visitors: `toUInt64(uniqExactIf(vno, vno != 0 AND (toString(${dimension.prefix ?? "''"}), toString(${dimension.column}), vno) NOT IN ${seen}))`,
    },
  }
}
