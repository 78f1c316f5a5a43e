-- Ids are scoped by group (issue 19): every key is (group_id, id), so one group can neither collide with nor
-- discover another group's ids. SQLite cannot change a table's keys in place, so each table is rebuilt with
-- its rows copied as they are: seq keeps its values, so full-text and vector rows (rowid = seq) stay valid.
-- The jobs table keeps its keys.

CREATE TABLE episodes_new (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL,
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
    entity_ids         TEXT NOT NULL DEFAULT '[]',
    UNIQUE (group_id, id)
);
INSERT INTO episodes_new (seq, id, group_id, name, content, source, source_description, role, role_type,
                          conversation_id, valid_at, created_at, fact_ids, entity_ids)
    SELECT seq, id, group_id, name, content, source, source_description, role, role_type, conversation_id,
           valid_at, created_at, fact_ids, entity_ids FROM episodes;
DROP TABLE episodes;
ALTER TABLE episodes_new RENAME TO episodes;
CREATE INDEX episodes_group_source_time ON episodes (group_id, source, valid_at);
CREATE INDEX episodes_group_time ON episodes (group_id, valid_at);
CREATE INDEX episodes_group_name ON episodes (group_id, name);
CREATE INDEX episodes_group_conversation_time ON episodes (group_id, conversation_id, valid_at);
CREATE INDEX episodes_id ON episodes (id);  -- not a key: finds an id's groups (groups_of) without a scan

CREATE TABLE entities_new (
    seq               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL,
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
    deleted_at        TEXT,
    conversation_id   TEXT,
    UNIQUE (group_id, id)
);
INSERT INTO entities_new (seq, id, group_id, name, name_norm, type, aliases, summary, attributes, confidence,
                          mention_count, source_episode_id, created_at, updated_at, deleted_at, conversation_id)
    SELECT seq, id, group_id, name, name_norm, type, aliases, summary, attributes, confidence, mention_count,
           source_episode_id, created_at, updated_at, deleted_at, conversation_id FROM entities;
DROP TABLE entities;
ALTER TABLE entities_new RENAME TO entities;
CREATE INDEX entities_group_name ON entities (group_id, name_norm);
CREATE INDEX entities_group_type ON entities (group_id, type);
CREATE INDEX entities_group_conversation ON entities (group_id, conversation_id);
CREATE INDEX entities_id ON entities (id);

CREATE TABLE facts_new (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    group_id        TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    type            TEXT NOT NULL,
    fact            TEXT NOT NULL,
    attributes      TEXT NOT NULL DEFAULT '{}',
    confidence      REAL NOT NULL DEFAULT 1.0,
    episodes        TEXT NOT NULL DEFAULT '[]',
    valid_at        TEXT,
    invalid_at      TEXT,
    created_at      TEXT NOT NULL,
    expired_at      TEXT,
    conversation_id TEXT,
    UNIQUE (group_id, id)
);
INSERT INTO facts_new (seq, id, group_id, source_id, target_id, type, fact, attributes, confidence, episodes,
                       valid_at, invalid_at, created_at, expired_at, conversation_id)
    SELECT seq, id, group_id, source_id, target_id, type, fact, attributes, confidence, episodes, valid_at,
           invalid_at, created_at, expired_at, conversation_id FROM facts;
DROP TABLE facts;
ALTER TABLE facts_new RENAME TO facts;
CREATE INDEX facts_group_source ON facts (group_id, source_id, type);
CREATE INDEX facts_group_target ON facts (group_id, target_id, type);
CREATE INDEX facts_group_conversation ON facts (group_id, conversation_id);
CREATE INDEX facts_id ON facts (id);

CREATE TABLE blocks_new (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL,
    group_id   TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    parent_id  TEXT,
    text       TEXT NOT NULL,
    level      INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (group_id, id)
);
INSERT INTO blocks_new (seq, id, group_id, entity_id, parent_id, text, level, created_at, updated_at)
    SELECT seq, id, group_id, entity_id, parent_id, text, level, created_at, updated_at FROM blocks;
DROP TABLE blocks;
ALTER TABLE blocks_new RENAME TO blocks;
CREATE INDEX blocks_group_entity ON blocks (group_id, entity_id);

CREATE TABLE communities_new (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL,
    group_id   TEXT NOT NULL,
    name       TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (group_id, id)
);
INSERT INTO communities_new (seq, id, group_id, name, summary, created_at)
    SELECT seq, id, group_id, name, summary, created_at FROM communities;
DROP TABLE communities;
ALTER TABLE communities_new RENAME TO communities;

-- link tables: same columns, keys with group_id first; the lookup indexes cover the other id too, so the
-- planner seeks them rather than scanning the group's part of the key
CREATE TABLE entity_names_new (
    group_id  TEXT NOT NULL,
    name_norm TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (group_id, name_norm, entity_id)
);
INSERT INTO entity_names_new (group_id, name_norm, entity_id) SELECT group_id, name_norm, entity_id FROM entity_names;
DROP TABLE entity_names;
ALTER TABLE entity_names_new RENAME TO entity_names;
CREATE INDEX entity_names_entity ON entity_names (group_id, entity_id);

CREATE TABLE fact_episodes_new (
    group_id   TEXT NOT NULL,
    fact_id    TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    PRIMARY KEY (group_id, fact_id, episode_id)
);
INSERT INTO fact_episodes_new (group_id, fact_id, episode_id) SELECT group_id, fact_id, episode_id FROM fact_episodes;
DROP TABLE fact_episodes;
ALTER TABLE fact_episodes_new RENAME TO fact_episodes;
CREATE INDEX fact_episodes_episode ON fact_episodes (group_id, episode_id, fact_id);

CREATE TABLE mentions_new (
    group_id   TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    entity_id  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (group_id, episode_id, entity_id)
);
INSERT INTO mentions_new (group_id, episode_id, entity_id, created_at)
    SELECT group_id, episode_id, entity_id, created_at FROM mentions;
DROP TABLE mentions;
ALTER TABLE mentions_new RENAME TO mentions;
CREATE INDEX mentions_entity ON mentions (group_id, entity_id, episode_id);

CREATE TABLE duplicates_new (
    group_id     TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    canonical_id TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (group_id, entity_id, canonical_id)
);
INSERT INTO duplicates_new (group_id, entity_id, canonical_id, created_at)
    SELECT group_id, entity_id, canonical_id, created_at FROM duplicates;
DROP TABLE duplicates;
ALTER TABLE duplicates_new RENAME TO duplicates;
CREATE INDEX duplicates_group ON duplicates (group_id, canonical_id);
CREATE INDEX duplicates_entity ON duplicates (group_id, entity_id);

CREATE TABLE community_members_new (
    group_id     TEXT NOT NULL,
    community_id TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    PRIMARY KEY (group_id, community_id, entity_id)
);
INSERT INTO community_members_new (group_id, community_id, entity_id)
    SELECT group_id, community_id, entity_id FROM community_members;
DROP TABLE community_members;
ALTER TABLE community_members_new RENAME TO community_members;
CREATE INDEX community_members_entity ON community_members (group_id, entity_id, community_id);
