-- The groups the seeded events and profiles belong to (sql/seed/events.sql): eight companies and
-- three teams, written at the end of the seeded period.
INSERT INTO groups (id, project_id, type, name, properties, created_at, version)
SELECT g.1, {project:String}, g.2, g.3, g.4, fromUnixTimestamp64Milli({end_ms:Int64}, 'UTC'), {end_ms:Int64}
FROM (
  SELECT arrayJoin([
    ('company-1', 'company', 'Alpine Works', map('plan', 'enterprise', 'industry', 'manufacturing')),
    ('company-2', 'company', 'Birch & Co', map('plan', 'pro', 'industry', 'retail')),
    ('company-3', 'company', 'Cairn Labs', map('plan', 'pro', 'industry', 'software')),
    ('company-4', 'company', 'Delta Outfitters', map('plan', 'free', 'industry', 'retail')),
    ('company-5', 'company', 'Elm Studio', map('plan', 'free', 'industry', 'design')),
    ('company-6', 'company', 'Fjord Logistics', map('plan', 'enterprise', 'industry', 'logistics')),
    ('company-7', 'company', 'Granite Health', map('plan', 'pro', 'industry', 'health')),
    ('company-8', 'company', 'Harbor Schools', map('plan', 'free', 'industry', 'education')),
    ('team-1', 'team', 'Engineering', map('function', 'engineering')),
    ('team-2', 'team', 'Marketing', map('function', 'marketing')),
    ('team-3', 'team', 'Sales', map('function', 'sales'))
  ]) AS g
)
