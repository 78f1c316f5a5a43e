-- Every table that holds a group's rows can be distributed by group_id (Citus: co-located shards, every key and
-- unique constraint including group_id; see PostgresStore._citus_layout). Works the same on plain PostgreSQL.
-- 1. fts_terms gets the group it belongs to (its terms already carry the group's token): rebuilt from the rows.
ALTER TABLE fts_terms ADD COLUMN group_id TEXT;
TRUNCATE fts_terms;
INSERT INTO fts_terms (kind, term, df, group_id)
SELECT k, lexeme, COUNT(*), g FROM (
    SELECT 'episode' AS k, group_id AS g, (unnest(fts)).lexeme AS lexeme FROM episodes WHERE fts IS NOT NULL
    UNION ALL SELECT 'entity', group_id, (unnest(fts)).lexeme FROM entities WHERE fts IS NOT NULL
    UNION ALL SELECT 'fact', group_id, (unnest(fts)).lexeme FROM facts WHERE fts IS NOT NULL
    UNION ALL SELECT 'chunk', group_id, (unnest(fts)).lexeme FROM chunks WHERE fts IS NOT NULL
) x
GROUP BY k, g, lexeme;
ALTER TABLE fts_terms ALTER COLUMN group_id SET NOT NULL;
ALTER TABLE fts_terms DROP CONSTRAINT fts_terms_pkey, ADD PRIMARY KEY (group_id, kind, term);

CREATE OR REPLACE FUNCTION loregraph_fts_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k TEXT := TG_ARGV[0];
BEGIN
    IF current_setting('loregraph.fts_stats_off', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.fts IS NOT DISTINCT FROM OLD.fts AND NEW.group_id = OLD.group_id
       AND NEW.fts_len = OLD.fts_len THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.fts IS NOT NULL THEN
        UPDATE fts_stats SET docs = docs - 1, tokens = tokens - OLD.fts_len
         WHERE group_id = OLD.group_id AND kind = k;
        UPDATE fts_terms SET df = df - 1
         WHERE group_id = OLD.group_id AND kind = k AND term IN (SELECT lexeme FROM unnest(OLD.fts));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.fts IS NOT NULL THEN
        INSERT INTO fts_stats AS s (kind, group_id, docs, tokens) VALUES (k, NEW.group_id, 1, NEW.fts_len)
            ON CONFLICT (kind, group_id) DO UPDATE SET docs = s.docs + 1, tokens = s.tokens + EXCLUDED.tokens;
        INSERT INTO fts_terms AS t (group_id, kind, term, df) SELECT NEW.group_id, k, lexeme, 1 FROM unnest(NEW.fts)
            ON CONFLICT (group_id, kind, term) DO UPDATE SET df = t.df + 1;
    END IF;
    RETURN NULL;
END
$$;

-- 2. vector_indexes: an index's name is derived from its group, so a global unique name constraint adds nothing
ALTER TABLE vector_indexes DROP CONSTRAINT vector_indexes_name_key;
