-- The rows of a rollup table that stand for a span of whole periods [rollup_from, rollup_to): the longer
-- rows ({long_hours} hours each, which the build merged from the shorter ones) inside [long_from,
-- long_to), and the shorter ones ({short_hours} hours) around it. `{{period}}` is the table's period
-- column.
((hours = {short_hours:UInt8} AND {{period}} >= {rollup_from:DateTime64(3, 'UTC')} AND {{period}} < {rollup_to:DateTime64(3, 'UTC')}
    AND ({{period}} < {long_from:DateTime64(3, 'UTC')} OR {{period}} >= {long_to:DateTime64(3, 'UTC')}))
  OR (hours = {long_hours:UInt8} AND {{period}} >= {long_from:DateTime64(3, 'UTC')} AND {{period}} < {long_to:DateTime64(3, 'UTC')}))
