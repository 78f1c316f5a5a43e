-- BM25 with each group's own statistics (as PostgreSQL's, migration 0009 there): FTS5's bm25() takes the number
-- of rows and the mean row length over the whole file, so one group's ranking moved with every other group's rows.
-- Per kind, one posting per (term, record): the term (group-prefixed, so a group reads only its own postings),
-- the record's seq, the term's frequency in it and the record's length in terms; per (kind, group) the number of
-- records and of their terms. The store keeps both in its write transactions; the FTS5 tables stay (their
-- content is what a rewrite or a delete reads the old terms from).
CREATE TABLE fts_stats (
    kind TEXT NOT NULL,
    group_id TEXT NOT NULL,
    docs INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    PRIMARY KEY (kind, group_id)
) WITHOUT ROWID;

CREATE TABLE episodes_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;

CREATE TABLE entities_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;

CREATE TABLE facts_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;

CREATE TABLE chunks_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;

CREATE TABLE communities_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;

-- Backfill from the FTS5 content: a body is its terms joined by single spaces (letters and digits only, so a
-- JSON array of them is '["' || the terms joined by '","' || '"]').

INSERT INTO episodes_postings (term, seq, tf, len)
SELECT w.value, f.rowid, COUNT(*), MAX(f.len) FROM (SELECT rowid, body, CASE WHEN body = '' THEN 0
    ELSE length(body) - length(replace(body, ' ', '')) + 1 END AS len FROM episodes_fts) f,
    json_each('["' || replace(f.body, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY f.rowid, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'episode', x.group_id, COUNT(*), SUM(CASE WHEN f.body = '' THEN 0
    ELSE length(f.body) - length(replace(f.body, ' ', '')) + 1 END)
FROM episodes_fts f JOIN episodes x ON x.seq = f.rowid GROUP BY x.group_id;

INSERT INTO entities_postings (term, seq, tf, len)
SELECT w.value, f.rowid, COUNT(*), MAX(f.len) FROM (SELECT rowid, body, CASE WHEN body = '' THEN 0
    ELSE length(body) - length(replace(body, ' ', '')) + 1 END AS len FROM entities_fts) f,
    json_each('["' || replace(f.body, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY f.rowid, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'entity', x.group_id, COUNT(*), SUM(CASE WHEN f.body = '' THEN 0
    ELSE length(f.body) - length(replace(f.body, ' ', '')) + 1 END)
FROM entities_fts f JOIN entities x ON x.seq = f.rowid GROUP BY x.group_id;

INSERT INTO facts_postings (term, seq, tf, len)
SELECT w.value, f.rowid, COUNT(*), MAX(f.len) FROM (SELECT rowid, body, CASE WHEN body = '' THEN 0
    ELSE length(body) - length(replace(body, ' ', '')) + 1 END AS len FROM facts_fts) f,
    json_each('["' || replace(f.body, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY f.rowid, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'fact', x.group_id, COUNT(*), SUM(CASE WHEN f.body = '' THEN 0
    ELSE length(f.body) - length(replace(f.body, ' ', '')) + 1 END)
FROM facts_fts f JOIN facts x ON x.seq = f.rowid GROUP BY x.group_id;

INSERT INTO chunks_postings (term, seq, tf, len)
SELECT w.value, f.rowid, COUNT(*), MAX(f.len) FROM (SELECT rowid, body, CASE WHEN body = '' THEN 0
    ELSE length(body) - length(replace(body, ' ', '')) + 1 END AS len FROM chunks_fts) f,
    json_each('["' || replace(f.body, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY f.rowid, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'chunk', x.group_id, COUNT(*), SUM(CASE WHEN f.body = '' THEN 0
    ELSE length(f.body) - length(replace(f.body, ' ', '')) + 1 END)
FROM chunks_fts f JOIN chunks x ON x.seq = f.rowid GROUP BY x.group_id;

INSERT INTO communities_postings (term, seq, tf, len)
SELECT w.value, f.rowid, COUNT(*), MAX(f.len) FROM (SELECT rowid, body, CASE WHEN body = '' THEN 0
    ELSE length(body) - length(replace(body, ' ', '')) + 1 END AS len FROM communities_fts) f,
    json_each('["' || replace(f.body, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY f.rowid, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'community', x.group_id, COUNT(*), SUM(CASE WHEN f.body = '' THEN 0
    ELSE length(f.body) - length(replace(f.body, ' ', '')) + 1 END)
FROM communities_fts f JOIN communities x ON x.seq = f.rowid GROUP BY x.group_id;
