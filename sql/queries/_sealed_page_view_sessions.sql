-- The sealed views of the sessions that pass a /pages request's session filters, by number: a view
-- in the window belongs to a session sealed whole begun at most the build's longest session before
-- it, or to one that spanned C (`sessions_from` is the earlier of the two).
      AND bitmapContains((
        SELECT bitmapBuild(arraySort(groupArray(sno))) FROM sealed_sessions
        WHERE project_id = {project:String} AND version = {version:UInt64}
          AND created_at >= {sessions_from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
          {{session_filters}}), sno)
