-- The sessions view, cheaper per event and with the same rows: `sessions` and every row in it are
-- unchanged, only sessions_mv is replaced.
--
-- 019's view kept 22 `min(tuple)` states per session. `min` over a tuple falls back to the generic
-- single-value state, which turns each event's tuple into a generic value to compare it: about
-- 70 ms per aggregate per 200k events, most of the view's time, and the view was about 60 % of a
-- seed's insert (benchmarks/README.md, "The seed target"). Each tuple is now folded into one String
-- whose bytes sort as the tuple does, and `min` over a String is a plain byte comparison:
--
--   key(t, value) = 8 bytes of t, big-endian, sign bit flipped (so they sort as the signed time)
--                   followed by the value's bytes.
--
-- Strings compare byte by byte (unsigned), a prefix first, in tuples as in `min`, so the smallest
-- key is the key of the smallest (t, value): at equal times the smallest value wins, as before,
-- for each attribute on its own. Every event takes part in every first-event attribute, so all
-- their keys start with the same smallest t; it is read back once, from the profile's key, and not
-- taken from min(t): chDB 26.7's JIT-compiled `min` over DateTime64 (after a few runs of the same
-- aggregate) orders times before 1970 after later ones, and 019's tuples never went through it.
-- Entry and exit hold two strings after t: the origin is written with each 0x00 byte as
-- 0x00 0x01 and closed by 0x00 0x00, which keeps (origin, path) order (a shorter origin still
-- sorts first) and finds the origin's end again. Their screen-view condition and sentinels are
-- 019's, applied to the event before it is encoded, so the same event wins.
--
-- Run with ingestion paused: events inserted between the drop and the create would miss their
-- sessions (as in 019).
DROP VIEW IF EXISTS sessions_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
-- The first event's time, from its key (see above).
WITH fromUnixTimestamp64Milli(reinterpretAsInt64(bitXor(reinterpretAsUInt64(reverse(substring(k_profile_id, 1, 8))), 9223372036854775808)), 'UTC') AS first_at
SELECT
  project_id,
  id,
  created_at,
  ended_at,
  -- The visitor key is a function of the profile id, so it is computed once for the winner.
  (first_at, substring(k_profile_id, 9), reinterpretAsUInt128(sipHash128(substring(k_profile_id, 9)))) AS first_profile_id,
  (first_at, substring(k_device_id, 9)) AS first_device_id,
  (first_at, substring(k_referrer, 9)) AS first_referrer,
  (first_at, substring(k_referrer_name, 9)) AS first_referrer_name,
  (first_at, substring(k_referrer_type, 9)) AS first_referrer_type,
  (first_at, substring(k_utm_source, 9)) AS first_utm_source,
  (first_at, substring(k_utm_medium, 9)) AS first_utm_medium,
  (first_at, substring(k_utm_campaign, 9)) AS first_utm_campaign,
  (first_at, substring(k_utm_term, 9)) AS first_utm_term,
  (first_at, substring(k_utm_content, 9)) AS first_utm_content,
  (first_at, substring(k_country, 9)) AS first_country,
  (first_at, substring(k_region, 9)) AS first_region,
  (first_at, substring(k_city, 9)) AS first_city,
  (first_at, substring(k_device, 9)) AS first_device,
  (first_at, substring(k_brand, 9)) AS first_brand,
  (first_at, substring(k_model, 9)) AS first_model,
  (first_at, substring(k_browser, 9)) AS first_browser,
  (first_at, substring(k_browser_version, 9)) AS first_browser_version,
  (first_at, substring(k_os, 9)) AS first_os,
  (first_at, substring(k_os_version, 9)) AS first_os_version,
  (fromUnixTimestamp64Milli(reinterpretAsInt64(bitXor(reinterpretAsUInt64(reverse(substring(k_entry, 1, 8))), 9223372036854775808)), 'UTC'),
   replaceAll(substring(k_entry, 9, position(k_entry, '\x00\x00', 9) - 9), '\x00\x01', '\x00'),
   substring(k_entry, position(k_entry, '\x00\x00', 9) + 2)) AS entry,
  (fromUnixTimestamp64Milli(reinterpretAsInt64(bitXor(reinterpretAsUInt64(reverse(substring(k_exit, 1, 8))), 9223372036854775808)), 'UTC'),
   replaceAll(substring(k_exit, 9, position(k_exit, '\x00\x00', 9) - 9), '\x00\x01', '\x00'),
   substring(k_exit, position(k_exit, '\x00\x00', 9) + 2)) AS exit,
  screen_view_count,
  event_count,
  revenue,
  groups
FROM (
  SELECT
    project_id,
    session_id AS id,
    min(t) AS created_at,
    max(t) AS ended_at,
    min(concat(k, profile_id)) AS k_profile_id,
    min(concat(k, device_id)) AS k_device_id,
    min(concat(k, referrer)) AS k_referrer,
    min(concat(k, referrer_name)) AS k_referrer_name,
    min(concat(k, referrer_type)) AS k_referrer_type,
    min(concat(k, properties['__query.utm_source'])) AS k_utm_source,
    min(concat(k, properties['__query.utm_medium'])) AS k_utm_medium,
    min(concat(k, properties['__query.utm_campaign'])) AS k_utm_campaign,
    min(concat(k, properties['__query.utm_term'])) AS k_utm_term,
    min(concat(k, properties['__query.utm_content'])) AS k_utm_content,
    min(concat(k, country)) AS k_country,
    min(concat(k, region)) AS k_region,
    min(concat(k, city)) AS k_city,
    min(concat(k, device)) AS k_device,
    min(concat(k, brand)) AS k_brand,
    min(concat(k, model)) AS k_model,
    min(concat(k, browser)) AS k_browser,
    min(concat(k, browser_version)) AS k_browser_version,
    min(concat(k, os)) AS k_os,
    min(concat(k, os_version)) AS k_os_version,
    min(concat(reverse(reinterpretAsFixedString(bitXor(reinterpretAsUInt64(toUnixTimestamp64Milli(entry_t)), 9223372036854775808))), replaceAll(entry_origin, '\x00', '\x00\x01'), '\x00\x00', entry_path)) AS k_entry,
    max(concat(reverse(reinterpretAsFixedString(bitXor(reinterpretAsUInt64(toUnixTimestamp64Milli(exit_t)), 9223372036854775808))), replaceAll(exit_origin, '\x00', '\x00\x01'), '\x00\x00', exit_path)) AS k_exit,
    toUInt64(countIf(name = 'screen_view')) AS screen_view_count,
    toUInt64(count()) AS event_count,
    toUInt64(sumIf(revenue, name = 'revenue')) AS revenue,
    groupUniqArrayArray(groups) AS groups
  FROM (
    SELECT
      *,
      created_at AS t,
      reverse(reinterpretAsFixedString(bitXor(reinterpretAsUInt64(toUnixTimestamp64Milli(t)), 9223372036854775808))) AS k,
      name = 'screen_view' AS is_view,
      -- 019's sentinels: a later entry and an earlier exit than any screen view, with empty pages.
      if(is_view, t, toDateTime64('2299-12-31 00:00:00', 3, 'UTC')) AS entry_t,
      if(is_view, t, toDateTime64(0, 3, 'UTC')) AS exit_t,
      if(is_view, origin, '') AS entry_origin,
      if(is_view, path, '') AS entry_path,
      entry_origin AS exit_origin,
      entry_path AS exit_path
    FROM events
    WHERE session_id != ''
  )
  GROUP BY project_id, session_id
);
