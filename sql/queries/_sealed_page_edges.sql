-- The part of a /pages window before C outside its whole UTC days (insights_pages_sealed).
((created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {days_from:DateTime64(3, 'UTC')})
      OR (created_at >= {days_to:DateTime64(3, 'UTC')} AND created_at < {sealed_to:DateTime64(3, 'UTC')}))
