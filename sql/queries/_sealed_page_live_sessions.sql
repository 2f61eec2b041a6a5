-- What /pages adds after C, of the live sessions that pass the request's session filters (by the
-- hash of their id: the live sessions as written, sealed_live, keep no other key).
      AND session_key IN (SELECT reinterpretAsUInt128(sipHash128(id)) FROM live WHERE true {{session_filters}})
