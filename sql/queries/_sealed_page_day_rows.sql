-- The day rows of a /pages window's whole UTC days [days_from, days_to): its 8-day blocks
-- [blocks_from, blocks_to) as blocks, the days around them as days (insights_pages_sealed).
project_id = {project:String} AND version = {version:UInt64}
      AND ((days = 8 AND day >= toDate({blocks_from:DateTime64(3, 'UTC')}) AND day < toDate({blocks_to:DateTime64(3, 'UTC')}))
        OR (days = 1 AND ((day >= toDate({days_from:DateTime64(3, 'UTC')}) AND day < toDate({blocks_from:DateTime64(3, 'UTC')}))
          OR (day >= toDate({blocks_to:DateTime64(3, 'UTC')}) AND day < toDate({days_to:DateTime64(3, 'UTC')})))))
