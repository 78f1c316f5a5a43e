-- Durable job queue of the REST service: one row per accepted message, executed once, oldest first.
-- A job is marked done inside the same transaction as its graph write (SQLiteStore.apply_hook), so a
-- crash at any moment can neither lose an accepted message nor process it twice. seq never repeats
-- (AUTOINCREMENT), so queue order is acceptance order.
CREATE TABLE jobs (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    group_id    TEXT NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'message',
    payload     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    episode_id  TEXT,
    created_at  TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT
);
CREATE INDEX jobs_status_seq ON jobs (status, seq);
CREATE INDEX jobs_group_status ON jobs (group_id, status);
