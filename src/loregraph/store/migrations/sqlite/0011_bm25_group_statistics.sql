-- BM25 with each group's own statistics (PostgreSQL's, its migration 0009): FTS5's bm25() took the number of rows
-- and the mean row length over the whole file, so one group's ranking moved with every other group's rows.
-- Per kind: the record's indexed terms ({table}_terms: its group-prefixed terms, space-separated; read back when
-- the record is rewritten or deleted), and one posting per (term, record) ({table}_postings: the term's frequency
-- in the record and the record's length in terms); per (kind, group): the number of records and of their terms
-- (fts_stats; gen, a random token, changes with every write, so a process's cached document frequencies
-- know when another process wrote the group). The store keeps all three in its write transactions. Nothing
-- reads FTS5 any more: its tables go (searches walk the postings, measured faster than FTS5 at 100k facts, and
-- writes are cheaper without it).
CREATE TABLE fts_stats (
    kind TEXT NOT NULL,
    group_id TEXT NOT NULL,
    docs INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    gen INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, group_id)
) WITHOUT ROWID;

CREATE TABLE episodes_terms (seq INTEGER PRIMARY KEY, terms TEXT NOT NULL);
INSERT INTO episodes_terms (seq, terms) SELECT rowid, body FROM episodes_fts;
CREATE TABLE episodes_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;
-- terms are letters and digits: '["' || the terms joined by '","' || '"]' is a JSON array of them
INSERT INTO episodes_postings (term, seq, tf, len)
SELECT w.value, t.seq, COUNT(*), MAX(t.len) FROM (SELECT seq, terms, CASE WHEN terms = '' THEN 0
    ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END AS len FROM episodes_terms) t,
    json_each('["' || replace(t.terms, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY t.seq, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'episode', x.group_id, COUNT(*), SUM(CASE WHEN t.terms = '' THEN 0
    ELSE length(t.terms) - length(replace(t.terms, ' ', '')) + 1 END)
FROM episodes_terms t JOIN episodes x ON x.seq = t.seq GROUP BY x.group_id;
DROP TABLE episodes_fts_vocab;
DROP TABLE episodes_fts;

CREATE TABLE entities_terms (seq INTEGER PRIMARY KEY, terms TEXT NOT NULL);
INSERT INTO entities_terms (seq, terms) SELECT rowid, body FROM entities_fts;
CREATE TABLE entities_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;
-- terms are letters and digits: '["' || the terms joined by '","' || '"]' is a JSON array of them
INSERT INTO entities_postings (term, seq, tf, len)
SELECT w.value, t.seq, COUNT(*), MAX(t.len) FROM (SELECT seq, terms, CASE WHEN terms = '' THEN 0
    ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END AS len FROM entities_terms) t,
    json_each('["' || replace(t.terms, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY t.seq, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'entity', x.group_id, COUNT(*), SUM(CASE WHEN t.terms = '' THEN 0
    ELSE length(t.terms) - length(replace(t.terms, ' ', '')) + 1 END)
FROM entities_terms t JOIN entities x ON x.seq = t.seq GROUP BY x.group_id;
DROP TABLE entities_fts_vocab;
DROP TABLE entities_fts;

CREATE TABLE facts_terms (seq INTEGER PRIMARY KEY, terms TEXT NOT NULL);
INSERT INTO facts_terms (seq, terms) SELECT rowid, body FROM facts_fts;
CREATE TABLE facts_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;
-- terms are letters and digits: '["' || the terms joined by '","' || '"]' is a JSON array of them
INSERT INTO facts_postings (term, seq, tf, len)
SELECT w.value, t.seq, COUNT(*), MAX(t.len) FROM (SELECT seq, terms, CASE WHEN terms = '' THEN 0
    ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END AS len FROM facts_terms) t,
    json_each('["' || replace(t.terms, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY t.seq, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'fact', x.group_id, COUNT(*), SUM(CASE WHEN t.terms = '' THEN 0
    ELSE length(t.terms) - length(replace(t.terms, ' ', '')) + 1 END)
FROM facts_terms t JOIN facts x ON x.seq = t.seq GROUP BY x.group_id;
DROP TABLE facts_fts_vocab;
DROP TABLE facts_fts;

CREATE TABLE chunks_terms (seq INTEGER PRIMARY KEY, terms TEXT NOT NULL);
INSERT INTO chunks_terms (seq, terms) SELECT rowid, body FROM chunks_fts;
CREATE TABLE chunks_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;
-- terms are letters and digits: '["' || the terms joined by '","' || '"]' is a JSON array of them
INSERT INTO chunks_postings (term, seq, tf, len)
SELECT w.value, t.seq, COUNT(*), MAX(t.len) FROM (SELECT seq, terms, CASE WHEN terms = '' THEN 0
    ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END AS len FROM chunks_terms) t,
    json_each('["' || replace(t.terms, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY t.seq, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'chunk', x.group_id, COUNT(*), SUM(CASE WHEN t.terms = '' THEN 0
    ELSE length(t.terms) - length(replace(t.terms, ' ', '')) + 1 END)
FROM chunks_terms t JOIN chunks x ON x.seq = t.seq GROUP BY x.group_id;
DROP TABLE chunks_fts_vocab;
DROP TABLE chunks_fts;

CREATE TABLE communities_terms (seq INTEGER PRIMARY KEY, terms TEXT NOT NULL);
INSERT INTO communities_terms (seq, terms) SELECT rowid, body FROM communities_fts;
CREATE TABLE communities_postings (
    term TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
) WITHOUT ROWID;
-- terms are letters and digits: '["' || the terms joined by '","' || '"]' is a JSON array of them
INSERT INTO communities_postings (term, seq, tf, len)
SELECT w.value, t.seq, COUNT(*), MAX(t.len) FROM (SELECT seq, terms, CASE WHEN terms = '' THEN 0
    ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END AS len FROM communities_terms) t,
    json_each('["' || replace(t.terms, ' ', '","') || '"]') w
WHERE w.value <> '' GROUP BY t.seq, w.value;
INSERT INTO fts_stats (kind, group_id, docs, tokens)
SELECT 'community', x.group_id, COUNT(*), SUM(CASE WHEN t.terms = '' THEN 0
    ELSE length(t.terms) - length(replace(t.terms, ' ', '')) + 1 END)
FROM communities_terms t JOIN communities x ON x.seq = t.seq GROUP BY x.group_id;
DROP TABLE communities_fts_vocab;
DROP TABLE communities_fts;
