-- Spec 003 provenance: the conversation an entity or relationship first came from, and per-conversation
-- counts for rate limits.
ALTER TABLE entities ADD COLUMN conversation_id TEXT;
ALTER TABLE facts ADD COLUMN conversation_id TEXT;
CREATE INDEX entities_group_conversation ON entities (group_id, conversation_id);
CREATE INDEX facts_group_conversation ON facts (group_id, conversation_id);
