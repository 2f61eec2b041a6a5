-- The numbers of the profiles of a chart's events from C on, from the profiles written for the events
-- after C as they are (sealed_live_profiles): every profile has one, sealed or from 2^31 on.
SELECT DISTINCT profile_key, vno FROM sealed_live_profiles
WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64}
