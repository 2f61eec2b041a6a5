-- Replaced by 008_sessions_by_attribute.sql; kept as the history that existing data directories applied.
-- Sessions are derived from events inside ClickHouse, whatever loads the events. Each insert
-- block contributes a partial row per session; AggregatingMergeTree combines them, and readers
-- use FINAL so that a session split across inserts still reads as one row.
-- First-event attributes are kept as the minimum of a (time, attributes…) tuple: the tuple
-- with the earliest time wins, so no argMin state is needed.
CREATE TABLE IF NOT EXISTS sessions (
  project_id String,
  id String,
  created_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  ended_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  first SimpleAggregateFunction(min, Tuple(
    at DateTime64(3, 'UTC'), profile_id String, device_id String,
    referrer String, referrer_name String, referrer_type String,
    utm_source String, utm_medium String, utm_campaign String, utm_term String, utm_content String,
    country String, region String, city String,
    device String, brand String, model String,
    browser String, browser_version String, os String, os_version String)),
  entry SimpleAggregateFunction(min, Tuple(at DateTime64(3, 'UTC'), origin String, path String)),
  exit SimpleAggregateFunction(max, Tuple(at DateTime64(3, 'UTC'), origin String, path String)),
  screen_view_count SimpleAggregateFunction(sum, UInt64),
  event_count SimpleAggregateFunction(sum, UInt64),
  revenue SimpleAggregateFunction(sum, UInt64),
  duration UInt64 ALIAS toUInt64(dateDiff('millisecond', created_at, ended_at)),
  is_bounce UInt8 ALIAS screen_view_count <= 1,
  profile_id String ALIAS tupleElement(first, 'profile_id'),
  device_id String ALIAS tupleElement(first, 'device_id'),
  referrer String ALIAS tupleElement(first, 'referrer'),
  referrer_name String ALIAS tupleElement(first, 'referrer_name'),
  referrer_type String ALIAS tupleElement(first, 'referrer_type'),
  utm_source String ALIAS tupleElement(first, 'utm_source'),
  utm_medium String ALIAS tupleElement(first, 'utm_medium'),
  utm_campaign String ALIAS tupleElement(first, 'utm_campaign'),
  utm_term String ALIAS tupleElement(first, 'utm_term'),
  utm_content String ALIAS tupleElement(first, 'utm_content'),
  country String ALIAS tupleElement(first, 'country'),
  region String ALIAS tupleElement(first, 'region'),
  city String ALIAS tupleElement(first, 'city'),
  device String ALIAS tupleElement(first, 'device'),
  brand String ALIAS tupleElement(first, 'brand'),
  model String ALIAS tupleElement(first, 'model'),
  browser String ALIAS tupleElement(first, 'browser'),
  browser_version String ALIAS tupleElement(first, 'browser_version'),
  os String ALIAS tupleElement(first, 'os'),
  os_version String ALIAS tupleElement(first, 'os_version'),
  entry_origin String ALIAS tupleElement(entry, 'origin'),
  entry_path String ALIAS tupleElement(entry, 'path'),
  exit_origin String ALIAS tupleElement(exit, 'origin'),
  exit_path String ALIAS tupleElement(exit, 'path')
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT
  project_id,
  session_id AS id,
  min(t) AS created_at,
  max(t) AS ended_at,
  min((t, profile_id, device_id, referrer, referrer_name, referrer_type,
       properties['__query.utm_source'], properties['__query.utm_medium'], properties['__query.utm_campaign'],
       properties['__query.utm_term'], properties['__query.utm_content'],
       country, region, city, device, brand, model, browser, browser_version, os, os_version)) AS first,
  -- Entry and exit pages come from screen views only; other events carry a sentinel that loses.
  min(if(name = 'screen_view', (t, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry,
  max(if(name = 'screen_view', (t, origin, path), (toDateTime64(0, 3, 'UTC'), '', ''))) AS exit,
  toUInt64(countIf(name = 'screen_view')) AS screen_view_count,
  toUInt64(count()) AS event_count,
  toUInt64(sumIf(revenue, name = 'revenue')) AS revenue
FROM (SELECT *, created_at AS t FROM events WHERE session_id != '')
GROUP BY project_id, session_id;
