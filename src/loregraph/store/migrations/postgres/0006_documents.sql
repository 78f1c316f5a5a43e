-- Documents (spec 002): collections inside a group, documents in a collection, and their chunks. A chunk is also
-- the episode its facts cite (same (group_id, id)). Chunks are a search kind of their own ('chunk'): fts/fts_len
-- with the BM25 statistics trigger, and an embedding column added with the other vector columns.

CREATE TABLE collections (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY,
    id              TEXT NOT NULL,
    group_id        TEXT NOT NULL,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    domain          TEXT,
    domain_scope    TEXT,
    metadata_schema JSONB NOT NULL DEFAULT '{"custom": {}, "system": []}',
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (group_id, id),
    UNIQUE (group_id, name)
);

CREATE TABLE documents (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY,
    id            TEXT NOT NULL,
    group_id      TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    title         TEXT NOT NULL,
    source        TEXT NOT NULL DEFAULT '',
    metadata      JSONB NOT NULL DEFAULT '{}',
    chars         INTEGER NOT NULL DEFAULT 0,
    chunk_count   INTEGER NOT NULL DEFAULT 0,
    content_hash  TEXT NOT NULL DEFAULT '',
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (group_id, id),
    UNIQUE (group_id, collection_id, title)
);

CREATE TABLE chunks (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY,
    id            TEXT NOT NULL,
    group_id      TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    document_id   TEXT NOT NULL,
    ordinal       INTEGER NOT NULL,
    content       TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    fts           TSVECTOR,
    fts_len       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (group_id, id)
);
CREATE INDEX chunks_collection ON chunks (group_id, collection_id);
CREATE INDEX chunks_document ON chunks (group_id, document_id, ordinal);
CREATE INDEX chunks_id ON chunks (id);
CREATE INDEX chunks_fts ON chunks USING gin (fts);
CREATE TRIGGER chunks_fts_stats AFTER INSERT OR UPDATE OR DELETE ON chunks
    FOR EACH ROW EXECUTE FUNCTION loregraph_fts_stats('chunk');
