-- Groups whose vectors outgrew exact kNN get a partial HNSW index of their own (one per table and group,
-- WHERE group_id = '<group>'), built by the store once a group passes PostgresStore.HNSW_MIN_ROWS. A partial
-- index only ever holds its group's rows, so filtering by group loses no recall (a global HNSW index filtered
-- by group returned 4 of 10 true neighbours for a 10k group among ten; see loregraph.bench.pg_vector_index).
CREATE TABLE vector_indexes (
    kind       TEXT NOT NULL,
    group_id   TEXT NOT NULL,
    name       TEXT NOT NULL UNIQUE,
    rows_then  BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (kind, group_id)
);
