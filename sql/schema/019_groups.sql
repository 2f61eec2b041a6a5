-- Groups, OpenPanel's group analytics: an event, a session and a profile carry the ids of the
-- groups (companies, teams, …) they belong to, and `groups` holds each group's type, name and
-- properties. The ids are free strings: nothing requires a `groups` row for them.
--
-- The columns are added with their default ([]), which is what every stored event, session and
-- profile had, so nothing is derived again. Only the sessions view is replaced (to collect the
-- groups): events inserted between its drop and its creation, a few milliseconds, would miss their
-- sessions, so pause ingestion while this runs.
ALTER TABLE events ADD COLUMN IF NOT EXISTS groups Array(String) DEFAULT [] CODEC(ZSTD(3)) AFTER session_id;

ALTER TABLE profiles ADD COLUMN IF NOT EXISTS groups Array(String) DEFAULT [] AFTER project_id;

-- A session's groups are the union of its events' groups, as OpenPanel accumulates them.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS groups SimpleAggregateFunction(groupUniqArrayArray, Array(String)) DEFAULT [];

DROP VIEW IF EXISTS sessions_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT
  project_id,
  session_id AS id,
  min(t) AS created_at,
  max(t) AS ended_at,
  min((t, profile_id, reinterpretAsUInt128(sipHash128(profile_id)))) AS first_profile_id,
  min((t, device_id)) AS first_device_id,
  min((t, referrer)) AS first_referrer,
  min((t, referrer_name)) AS first_referrer_name,
  min((t, referrer_type)) AS first_referrer_type,
  min((t, properties['__query.utm_source'])) AS first_utm_source,
  min((t, properties['__query.utm_medium'])) AS first_utm_medium,
  min((t, properties['__query.utm_campaign'])) AS first_utm_campaign,
  min((t, properties['__query.utm_term'])) AS first_utm_term,
  min((t, properties['__query.utm_content'])) AS first_utm_content,
  min((t, country)) AS first_country,
  min((t, region)) AS first_region,
  min((t, city)) AS first_city,
  min((t, device)) AS first_device,
  min((t, brand)) AS first_brand,
  min((t, model)) AS first_model,
  min((t, browser)) AS first_browser,
  min((t, browser_version)) AS first_browser_version,
  min((t, os)) AS first_os,
  min((t, os_version)) AS first_os_version,
  min(if(name = 'screen_view', (t, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry,
  max(if(name = 'screen_view', (t, origin, path), (toDateTime64(0, 3, 'UTC'), '', ''))) AS exit,
  toUInt64(countIf(name = 'screen_view')) AS screen_view_count,
  toUInt64(count()) AS event_count,
  toUInt64(sumIf(revenue, name = 'revenue')) AS revenue,
  groupUniqArrayArray(groups) AS groups
FROM (SELECT *, created_at AS t FROM events WHERE session_id != '')
GROUP BY project_id, session_id;

-- OpenPanel's table: a group is (project_id, id); a write is a new row with a higher version (ms
-- of the write), a deletion a row with deleted = 1, and FINAL keeps each group's latest row and
-- drops it when that row is a deletion.
CREATE TABLE IF NOT EXISTS groups (
  id String,
  project_id String,
  type String,
  name String,
  properties Map(String, String),
  created_at DateTime64(3, 'UTC'),
  version UInt64,
  deleted UInt8 DEFAULT 0
)
ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (project_id, id);
