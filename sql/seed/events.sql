-- Expands the sessions of sql/seed/sessions.sql (spliced in at the marker below) into their events.
-- All events of a session share its ids, source, campaign, geo and client; the first is a page view.
INSERT INTO events (id, name, device_id, profile_id, project_id, session_id, groups, created_at, path, origin,
  referrer, referrer_name, referrer_type, duration, revenue, properties, country, city, region, longitude,
  latitude, os, os_version, browser, browser_version, device, brand, model, sdk_name, sdk_version, imported_at)
-- Writing the parts and running the sessions view take most of the time, and each insert pipeline
-- does both on one thread. Two pipelines (the view's included) use two cores once an insert of
-- CHUNK_EVENTS (src/seed/seed.ts) is squashed into two blocks of about half that; sessions come
-- from the source in blocks of 8192 and are never split between blocks.
-- optimize_on_insert = 0: sessions (an AggregatingMergeTree) would otherwise merge each block's rows
-- by key as it writes them, folding every column of every row through its `min` over a tuple, the
-- generic state, even though no two rows of a block share a session; that was about a quarter of a
-- seed's CPU. The rows are the same but for the order inside sessions.groups, which is the order the
-- fold gives and which every merge swaps again (benchmarks/README.md); merges and FINAL still fold.
SETTINGS optimize_on_insert = 0, max_insert_threads = 2, parallel_view_processing = 1, min_insert_block_size_rows = 250000, max_block_size = 8192
WITH
  -- (origin, path, title), most visited first; ranks past the end are the long tail of product pages.
  [('https://quarry.example', '/', 'Quarry Outdoor — gear for the trail'),
   ('https://quarry.example', '/products', 'All products'),
   ('https://quarry.example', '/products/trail-runner-2', 'Trail Runner 2'),
   ('https://quarry.example', '/pricing', 'Membership'),
   ('https://quarry.example', '/cart', 'Your cart'),
   ('https://quarry.example', '/blog', 'Blog'),
   ('https://quarry.example', '/products/summit-jacket', 'Summit Jacket'),
   ('https://quarry.example', '/checkout', 'Checkout'),
   ('https://quarry.example', '/products/ridge-backpack-30l', 'Ridge Backpack 30L'),
   ('https://quarry.example', '/blog/how-to-choose-trail-shoes', 'How to choose trail shoes'),
   ('https://quarry.example', '/signup', 'Create an account'),
   ('https://quarry.example', '/login', 'Sign in'),
   ('https://quarry.example', '/products/alpine-tent-2p', 'Alpine Tent 2P'),
   ('https://help.quarry.example', '/', 'Help center'),
   ('https://quarry.example', '/about', 'About us'),
   ('https://help.quarry.example', '/shipping', 'Shipping and delivery'),
   ('https://quarry.example', '/blog/packing-list-for-a-weekend-hike', 'Packing list for a weekend hike'),
   ('https://quarry.example', '/account', 'Your account'),
   ('https://help.quarry.example', '/returns', 'Returns and refunds'),
   ('https://quarry.example', '/products/headlamp-400', 'Headlamp 400'),
   ('https://quarry.example', '/stores', 'Find a store'),
   ('https://quarry.example', '/blog/layering-101', 'Layering 101'),
   ('https://quarry.example', '/contact', 'Contact'),
   ('https://quarry.example', '/products/merino-base-layer', 'Merino Base Layer'),
   ('https://help.quarry.example', '/size-guide', 'Size guide'),
   ('https://quarry.example', '/careers', 'Careers'),
   ('https://quarry.example', '/products/trekking-poles', 'Trekking Poles'),
   ('https://quarry.example', '/gift-cards', 'Gift cards'),
   ('https://quarry.example', '/blog/winter-camping-guide', 'Winter camping guide'),
   ('https://quarry.example', '/privacy', 'Privacy policy')] AS named_pages,
  ['screen_view', 'add_to_cart', 'search', 'signup', 'checkout', 'revenue'] AS event_names,
  if(page <= length(named_pages), named_pages[page],
     ('https://quarry.example', concat('/products/item-', toString(page)), concat('Item ', toString(page)))) AS page_info
SELECT
  reinterpretAsUUID(sipHash128(h, j)) AS id,
  event_names[kind + 1] AS name,
  device_id,
  profile_id,
  {project:String} AS project_id,
  session_id,
  -- A signed-in user belongs to one of the companies of sql/seed/groups.sql, and one in three to a
  -- team of it too; anonymous visitors to none (OpenPanel sends the groups set on the SDK).
  if(profile_id = device_id, [], arrayConcat(
    [concat('company-', toString(cityHash64(profile_id, 'company') % 8 + 1))],
    if(cityHash64(profile_id, 'team') % 3 = 0, [concat('team-', toString(cityHash64(profile_id, 'team-of') % 3 + 1))], []))) AS groups,
  fromUnixTimestamp64Milli(start_ms + toInt64(offset), 'UTC') AS created_at,
  page_info.2 AS path,
  page_info.1 AS origin,
  source.1 AS referrer,
  source.2 AS referrer_name,
  source.3 AS referrer_type,
  -- A page view lasts until the next event of its session.
  if(kind = 0, next_offset - offset, 0) AS duration,
  if(kind = 5, 500 + cityHash64(h, 'revenue', j) % 24500, 0) AS revenue,
  mapFilter((k, v) -> v != '', map(
    '__title', if(kind = 0, page_info.3, ''),
    '__query.utm_source', utm.1,
    '__query.utm_medium', utm.2,
    '__query.utm_campaign', utm.3,
    '__query.utm_term', utm.4,
    '__query.utm_content', utm.5,
    'currency', if(kind = 5, 'USD', ''))) AS properties,
  geo.1 AS country,
  geo.3 AS city,
  geo.2 AS region,
  toFloat32(geo.5) AS longitude,
  toFloat32(geo.4) AS latitude,
  client.4 AS os,
  client.5 AS os_version,
  client.6 AS browser,
  client.7 AS browser_version,
  client.1 AS device,
  client.2 AS brand,
  client.3 AS model,
  -- Marks synthetic rows, so that they can be told apart from (and deleted without touching) real ones.
  'quarry-seed' AS sdk_name,
  '1' AS sdk_version,
  NULL AS imported_at
FROM (/*sessions*/)
ARRAY JOIN
  range(size) AS j,
  kinds AS kind,
  pages AS page,
  offsets AS offset,
  arrayPushBack(arrayPopFront(offsets), offsets[size]) AS next_offset
