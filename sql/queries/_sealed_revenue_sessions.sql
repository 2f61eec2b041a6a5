-- The sealed sessions with revenue that pass a filtered /metrics' filters, by number, begun from
-- `overlap_from` on: a bitmap of their sorted numbers rather than a set for IN (L, 30d, one country:
-- 340 -> 313 ms of CPU for the statement, same rows).
      AND bitmapContains((
        SELECT bitmapBuild(arraySort(groupArray(sno))) FROM sealed_sessions
        WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND revenue > 0
          AND created_at >= {{overlap_from}} AND created_at < {to:DateTime64(3, 'UTC')}
          {{sealed_filters}}), sno)
