-- What /pages adds after C as written for the state of the events after C the planner verified
-- (see sealed_live_pages), a condition on sealed_live_pages: the same rows as _sealed_live_pages.sql
-- computes.
AND project_id = {project:String} AND version = {version:UInt64} AND stamp = {pages_stamp:UInt64}
