-- A window's whole UTC days that reach C, with nothing before C outside them: its sessions and
-- visitors before C are the pairs whose last view fell on those days (sealed_page_days.*_last),
-- counted, not merged; its numbered visitors after C are added unless `seen` on those days
-- (_sealed_page_seen.sql, the `live_visitors` slot).
bitmapBuild(emptyArrayUInt32()) AS sessions, bitmapBuild(emptyArrayUInt32()) AS visitors,
      sessions_last AS new_sessions, visitors_last AS new_visitors
