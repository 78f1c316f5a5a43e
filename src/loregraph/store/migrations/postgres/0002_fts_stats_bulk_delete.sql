-- delete_group drops a group's BM25 statistics wholesale (fts_stats and its fts_terms rows) after deleting its
-- records, so the per-row statistics trigger has nothing useful to do there. Worse, it is quadratic: every row
-- decrements the same fts_terms rows inside one transaction, and each update walks the growing chain of row
-- versions (a 100k-fact group took minutes). The trigger now stands aside while the transaction-local setting
-- loregraph.fts_stats_off is 'on' (SET LOCAL by delete_group only).
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
