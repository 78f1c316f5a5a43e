-- issue 15: communities are searchable (BM25 through the shared fts statistics; the embedding column comes with
-- the other kinds' vector columns) and each group remembers its last full build (drift of incremental assignment).
ALTER TABLE communities ADD COLUMN fts TSVECTOR, ADD COLUMN fts_len INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN updated_at TIMESTAMPTZ;
CREATE INDEX communities_fts ON communities USING gin (fts);
CREATE TRIGGER communities_fts_stats AFTER INSERT OR UPDATE OR DELETE ON communities
    FOR EACH ROW EXECUTE FUNCTION loregraph_fts_stats('community');

CREATE TABLE community_builds (
    group_id    TEXT NOT NULL,
    built_at    TIMESTAMPTZ NOT NULL,
    members     INTEGER NOT NULL,
    communities INTEGER NOT NULL,
    drift       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (group_id)
);
