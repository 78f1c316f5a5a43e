-- Ids are scoped by group (issue 19): every key is (group_id, id), so one group can neither collide with nor
-- discover another group's ids, and every table can be distributed by group_id (Citus). seq stays as the
-- insertion order (an identity column, indexed per group) but is no longer a key. The jobs table keeps its keys.

ALTER TABLE episodes DROP CONSTRAINT episodes_pkey, DROP CONSTRAINT episodes_id_key,
    ADD PRIMARY KEY (group_id, id);
CREATE INDEX episodes_group_seq ON episodes (group_id, seq);
CREATE INDEX episodes_id ON episodes (id);  -- not a key: finds an id's groups (groups_of) without a scan

ALTER TABLE entities DROP CONSTRAINT entities_pkey, DROP CONSTRAINT entities_id_key,
    ADD PRIMARY KEY (group_id, id);
CREATE INDEX entities_group_seq ON entities (group_id, seq);
CREATE INDEX entities_id ON entities (id);

ALTER TABLE facts DROP CONSTRAINT facts_pkey, DROP CONSTRAINT facts_id_key,
    ADD PRIMARY KEY (group_id, id);
CREATE INDEX facts_group_seq ON facts (group_id, seq);
CREATE INDEX facts_id ON facts (id);

ALTER TABLE blocks DROP CONSTRAINT blocks_pkey, DROP CONSTRAINT blocks_id_key,
    ADD PRIMARY KEY (group_id, id);

ALTER TABLE communities DROP CONSTRAINT communities_pkey, DROP CONSTRAINT communities_id_key,
    ADD PRIMARY KEY (group_id, id);
DROP INDEX communities_group;

DROP INDEX entity_names_entity;
CREATE INDEX entity_names_entity ON entity_names (group_id, entity_id);

ALTER TABLE fact_episodes DROP CONSTRAINT fact_episodes_pkey, ADD PRIMARY KEY (group_id, fact_id, episode_id);

ALTER TABLE mentions DROP CONSTRAINT mentions_pkey, ADD PRIMARY KEY (group_id, episode_id, entity_id);
DROP INDEX mentions_entity_only;

ALTER TABLE duplicates DROP CONSTRAINT duplicates_pkey, ADD PRIMARY KEY (group_id, entity_id, canonical_id);
CREATE INDEX duplicates_entity ON duplicates (group_id, entity_id);

ALTER TABLE community_members DROP CONSTRAINT community_members_pkey,
    ADD PRIMARY KEY (group_id, community_id, entity_id);
