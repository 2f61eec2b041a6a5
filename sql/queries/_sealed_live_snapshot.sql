-- The live sessions as written (_sealed_live_stamp.sql), for the parts of a statement that read
-- them by name.
live AS (
  SELECT * FROM sealed_live
  WHERE true {{> sealed_live_stamp}}
)
