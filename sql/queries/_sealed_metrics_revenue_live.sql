-- The revenue events of a filtered sealed /metrics window's live sessions that pass the filters,
-- from the events after the earliest held session's start (no session sealed whole has one there).
-- That start's day is said apart: the events' key puts the day before the time, and the key
-- analysis prunes by the time alone only within a day, so each part's granule that spans a midnight
-- would pass and be read with its session ids (L, 30d, one country: 159 granules instead of 8,
-- 117-198 ms instead of 32-66 for this branch at load 8).
SELECT created_at, revenue FROM events
    WHERE project_id = {project:String} AND name = 'revenue'
      AND created_at >= greatest({earliest:DateTime64(3, 'UTC')}, {held_from:DateTime64(3, 'UTC')}) AND created_at < {to:DateTime64(3, 'UTC')}
      AND toDate(created_at) >= toDate(greatest({earliest:DateTime64(3, 'UTC')}, {held_from:DateTime64(3, 'UTC')}))
      AND session_id IN (SELECT id FROM live WHERE revenue > 0 {{live_filters}})
