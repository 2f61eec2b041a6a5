-- A profile for every signed-in user the seeded events mention, first and last seen from those
-- events. Names and properties derive from the profile id, so they are the same on every run.
-- The INSERT maps columns by position; the aliases differ from the column names of events so that
-- they do not shadow them: an alias named project_id would turn the WHERE below into
-- {project} = {project} and give every project the profiles of every other one.
INSERT INTO profiles (id, project_id, is_external, first_name, last_name, email, avatar, properties, groups, created_at, last_seen_at)
WITH
  ['Alice', 'Bjorn', 'Chen', 'Dana', 'Elif', 'Farah', 'Gustav', 'Hana', 'Ivan', 'Julia', 'Kofi', 'Lena',
   'Mateo', 'Nora', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sami', 'Tove', 'Uma', 'Viktor', 'Wei', 'Yara'] AS first_names,
  ['Andersson', 'Berg', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Haddad', 'Ito', 'Johansson',
   'Kowalski', 'Larsen', 'Moreau', 'Nakamura', 'Okafor', 'Patel', 'Rossi', 'Schmidt', 'Tanaka', 'Virtanen'] AS last_names,
  ['free', 'free', 'free', 'member', 'member', 'pro'] AS plans,
  cityHash64(profile_id) AS ph,
  first_names[ph % length(first_names) + 1] AS first,
  last_names[intDiv(ph, 7) % length(last_names) + 1] AS last
SELECT
  profile_id AS id,
  {project:String} AS for_project,
  true AS is_external,
  first AS first_name,
  last AS last_name,
  lower(concat(first, '.', last, '.', toString(intDiv(ph, 1000) % 1000), '@example.com')) AS email,
  '' AS avatar,
  map('plan', plans[intDiv(ph, 31) % length(plans) + 1]) AS profile_properties,
  -- The groups its events carry (every event of a user carries the same ones).
  arraySort(groupUniqArrayArray(groups)) AS profile_groups,
  min(created_at) AS first_seen,
  max(created_at) AS last_seen
FROM events
WHERE project_id = {project:String} AND sdk_name = 'quarry-seed' AND profile_id != device_id
GROUP BY profile_id
