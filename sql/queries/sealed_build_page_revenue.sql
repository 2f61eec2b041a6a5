-- Every revenue event of the project before C, with its page (sql/schema/032_sealed_page_revenue.sql).
INSERT INTO sealed_page_revenue (project_id, version, created_at, origin, path, revenue)
SELECT {project:String}, {version:UInt64}, created_at, origin, path, revenue
FROM events
WHERE project_id = {project:String} AND name = 'revenue' AND created_at < {closed:DateTime64(3, 'UTC')}
