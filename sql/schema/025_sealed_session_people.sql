-- Funnels by person (groupBy=profile_id) on the sealed history (src/query/product/sealed-units.ts, sql/queries/insights_funnel_people_sealed.sql):
-- each row of sealed_session_events also says whose events it holds, so that a request groups the
-- window's rows by person instead of the window's events (L, 30 days: 2.4 s over the events, most
-- of it grouping 5M events by person and the person links). `device_key` and `profile_key` are
-- sipHash128 of the events' device_id and profile_id (0 for an empty one): the person is the
-- profile, or for anonymous events (the two equal) the profile the device identified as first in
-- the window, which requests compute from the rows of identified events. A row holds one
-- (device, profile) pair: a session with several (`mixed`, its pair arbitrary) keeps its row for
-- the per-session statements, and its events are written again as `part` rows, one per pair, as
-- are events without a session (per device, profile and UTC day); per-session statements skip
-- `part` rows, per-person ones `mixed` rows. `linked` marks anonymous rows whose device identified
-- itself before C: only their devices look for a link among the sealed rows (the events after C
-- are looked at whole), so a window does not match every anonymous device against the identified.
ALTER TABLE sealed_session_events
  ADD COLUMN IF NOT EXISTS device_key UInt128,
  ADD COLUMN IF NOT EXISTS profile_key UInt128,
  ADD COLUMN IF NOT EXISTS mixed Bool,
  ADD COLUMN IF NOT EXISTS part Bool,
  ADD COLUMN IF NOT EXISTS linked Bool;
