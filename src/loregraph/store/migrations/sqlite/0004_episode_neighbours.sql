-- Adjacent turns of an episode within its conversation (search context) by index range scans.
CREATE INDEX episodes_group_conversation_time ON episodes (group_id, conversation_id, valid_at);
