-- The burst and daily rate limits count what a group's conversations created since a time (creation_counts, once
-- per message): by (group_id, created_at) that reads the recent rows, not every row of the group.
CREATE INDEX IF NOT EXISTS entities_group_created ON entities (group_id, created_at);
CREATE INDEX IF NOT EXISTS facts_group_created ON facts (group_id, created_at);
