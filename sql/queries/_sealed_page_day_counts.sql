-- A window's whole UTC days that reach C, with nothing before C outside them: its sessions and
-- visitors before C are the pairs whose last view fell on those days (sealed_page_days.*_last),
-- counted, not merged.
bitmapBuild(emptyArrayUInt32()) AS sessions, bitmapBuild(emptyArrayUInt32()) AS visitors,
      sessions_last AS new_sessions, visitors_last AS new_visitors
