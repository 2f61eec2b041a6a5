-- The `numbered` CTE of _profile_days.sql from the profiles written for the events after C as they
-- are (sealed_live_profiles), where everything outside the sealed hours is from C on: a profile is
-- on a day when one of its events (identified, where asked) in an hour of it came before {to}.
-- An hour lies in one local day, as for the rollups.
  numbered AS (
    SELECT {{bucket}}(hour, {tz:String}) AS day, vno
    FROM sealed_live_profiles
    WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64}
      AND (identified OR NOT {identified:Bool})
      AND hour >= {hours_to:DateTime64(3, 'UTC')} AND first_at < {to:DateTime64(3, 'UTC')}
  )
