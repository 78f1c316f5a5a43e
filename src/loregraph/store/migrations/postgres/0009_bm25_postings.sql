-- issue 16: BM25 from posting lists. One row per (record, term): its term frequency and the record's length, so a
-- query's scores come from an index-only walk of its terms' postings instead of reading and unnesting the tsvector
-- of every matching row. Kept by the store inside its write transactions (PostgresStore._upsert_many,
-- _delete_rows, delete_group), and by the statistics trigger for any other writer. Distributed by group_id on
-- Citus like the other group tables (terms already carry their group's token). ``seq`` is the record's: equal
-- scores rank in insertion order, as SQLite's FTS5 ranks them (by rowid).
CREATE TABLE fts_postings (
    group_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    term     TEXT NOT NULL,
    id       TEXT NOT NULL,
    tf       INTEGER NOT NULL,
    len      INTEGER NOT NULL,
    seq      BIGINT NOT NULL,
    PRIMARY KEY (group_id, kind, term, id) INCLUDE (tf, len, seq)
);
-- a record's postings, for rewriting or deleting them
CREATE INDEX fts_postings_record ON fts_postings (group_id, kind, id);

INSERT INTO fts_postings (group_id, kind, term, id, tf, len, seq)
SELECT group_id, k, lexeme, id, tf, len, seq FROM (
    SELECT group_id, 'episode' AS k, id, (u).lexeme, cardinality((u).positions) AS tf, fts_len AS len, seq
      FROM (SELECT group_id, id, fts_len, seq, unnest(fts) AS u FROM episodes WHERE fts IS NOT NULL) e
    UNION ALL SELECT group_id, 'entity', id, (u).lexeme, cardinality((u).positions), fts_len, seq
      FROM (SELECT group_id, id, fts_len, seq, unnest(fts) AS u FROM entities WHERE fts IS NOT NULL) n
    UNION ALL SELECT group_id, 'fact', id, (u).lexeme, cardinality((u).positions), fts_len, seq
      FROM (SELECT group_id, id, fts_len, seq, unnest(fts) AS u FROM facts WHERE fts IS NOT NULL) f
    UNION ALL SELECT group_id, 'chunk', id, (u).lexeme, cardinality((u).positions), fts_len, seq
      FROM (SELECT group_id, id, fts_len, seq, unnest(fts) AS u FROM chunks WHERE fts IS NOT NULL) c
    UNION ALL SELECT group_id, 'community', id, (u).lexeme, cardinality((u).positions), fts_len, seq
      FROM (SELECT group_id, id, fts_len, seq, unnest(fts) AS u FROM communities WHERE fts IS NOT NULL) m
) x;

CREATE OR REPLACE FUNCTION loregraph_fts_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k TEXT := TG_ARGV[0];
BEGIN
    IF current_setting('loregraph.fts_stats_off', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.fts IS NOT DISTINCT FROM OLD.fts AND NEW.group_id = OLD.group_id
       AND NEW.fts_len = OLD.fts_len AND NEW.id = OLD.id THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.fts IS NOT NULL THEN
        UPDATE fts_stats SET docs = docs - 1, tokens = tokens - OLD.fts_len
         WHERE group_id = OLD.group_id AND kind = k;
        UPDATE fts_terms SET df = df - 1
         WHERE group_id = OLD.group_id AND kind = k AND term IN (SELECT lexeme FROM unnest(OLD.fts));
        DELETE FROM fts_postings WHERE group_id = OLD.group_id AND kind = k AND id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.fts IS NOT NULL THEN
        INSERT INTO fts_stats AS s (kind, group_id, docs, tokens) VALUES (k, NEW.group_id, 1, NEW.fts_len)
            ON CONFLICT (kind, group_id) DO UPDATE SET docs = s.docs + 1, tokens = s.tokens + EXCLUDED.tokens;
        INSERT INTO fts_terms AS t (group_id, kind, term, df) SELECT NEW.group_id, k, lexeme, 1 FROM unnest(NEW.fts)
            ON CONFLICT (group_id, kind, term) DO UPDATE SET df = t.df + 1;
        INSERT INTO fts_postings (group_id, kind, term, id, tf, len, seq)
            SELECT NEW.group_id, k, lexeme, NEW.id, cardinality(positions), NEW.fts_len, NEW.seq FROM unnest(NEW.fts);
    END IF;
    RETURN NULL;
END
$$;

-- searching no longer matches tsvectors against a tsquery: their GIN indexes only slowed writes
DROP INDEX IF EXISTS episodes_fts, entities_fts, facts_fts, chunks_fts, communities_fts;

-- the newest facts at either end of an entity (graph expansion, PostgresStore.fact_edges): walked backwards per
-- entity instead of reading and sorting all of a hub's facts
CREATE INDEX IF NOT EXISTS facts_group_source_seq ON facts (group_id, source_id, seq);
CREATE INDEX IF NOT EXISTS facts_group_target_seq ON facts (group_id, target_id, seq);
