-- Blocks (issue 14): owner/visibility attributes and the embedding, searched per group by exact cosine kNN
-- (sqlite-vec's vec_distance_cosine over the group's rows; the blocks_group_entity index scopes the scan).
ALTER TABLE blocks ADD COLUMN attributes TEXT NOT NULL DEFAULT '{}';
ALTER TABLE blocks ADD COLUMN embedding BLOB;
CREATE INDEX blocks_group_parent ON blocks (group_id, parent_id);
