-- The sealed sessions with revenue that pass a filtered /metrics' filters, by number, begun from
-- `overlap_from` on.
      AND sno IN (
        SELECT sno FROM sealed_sessions
        WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND revenue > 0
          AND created_at >= {{overlap_from}} AND created_at < {to:DateTime64(3, 'UTC')}
          {{sealed_filters}})
