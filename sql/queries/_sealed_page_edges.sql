-- The part of a /pages window before C outside its whole UTC hours (insights_pages_sealed).
((created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {hours_from:DateTime64(3, 'UTC')})
      OR (created_at >= {hours_to:DateTime64(3, 'UTC')} AND created_at < {sealed_to:DateTime64(3, 'UTC')}))
