"""The SQLite job queue after a failed COMMIT (a full disk, a constraint checked at COMMIT): the failed write is
reported as a ``StoreError`` (REST 503, gRPC UNAVAILABLE), nothing accepted before is lost, nothing of the failed
write is kept, and the queue — and every other writer of the file — can write again at once (or, for a full
disk, once space is back).

All connections in these tests use sqlean, the SQLite library the store uses: two SQLite libraries in one
process drop each other's POSIX locks on the same file (https://www.sqlite.org/howtocorrupt.html, 2.2.1), which
shows up as "disk I/O error" and a write-ahead log the other connections cannot read.
"""

from __future__ import annotations

import contextlib
import os

import pytest
import sqlean

from loregraph.errors import StoreError
from loregraph.store.sqlite import SQLiteStore
from test_storage_full import fill


def payload(text: str) -> dict:
    return {"group_id": "g", "content": text, "role_type": "user", "source": "message"}


def contents(db) -> list[str]:
    """The payload contents of the queue's jobs, read through a fresh connection (what another process sees)."""
    with contextlib.closing(sqlean.connect(str(db), timeout=30)) as c:
        return [r[0] for r in c.execute("SELECT json_extract(payload, '$.content') FROM jobs ORDER BY seq")]


def can_write_now(db) -> bool:
    """Whether another connection gets the write lock without waiting (a stuck transaction would hold it)."""
    with contextlib.closing(sqlean.connect(str(db), timeout=0, isolation_level=None)) as c:
        try:
            c.execute("BEGIN IMMEDIATE")
        except sqlean.OperationalError:
            return False
        c.execute("ROLLBACK")
        return True


def test_a_commit_that_fails_is_reported_rolled_back_and_the_queue_writes_again(tmp_path):
    db = tmp_path / "memory.db"
    store = SQLiteStore(db)
    queue = store.open_queue()
    try:
        queue.enqueue("g", [payload("accepted before")])
        # a real deferred foreign key, checked only at COMMIT; a trigger breaks it for one marked message
        store.conn.execute("CREATE TABLE commit_probe (id INTEGER PRIMARY KEY, job INTEGER NOT NULL REFERENCES "
                           "jobs(seq) DEFERRABLE INITIALLY DEFERRED)")
        store.conn.execute("CREATE TRIGGER break_commit AFTER INSERT ON jobs WHEN json_extract(NEW.payload, "
                           "'$.content') = 'breaks the commit' BEGIN INSERT INTO commit_probe (job) VALUES (-1); END")
        queue.conn.execute("PRAGMA foreign_keys = ON")  # SQLite checks foreign keys when asked to

        with pytest.raises(StoreError, match="nothing was written"):
            queue.enqueue("g", [payload("same request"), payload("breaks the commit")])

        assert not queue.conn.in_transaction
        assert can_write_now(db), "the failed transaction still holds the database's write lock"
        assert queue.enqueue("g", [payload("accepted after")])
        assert contents(db) == ["accepted before", "accepted after"]
        assert queue.counts("g") == {"pending": 2, "running": 0, "done": 0, "failed": 0}
    finally:
        queue.close()
        store.close()


def test_a_full_disk_at_commit_is_reported_and_the_queue_writes_again_once_space_is_back(small_disk):
    """The transaction's pages reach the write-ahead log at COMMIT: with the log emptied first and the disk full,
    the COMMIT itself fails (SQLITE_FULL)."""
    db = small_disk / "memory.db"
    store = SQLiteStore(db)
    queue = store.open_queue()
    filler = None
    try:
        queue.enqueue("g", [payload("accepted before")])
        store.checkpoint()  # an empty write-ahead log: the next commit needs new disk space
        filler = fill(small_disk)
        with pytest.raises(StoreError):
            queue.enqueue("g", [payload(f"big {i} " + "x" * 30000) for i in range(26)])
        assert not queue.conn.in_transaction
        assert contents(db) == ["accepted before"]
        os.remove(filler)
        filler = None
        assert queue.enqueue("g", [payload("accepted after")])
        assert contents(db) == ["accepted before", "accepted after"]
        job, left = queue.claim() or (None, None)
        assert job is not None and job.payload["content"] == "accepted before" and left == 1
        with contextlib.closing(sqlean.connect(str(db))) as c:
            assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        if filler is not None:
            os.remove(filler)
        queue.close()
        store.close()
