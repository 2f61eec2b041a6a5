-- A profile row as OpenPanel's profile routes return it, column for column.
id, first_name, last_name, email, avatar, properties, project_id, is_external, created_at, last_seen_at, groups
