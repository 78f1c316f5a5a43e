-- Documents (spec 002): collections inside a group, documents in a collection, and their chunks. A chunk is also
-- the episode its facts cite (same (group_id, id)), so provenance, explain and deletion work as for messages.
-- Chunks are a search kind of their own: full text in chunks_fts (group-prefixed terms), vectors in chunk_vec /
-- chunk_emb (created with the other vector tables once the embedding dimension is known).

CREATE TABLE collections (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    group_id        TEXT NOT NULL,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    domain          TEXT,
    domain_scope    TEXT,
    metadata_schema TEXT NOT NULL DEFAULT '{"custom": {}, "system": []}',
    created_at      TEXT NOT NULL,
    UNIQUE (group_id, id),
    UNIQUE (group_id, name)
);

CREATE TABLE documents (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL,
    group_id      TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    title         TEXT NOT NULL,
    source        TEXT NOT NULL DEFAULT '',
    metadata      TEXT NOT NULL DEFAULT '{}',
    chars         INTEGER NOT NULL DEFAULT 0,
    chunk_count   INTEGER NOT NULL DEFAULT 0,
    content_hash  TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    UNIQUE (group_id, id),
    UNIQUE (group_id, collection_id, title)
);

CREATE TABLE chunks (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL,
    group_id      TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    document_id   TEXT NOT NULL,
    ordinal       INTEGER NOT NULL,
    content       TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    UNIQUE (group_id, id)
);
CREATE INDEX chunks_collection ON chunks (group_id, collection_id);
CREATE INDEX chunks_document ON chunks (group_id, document_id, ordinal);
CREATE INDEX chunks_id ON chunks (id);

CREATE VIRTUAL TABLE chunks_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row');
