-- Blocks (issue 14): owner/visibility attributes and the embedding, searched per group by exact cosine kNN
-- (an untyped pgvector column: the model's dimension is only known once the embedder is recorded).
ALTER TABLE blocks ADD COLUMN attributes JSONB NOT NULL DEFAULT '{}';
ALTER TABLE blocks ADD COLUMN embedding vector;
CREATE INDEX blocks_group_parent ON blocks (group_id, parent_id);
