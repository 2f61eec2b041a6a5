-- The half hours {halves} of a sealed chart (sql/schema/040_sealed_event_halves.sql), under the
-- same conditions as its hours (`rollup_conditions`).
        UNION ALL
        SELECT half, events, profiles
        FROM sealed_event_halves
        WHERE project_id = {project:String} AND version = {version:UInt64} AND half IN {halves:Array(DateTime('UTC'))}
          {{rollup_conditions}}