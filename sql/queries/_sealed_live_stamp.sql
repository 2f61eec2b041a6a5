-- The live sessions as written for the state of the events after C the planner verified (see
-- sealed_live in sql/schema/012_sealed.sql), a condition on sealed_live: the same rows as
-- _sealed_live.sql computes.
AND project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64}
