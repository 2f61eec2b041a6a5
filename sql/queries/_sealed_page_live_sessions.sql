-- What /pages adds after C, of the live sessions that pass the request's session filters.
      AND session_key IN (SELECT session_key FROM live WHERE true {{session_filters}})
