-- loregraph schema v1. Every row carries group_id; every query filters on it.
-- Times are ISO-8601 UTC text of one fixed width, so text order is time order.
-- seq is the stable integer key that full-text and vector rows point at.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Bumped in every transaction that changes a group's vectors; readers holding vectors in memory
-- (large groups) reload when it moves, so writes by other processes are seen.
CREATE TABLE vector_generations (
    kind     TEXT NOT NULL,
    group_id TEXT NOT NULL,
    gen      INTEGER NOT NULL,
    PRIMARY KEY (kind, group_id)
);

CREATE TABLE episodes (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,
    group_id           TEXT NOT NULL,
    name               TEXT NOT NULL DEFAULT '',
    content            TEXT NOT NULL,
    source             TEXT NOT NULL,
    source_description TEXT NOT NULL DEFAULT '',
    role               TEXT,
    role_type          TEXT,
    conversation_id    TEXT,
    valid_at           TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    fact_ids           TEXT NOT NULL DEFAULT '[]',
    entity_ids         TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX episodes_group_source_time ON episodes (group_id, source, valid_at);
CREATE INDEX episodes_group_time ON episodes (group_id, valid_at);
CREATE INDEX episodes_group_name ON episodes (group_id, name);

CREATE TABLE entities (
    seq               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    group_id          TEXT NOT NULL,
    name              TEXT NOT NULL,
    name_norm         TEXT NOT NULL,
    type              TEXT NOT NULL,
    aliases           TEXT NOT NULL DEFAULT '[]',
    summary           TEXT NOT NULL DEFAULT '',
    attributes        TEXT NOT NULL DEFAULT '{}',
    confidence        REAL NOT NULL DEFAULT 1.0,
    mention_count     INTEGER NOT NULL DEFAULT 1,
    source_episode_id TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    deleted_at        TEXT
);
CREATE INDEX entities_group_name ON entities (group_id, name_norm);
CREATE INDEX entities_group_type ON entities (group_id, type);

CREATE TABLE entity_names (
    group_id  TEXT NOT NULL,
    name_norm TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (group_id, name_norm, entity_id)
);
CREATE INDEX entity_names_entity ON entity_names (entity_id);

CREATE TABLE facts (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    group_id   TEXT NOT NULL,
    source_id  TEXT NOT NULL,
    target_id  TEXT NOT NULL,
    type       TEXT NOT NULL,
    fact       TEXT NOT NULL,
    attributes TEXT NOT NULL DEFAULT '{}',
    confidence REAL NOT NULL DEFAULT 1.0,
    episodes   TEXT NOT NULL DEFAULT '[]',
    valid_at   TEXT,
    invalid_at TEXT,
    created_at TEXT NOT NULL,
    expired_at TEXT
);
CREATE INDEX facts_group_source ON facts (group_id, source_id, type);
CREATE INDEX facts_group_target ON facts (group_id, target_id, type);

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
    created_at TEXT NOT NULL,
    PRIMARY KEY (episode_id, entity_id)
);
CREATE INDEX mentions_entity ON mentions (group_id, entity_id);

CREATE TABLE duplicates (
    group_id     TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    canonical_id TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (entity_id, canonical_id)
);
CREATE INDEX duplicates_group ON duplicates (group_id, canonical_id);

CREATE TABLE blocks (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    group_id   TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    parent_id  TEXT,
    text       TEXT NOT NULL,
    level      INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX blocks_group_entity ON blocks (group_id, entity_id);

CREATE TABLE communities (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    group_id   TEXT NOT NULL,
    name       TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX communities_group ON communities (group_id);

CREATE TABLE community_members (
    group_id     TEXT NOT NULL,
    community_id TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    PRIMARY KEY (community_id, entity_id)
);
CREATE INDEX community_members_entity ON community_members (group_id, entity_id);

-- Full text: bodies hold group-prefixed, stemmed terms (see loregraph.store.text), so every group has
-- its own term space and BM25 statistics; the vocabulary tables give document frequencies.
CREATE VIRTUAL TABLE episodes_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE entities_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE facts_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE episodes_fts_vocab USING fts5vocab(episodes_fts, 'row');
CREATE VIRTUAL TABLE entities_fts_vocab USING fts5vocab(entities_fts, 'row');
CREATE VIRTUAL TABLE facts_fts_vocab USING fts5vocab(facts_fts, 'row');
