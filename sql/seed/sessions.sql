-- One row per synthetic session, numbered {first} .. {first}+{count}-1. Every value is drawn from
-- hashes of (seed, project, session or device index), so the same arguments always give the same
-- sessions, whatever the chunking and thread count. A draw in [0, 1) is `hash % 1000000 / 1e6`.
-- Zipf-like picks use floor((K + 1) ^ u), which gives rank r (1-based) a share of ln((r+1)/r) / ln(K+1).
WITH
  {seed:UInt64} AS seed,
  {project:String} AS project,
  {end_ms:Int64} AS end_ms,
  toInt64({days:UInt32}) * 86400000 AS period_ms,
  -- Relative traffic per UTC hour and per weekday (Monday first); 1 is the peak.
  [0.22, 0.14, 0.10, 0.08, 0.08, 0.12, 0.22, 0.40, 0.62, 0.80, 0.92, 1.00,
   0.97, 0.94, 0.95, 0.93, 0.90, 0.86, 0.80, 0.74, 0.68, 0.58, 0.44, 0.32] AS hour_weight,
  [1.00, 0.98, 0.97, 0.95, 0.88, 0.62, 0.58] AS weekday_weight,
  -- (country, region, city, latitude, longitude), most visited first.
  [('US', 'California', 'San Francisco', 37.7749, -122.4194),
   ('US', 'New York', 'New York', 40.7128, -74.0060),
   ('GB', 'England', 'London', 51.5074, -0.1278),
   ('DE', 'Berlin', 'Berlin', 52.5200, 13.4050),
   ('SE', 'Stockholm County', 'Stockholm', 59.3293, 18.0686),
   ('IN', 'Karnataka', 'Bengaluru', 12.9716, 77.5946),
   ('FR', 'Île-de-France', 'Paris', 48.8566, 2.3522),
   ('US', 'Washington', 'Seattle', 47.6062, -122.3321),
   ('CA', 'Ontario', 'Toronto', 43.6532, -79.3832),
   ('NL', 'North Holland', 'Amsterdam', 52.3676, 4.9041),
   ('US', 'Texas', 'Austin', 30.2672, -97.7431),
   ('BR', 'São Paulo', 'São Paulo', -23.5505, -46.6333),
   ('JP', 'Tokyo', 'Tokyo', 35.6762, 139.6503),
   ('AU', 'New South Wales', 'Sydney', -33.8688, 151.2093),
   ('DE', 'Bavaria', 'Munich', 48.1351, 11.5820),
   ('ES', 'Community of Madrid', 'Madrid', 40.4168, -3.7038),
   ('US', 'Illinois', 'Chicago', 41.8781, -87.6298),
   ('GB', 'Scotland', 'Edinburgh', 55.9533, -3.1883),
   ('PL', 'Masovian Voivodeship', 'Warsaw', 52.2297, 21.0122),
   ('IN', 'Maharashtra', 'Mumbai', 19.0760, 72.8777),
   ('SE', 'Västra Götaland County', 'Gothenburg', 57.7089, 11.9746),
   ('NO', 'Oslo', 'Oslo', 59.9139, 10.7522),
   ('IT', 'Lombardy', 'Milan', 45.4642, 9.1900),
   ('SG', 'Singapore', 'Singapore', 1.3521, 103.8198),
   ('MX', 'Mexico City', 'Mexico City', 19.4326, -99.1332),
   ('DK', 'Capital Region of Denmark', 'Copenhagen', 55.6761, 12.5683),
   ('IE', 'Leinster', 'Dublin', 53.3498, -6.2603),
   ('FI', 'Uusimaa', 'Helsinki', 60.1699, 24.9384),
   ('CH', 'Zurich', 'Zurich', 47.3769, 8.5417),
   ('ZA', 'Western Cape', 'Cape Town', -33.9249, 18.4241)] AS cities,
  -- (device, brand, model, os, os_version, browser, browser_version): combinations that occur together.
  [('desktop', '', '', 'Windows', '10', 'Chrome', '124.0.0.0'),
   ('mobile', 'Apple', 'iPhone', 'iOS', '17.4', 'Safari', '17.4'),
   ('desktop', 'Apple', 'Macintosh', 'Mac OS', '14.4', 'Chrome', '124.0.0.0'),
   ('mobile', 'Samsung', 'Galaxy S23', 'Android', '14', 'Chrome', '124.0.6367.82'),
   ('desktop', 'Apple', 'Macintosh', 'Mac OS', '14.4', 'Safari', '17.4'),
   ('desktop', '', '', 'Windows', '11', 'Edge', '124.0.2478.51'),
   ('mobile', 'Google', 'Pixel 8', 'Android', '14', 'Chrome', '124.0.6367.82'),
   ('desktop', '', '', 'Windows', '10', 'Firefox', '125.0'),
   ('tablet', 'Apple', 'iPad', 'iOS', '17.4', 'Safari', '17.4'),
   ('mobile', 'Samsung', 'Galaxy A54', 'Android', '13', 'Samsung Internet', '24.0'),
   ('desktop', '', '', 'Linux', '', 'Firefox', '125.0'),
   ('mobile', 'Apple', 'iPhone', 'iOS', '16.7', 'Chrome', '124.0.6367.88'),
   ('desktop', '', '', 'Linux', '', 'Chrome', '124.0.0.0'),
   ('mobile', 'Xiaomi', 'Redmi Note 12', 'Android', '13', 'Chrome', '123.0.6312.99'),
   ('tablet', 'Samsung', 'Galaxy Tab S9', 'Android', '14', 'Chrome', '124.0.6367.82'),
   ('desktop', 'Apple', 'Macintosh', 'Mac OS', '13.6', 'Firefox', '125.0')] AS clients,
  -- (referrer, referrer_name, referrer_type); direct traffic has all three empty.
  [('', '', ''),
   ('https://www.google.com/', 'Google', 'search'),
   ('https://news.ycombinator.com/', 'Hacker News', 'social'),
   ('https://t.co/', 'Twitter', 'social'),
   ('https://www.bing.com/', 'Bing', 'search'),
   ('https://www.reddit.com/', 'Reddit', 'social'),
   ('https://www.linkedin.com/', 'LinkedIn', 'social'),
   ('https://duckduckgo.com/', 'DuckDuckGo', 'search'),
   ('https://github.com/', 'GitHub', 'unknown'),
   ('https://www.facebook.com/', 'Facebook', 'social'),
   ('https://mail.google.com/', 'Gmail', 'email'),
   ('https://dev.to/', 'dev.to', 'unknown'),
   ('https://search.brave.com/', 'Brave', 'search'),
   ('https://www.producthunt.com/', 'Product Hunt', 'unknown')] AS referrers,
  -- (utm_source, utm_medium, utm_campaign, utm_term, utm_content, referrer, referrer_name, referrer_type):
  -- a campaign brings its own referrer, so tagged sessions stay coherent.
  [('google', 'cpc', 'spring_sale', 'trail running shoes', 'ad_a', 'https://www.google.com/', 'Google', 'search'),
   ('newsletter', 'email', 'weekly_digest', '', 'header_link', '', '', ''),
   ('facebook', 'social', 'spring_sale', '', 'carousel', 'https://www.facebook.com/', 'Facebook', 'social'),
   ('twitter', 'social', 'launch_week', '', 'thread', 'https://t.co/', 'Twitter', 'social'),
   ('google', 'cpc', 'brand', 'quarry outdoor', 'ad_b', 'https://www.google.com/', 'Google', 'search'),
   ('linkedin', 'social', 'launch_week', '', 'sponsored_post', 'https://www.linkedin.com/', 'LinkedIn', 'social'),
   ('bing', 'cpc', 'spring_sale', 'hiking boots', 'ad_a', 'https://www.bing.com/', 'Bing', 'search'),
   ('partner', 'referral', 'affiliate', '', 'banner', 'https://trailblog.example.org/', 'trailblog.example.org', 'unknown')] AS campaigns
SELECT
  number AS s,
  sipHash64(seed, project, 'session', s) AS h,
  -- 40 % of sessions are a single event (a page view); the rest have 2 + a geometric-like tail, at most 40.
  if(cityHash64(h, 'length') % 1000 < 400, 1,
     2 + least(38, toUInt32(-log(1 - cityHash64(h, 'tail') % 1000000 / 1e6) * 3.5))) AS size,
  UUIDNumToString(sipHash128(seed, project, 'session', s)) AS session_id,

  -- Returning visitors: sessions draw their device from a pool, and the device fixes geo and client.
  cityHash64(h, 'device') % {devices:UInt64} AS device_index,
  sipHash64(seed, project, 'device', device_index) AS dh,
  lower(hex(sipHash128(seed, project, 'device', device_index))) AS device_id,
  -- 30 % of devices belong to a signed-in user; the others are anonymous (profile_id = device_id).
  if(cityHash64(dh, 'identified') % 100 < 30, concat('user_', lower(hex(sipHash64(seed, project, 'profile', device_index)))), device_id) AS profile_id,
  cities[toUInt32(floor(pow(length(cities) + 1, cityHash64(dh, 'city') % 1000000 / 1e6)))] AS geo,
  clients[toUInt32(floor(pow(length(clients) + 1, cityHash64(dh, 'client') % 1000000 / 1e6)))] AS client,

  -- 18 % of sessions come from a tagged campaign; the others from a plain referrer or directly.
  cityHash64(h, 'campaign') % 100 < 18 AS tagged,
  campaigns[toUInt32(floor(pow(length(campaigns) + 1, cityHash64(h, 'campaign_pick') % 1000000 / 1e6)))] AS campaign,
  if(tagged, (campaign.6, campaign.7, campaign.8),
     referrers[toUInt32(floor(pow(length(referrers) + 1, cityHash64(h, 'referrer') % 1000000 / 1e6)))]) AS source,
  if(tagged, (campaign.1, campaign.2, campaign.3, campaign.4, campaign.5), ('', '', '', '', '')) AS utm,

  -- Start time: up to four uniform candidates over the period, each kept with the probability of its
  -- hour and weekday weight; the first kept one wins (the last one when none is kept).
  arrayMap(k -> end_ms - period_ms + toInt64(cityHash64(h, 'start', k) % 1000000000 / 1e9 * period_ms), range(4)) AS candidates,
  arrayFirstIndex(
    (c, k) -> cityHash64(h, 'keep', k) % 1000 / 1000 <
      hour_weight[toHour(fromUnixTimestamp64Milli(c, 'UTC')) + 1] * weekday_weight[toDayOfWeek(fromUnixTimestamp64Milli(c, 'UTC'))],
    candidates, range(4)) AS kept,
  -- Event kinds: the first event is a page view (0); later ones are page views 78 % of the time,
  -- otherwise a custom event (1 add_to_cart, 2 search, 3 signup, 4 checkout, 5 revenue).
  arrayMap((j, c) -> if(j = 0 OR cityHash64(h, 'kind', j) % 100 < 78, 0, multiIf(c < 35, 1, c < 60, 2, c < 75, 3, c < 90, 4, 5)),
           range(size), arrayMap(j -> cityHash64(h, 'custom', j) % 100, range(size))) AS kinds,
  -- Page rank per page view, carried forward so that a custom event happens on the page before it.
  arrayFill(r -> r != 0,
    arrayMap(j -> if(kinds[j + 1] = 0, toUInt32(floor(pow(201, cityHash64(h, 'page', j) % 1000000 / 1e6))), 0), range(size))) AS pages,
  -- Gaps between events: at least 1 s, typically tens of seconds, at most 25 minutes, so a session
  -- is never split by a 30-minute inactivity rule.
  arrayCumSum(arrayMap(j -> if(j = 0, 0, 1000 + least(1499000, toUInt64(-log(1 - cityHash64(h, 'gap', j) % 1000000 / 1e6) * 40000))),
                       range(size))) AS offsets,
  -- A session that would run past the end of the period starts earlier instead.
  least(candidates[if(kept = 0, 4, kept)], end_ms - 1 - toInt64(offsets[size])) AS start_ms
-- numbers_mt: the sessions are generated on every core; their order does not matter, only their numbers.
FROM numbers_mt({first:UInt64}, {count:UInt64})
