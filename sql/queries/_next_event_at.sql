-- The time of the next event of an event's session, NULL for its last: where a view's time on page
-- ends. Events at equal times follow each other in id order.
leadInFrame(toNullable(created_at)) OVER (
  PARTITION BY session_key ORDER BY created_at, id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
) AS next_at
