-- A build's episodes of each profile's events before C (sql/schema/030_sealed_person_events.sql):
-- per profile and kind (anonymous or identified), the events sorted by time, then name, cut before
-- each event more than {gap_ms} after the one before it. Run after sealed_build_device_profiles,
-- which tells the devices with an identified event (`linked`), and after the visitors are numbered.
-- Both kinds of a profile are gathered in one group, so that `twofold` needs no window over the
-- profiles' arrays (L: 29-31 s of CPU -> 26 s, peak RSS 2.7 -> 1.9 GB, the same rows). `mask`: the
-- bits of the episode's names (the slot name_bit of a name `n`, migration 042).
INSERT INTO sealed_person_events (project_id, version, mask, created_at, ended_at, profile_key, vno, anonymous, linked, twofold, times, names)
SELECT {project:String}, {version:UInt64}, arrayReduce('groupBitOr', arrayMap(n -> {{name_bit}}, arrayMap(e -> e.2, episode))),
  fromUnixTimestamp64Milli(toInt64(episode[1].1), 'UTC'), fromUnixTimestamp64Milli(toInt64(episode[-1].1), 'UTC'),
  p.profile_key, v.vno, p.anonymous, p.linked, p.twofold, arrayMap(e -> e.1, episode), arrayMap(e -> e.2, episode)
FROM (
  SELECT profile_key, kind.1 AS anonymous, kind.2 AS events,
    kind.1 AND profile_key IN (
      SELECT device_key FROM sealed_device_profiles WHERE project_id = {project:String} AND version = {version:UInt64}) AS linked,
    notEmpty(anonymous_events) AND notEmpty(identified_events) AS twofold
  FROM (
    SELECT reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key,
      arraySort(groupArrayIf((toUInt64(toUnixTimestamp64Milli(created_at)), name), profile_id = device_id)) AS anonymous_events,
      arraySort(groupArrayIf((toUInt64(toUnixTimestamp64Milli(created_at)), name), profile_id != device_id)) AS identified_events
    FROM events
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND profile_id != ''
    GROUP BY profile_key
  )
  ARRAY JOIN [(true, anonymous_events), (false, identified_events)] AS kind
  WHERE notEmpty(kind.2)
) AS p
ARRAY JOIN arraySplit((e, i) -> i > 1 AND e.1 > events[i - 1].1 + {gap_ms:UInt64}, events, arrayEnumerate(events)) AS episode
INNER JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v ON v.profile_key = p.profile_key
