-- The last UTC day before C on which each numbered visitor after C viewed the page, among the
-- build's last {seen_days} days (1970-01-01 when none): a window of those days counted from its
-- day rows (_sealed_page_day_counts.sql) already holds the visitors seen on its days. Found once
-- per state of the events after C, each day row's bitmap intersected with the page's few visitors
-- after C, instead of by every request (L, 30d: about 90 ms of CPU a request).
SELECT d.origin AS origin, d.path AS path, arrayJoin(bitmapToArray(bitmapAnd(d.visitors, l.numbered))) AS vno, max(d.day) AS seen
    FROM sealed_page_days AS d
    INNER JOIN (
      SELECT origin, path, groupBitmapState(vno) AS numbered FROM live_views WHERE known = 1 GROUP BY origin, path
    ) AS l USING (origin, path)
    WHERE d.project_id = {project:String} AND d.version = {version:UInt64} AND d.days = 1 AND d.views > 0
      AND d.day >= toDate({closed:DateTime64(3, 'UTC')}) - {seen_days:UInt16}
    GROUP BY origin, path, vno
