-- The visitors after C that the counted days already hold: those with a view of the page in the
-- window before C.
AND (origin, path, vno) NOT IN (
        SELECT origin, path, vno FROM sealed_page_views
        WHERE project_id = {project:String} AND version = {version:UInt64}
          AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {sealed_to:DateTime64(3, 'UTC')}
          AND vno IN (SELECT vno FROM live_pages WHERE kind = 1 AND known = 1))
