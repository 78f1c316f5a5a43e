-- loregraph schema v1 on PostgreSQL: the same logical tables as the SQLite schema (its migrations 0001-0004).
-- Every row carries group_id; every query filters on it. Times are timestamptz, lists/objects are jsonb.
-- Full text: each searchable table has an `fts` tsvector of group-prefixed, stemmed terms built by
-- loregraph.store.text (positions give term frequencies) and `fts_len` (terms in the body); triggers keep
-- per-group document counts and per-term document frequencies, from which search computes BM25.
-- Vector columns are added by ensure_embedder once the embedding dimension is known.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE vector_generations (
    kind     TEXT NOT NULL,
    group_id TEXT NOT NULL,
    gen      BIGINT NOT NULL,
    PRIMARY KEY (kind, group_id)
);

CREATE TABLE episodes (
    seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,
    group_id           TEXT NOT NULL,
    name               TEXT NOT NULL DEFAULT '',
    content            TEXT NOT NULL,
    source             TEXT NOT NULL,
    source_description TEXT NOT NULL DEFAULT '',
    role               TEXT,
    role_type          TEXT,
    conversation_id    TEXT,
    valid_at           TIMESTAMPTZ NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    fact_ids           JSONB NOT NULL DEFAULT '[]',
    entity_ids         JSONB NOT NULL DEFAULT '[]',
    fts                TSVECTOR,
    fts_len            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX episodes_group_source_time ON episodes (group_id, source, valid_at);
CREATE INDEX episodes_group_time ON episodes (group_id, valid_at);
CREATE INDEX episodes_group_name ON episodes (group_id, name);
CREATE INDEX episodes_group_conversation_time ON episodes (group_id, conversation_id, valid_at);
CREATE INDEX episodes_fts ON episodes USING gin (fts);

CREATE TABLE entities (
    seq               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    group_id          TEXT NOT NULL,
    name              TEXT NOT NULL,
    name_norm         TEXT NOT NULL,
    type              TEXT NOT NULL,
    aliases           JSONB NOT NULL DEFAULT '[]',
    summary           TEXT NOT NULL DEFAULT '',
    attributes        JSONB NOT NULL DEFAULT '{}',
    confidence        DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    mention_count     INTEGER NOT NULL DEFAULT 1,
    source_episode_id TEXT,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    deleted_at        TIMESTAMPTZ,
    conversation_id   TEXT,
    fts               TSVECTOR,
    fts_len           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX entities_group_name ON entities (group_id, name_norm);
CREATE INDEX entities_group_type ON entities (group_id, type);
CREATE INDEX entities_group_conversation ON entities (group_id, conversation_id);
CREATE INDEX entities_fts ON entities USING gin (fts);

CREATE TABLE entity_names (
    group_id  TEXT NOT NULL,
    name_norm TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (group_id, name_norm, entity_id)
);
CREATE INDEX entity_names_entity ON entity_names (entity_id);

CREATE TABLE facts (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    group_id        TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    type            TEXT NOT NULL,
    fact            TEXT NOT NULL,
    attributes      JSONB NOT NULL DEFAULT '{}',
    confidence      DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    episodes        JSONB NOT NULL DEFAULT '[]',
    valid_at        TIMESTAMPTZ,
    invalid_at      TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    expired_at      TIMESTAMPTZ,
    conversation_id TEXT,
    fts             TSVECTOR,
    fts_len         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX facts_group_source ON facts (group_id, source_id, type);
CREATE INDEX facts_group_target ON facts (group_id, target_id, type);
CREATE INDEX facts_group_conversation ON facts (group_id, conversation_id);
CREATE INDEX facts_fts ON facts USING gin (fts);

CREATE TABLE fact_episodes (
    group_id   TEXT NOT NULL,
    fact_id    TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    PRIMARY KEY (fact_id, episode_id)
);
CREATE INDEX fact_episodes_episode ON fact_episodes (group_id, episode_id);

CREATE TABLE mentions (
    group_id   TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (episode_id, entity_id)
);
CREATE INDEX mentions_entity ON mentions (group_id, entity_id);
CREATE INDEX mentions_entity_only ON mentions (entity_id);

CREATE TABLE duplicates (
    group_id     TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    canonical_id TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (entity_id, canonical_id)
);
CREATE INDEX duplicates_group ON duplicates (group_id, canonical_id);

CREATE TABLE blocks (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    group_id   TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    parent_id  TEXT,
    text       TEXT NOT NULL,
    level      INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX blocks_group_entity ON blocks (group_id, entity_id);

CREATE TABLE communities (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    group_id   TEXT NOT NULL,
    name       TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX communities_group ON communities (group_id);

CREATE TABLE community_members (
    group_id     TEXT NOT NULL,
    community_id TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    PRIMARY KEY (community_id, entity_id)
);
CREATE INDEX community_members_entity ON community_members (group_id, entity_id);

-- Job queue table (same columns as SQLite's 0003_jobs); the PostgreSQL queue itself is not written yet.
CREATE TABLE jobs (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    group_id    TEXT NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'message',
    payload     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    episode_id  TEXT,
    created_at  TIMESTAMPTZ NOT NULL,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ
);
CREATE INDEX jobs_status_seq ON jobs (status, seq);
CREATE INDEX jobs_group_status ON jobs (group_id, status);

-- BM25 statistics. Terms carry their group's token, so fts_terms is per group too.
CREATE TABLE fts_stats (
    kind     TEXT NOT NULL,
    group_id TEXT NOT NULL,
    docs     BIGINT NOT NULL,
    tokens   BIGINT NOT NULL,
    PRIMARY KEY (kind, group_id)
);

CREATE TABLE fts_terms (
    kind TEXT NOT NULL,
    term TEXT NOT NULL,
    df   BIGINT NOT NULL,
    PRIMARY KEY (kind, term)
);

CREATE FUNCTION loregraph_fts_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k TEXT := TG_ARGV[0];
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.fts IS NOT DISTINCT FROM OLD.fts AND NEW.group_id = OLD.group_id
       AND NEW.fts_len = OLD.fts_len THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.fts IS NOT NULL THEN
        UPDATE fts_stats SET docs = docs - 1, tokens = tokens - OLD.fts_len
         WHERE kind = k AND group_id = OLD.group_id;
        UPDATE fts_terms SET df = df - 1
         WHERE kind = k AND term IN (SELECT lexeme FROM unnest(OLD.fts));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.fts IS NOT NULL THEN
        INSERT INTO fts_stats AS s VALUES (k, NEW.group_id, 1, NEW.fts_len)
            ON CONFLICT (kind, group_id) DO UPDATE SET docs = s.docs + 1, tokens = s.tokens + EXCLUDED.tokens;
        INSERT INTO fts_terms AS t SELECT k, lexeme, 1 FROM unnest(NEW.fts)
            ON CONFLICT (kind, term) DO UPDATE SET df = t.df + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER episodes_fts_stats AFTER INSERT OR UPDATE OR DELETE ON episodes
    FOR EACH ROW EXECUTE FUNCTION loregraph_fts_stats('episode');
CREATE TRIGGER entities_fts_stats AFTER INSERT OR UPDATE OR DELETE ON entities
    FOR EACH ROW EXECUTE FUNCTION loregraph_fts_stats('entity');
CREATE TRIGGER facts_fts_stats AFTER INSERT OR UPDATE OR DELETE ON facts
    FOR EACH ROW EXECUTE FUNCTION loregraph_fts_stats('fact');
