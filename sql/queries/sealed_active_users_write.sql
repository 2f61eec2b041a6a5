-- Writes one build's series of active users in one zone for one `days` (sql/schema/050_sealed_active_users.sql):
-- the rows of insights_active_users_sealed.sql over all time up to C's local day.
INSERT INTO sealed_active_users (project_id, version, stamp, date, users)
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, date, users
FROM ({{series}})
