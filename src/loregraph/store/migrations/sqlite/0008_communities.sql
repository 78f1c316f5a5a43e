-- issue 15: communities are searchable (BM25 here, vectors in community_vec/community_emb, created with the other
-- kinds' vector tables) and each group remembers its last full build, so incremental assignment knows its drift.
CREATE VIRTUAL TABLE communities_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE communities_fts_vocab USING fts5vocab(communities_fts, 'row');
ALTER TABLE communities ADD COLUMN updated_at TEXT;

CREATE TABLE community_builds (
    group_id    TEXT PRIMARY KEY,
    built_at    TEXT NOT NULL,
    members     INTEGER NOT NULL,
    communities INTEGER NOT NULL,
    drift       INTEGER NOT NULL DEFAULT 0
);
