-- Display settings for the seeded custom events; signups and purchases count as conversions.
INSERT INTO event_meta (project_id, name, conversion, color, icon, created_at)
SELECT {project:String}, name, conversion, color, icon, fromUnixTimestamp64Milli({end_ms:Int64}, 'UTC')
FROM values('name String, conversion Bool, color String, icon String',
  ('add_to_cart', false, '#f59e0b', 'shopping-cart'),
  ('search', false, '#6366f1', 'search'),
  ('signup', true, '#10b981', 'user-plus'),
  ('checkout', false, '#0ea5e9', 'credit-card'),
  ('revenue', true, '#22c55e', 'dollar-sign'))
