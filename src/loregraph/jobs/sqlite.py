"""The durable job queue: table ``jobs`` of the store's SQLite database (migration 0003).

Life of a job: ``pending`` (accepted; all jobs of one request inserted in one transaction) → ``running``
(claimed by the worker, oldest first) → ``done`` (marked inside the graph write's own transaction, see
``mark_done_sql``) or ``failed`` (error recorded; ``retry_failed`` puts it back). A job found ``running``
when the worker starts was interrupted by a crash: it goes back to ``pending`` — its graph write either
committed together with the ``done`` mark or not at all, so running it again cannot duplicate anything.

The queue has its own connection (WAL lets it write between the pipeline's reads), used from one thread
at a time under a lock. Payloads hold message content, so a done job's payload is cleared.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loregraph.errors import StoreError
from loregraph.jobs.base import (
    FAILED_LIST_LIMIT,
    Job,
    JobListener,
    JobLostError,
    QueueMaintenance,
    is_storage_failure,
)
from loregraph.store.sqlite_tx import immediate_transaction
from loregraph.store.timefmt import ts

_COLS = "seq, id, group_id, kind, payload, status, attempts, error, episode_id, created_at, started_at, finished_at"


def _job(r: Sequence[Any]) -> Job:
    return Job(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8], r[9], r[10], r[11])


def _now() -> str:
    return ts(datetime.now(UTC)) or ""


def mark_done_sql(conn: Any, seq: int, episode_id: str | None) -> None:
    """Mark a running job done on ``conn`` — called inside the transaction of the job's graph write."""
    cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = ?, episode_id = ?, payload = '{}', "
                       "error = NULL WHERE seq = ? AND status = 'running'", (_now(), episode_id, seq))
    if cur.rowcount != 1:
        raise JobLostError(f"job #{seq} is no longer running; its write is rolled back")


class SQLiteJobQueue(QueueMaintenance):
    """The job queue of an SQLite store: one worker per database file (``single_worker_lock``)."""

    def __init__(self, path: str | Path):
        import sqlean

        self.path = Path(path)
        self.single_worker_lock: Path | None = Path(f"{self.path}.worker.lock")
        self.conn = sqlean.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.Lock()
        row = self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'jobs'").fetchone()
        if row is None:
            self.conn.close()
            raise RuntimeError(f"database {self.path} has no jobs table: open it with SQLiteStore first (migration "
                               f"0003 creates it)")

    def close(self) -> None:
        with self._lock, suppress(Exception):
            self.conn.close()

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One write transaction (``immediate_transaction``: a failed COMMIT is reported, leaves nothing written,
        and the queue — and every other writer of the file — can write again)."""
        with self._lock, immediate_transaction(self.conn, str(self.path)) as c:
            yield c

    # ---- producer -------------------------------------------------------------------------------
    def notify(self, group_id: str = "") -> None:
        """Nothing to send: the one worker of the file polls, and the API of its process wakes it."""

    def listener(self, on_notify: Callable[[], None]) -> JobListener | None:
        return None

    def enqueue(self, group_id: str, payloads: Sequence[dict[str, Any]], kind: str = "message") -> list[str]:
        """Insert one job per payload, all in one transaction; returns the job ids in queue order."""
        if not payloads:
            return []
        now = _now()
        rows = [(str(uuid.uuid4()), group_id, kind, json.dumps(p, ensure_ascii=False), now) for p in payloads]
        try:
            with self._tx() as c:
                c.executemany("INSERT INTO jobs (id, group_id, kind, payload, status, created_at) "
                              "VALUES (?,?,?,?,'pending',?)", rows)
        except StoreError:
            raise
        except Exception as exc:
            if is_storage_failure(exc):
                raise StoreError(f"cannot queue jobs: {type(exc).__name__}") from exc
            raise
        return [r[0] for r in rows]

    # ---- worker ---------------------------------------------------------------------------------
    def recover(self, max_attempts: int) -> dict[str, int]:
        """At worker start: jobs left ``running`` by a crash go back to ``pending`` (oldest first, as
        before), unless they have been interrupted ``max_attempts`` times (then ``failed``)."""
        with self._tx() as c:
            failed = c.execute("UPDATE jobs SET status = 'failed', finished_at = ?, error = ? WHERE status = "
                               "'running' AND attempts >= ?",
                               (_now(), f"interrupted {max_attempts} times; retry it once the cause is fixed",
                                max_attempts)).rowcount
            reset = c.execute("UPDATE jobs SET status = 'pending' WHERE status = 'running'").rowcount
        return {"reset": reset, "failed": failed}

    def claim(self) -> tuple[Job, int] | None:
        """Take the oldest pending job (→ running, attempts + 1); returns it with the pending count left."""
        with self._tx() as c:
            row = c.execute(f"SELECT {_COLS} FROM jobs WHERE status = 'pending' ORDER BY seq LIMIT 1").fetchone()
            if row is None:
                return None
            now = _now()
            c.execute("UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = ? WHERE seq = ?",
                      (now, row[0]))
            remaining = c.execute("SELECT COUNT(*) FROM jobs WHERE status = 'pending'").fetchone()[0]
        job = _job(row)
        job.status, job.attempts, job.started_at = "running", job.attempts + 1, now
        return job, remaining

    def mark_done_in(self, conn: Any, job: Job, episode_id: str | None) -> None:
        """Mark ``job`` done on ``conn``, inside the transaction of its graph write (see ``mark_done_sql``)."""
        mark_done_sql(conn, job.seq, episode_id)

    def finished(self, job: Job) -> None:
        """The worker is through with ``job``; nothing to release here (one worker per database file)."""

    def note_attempt(self, seq: int) -> None:
        with self._tx() as c:
            c.execute("UPDATE jobs SET attempts = attempts + 1 WHERE seq = ? AND status = 'running'", (seq,))

    def mark_done(self, seq: int, episode_id: str | None) -> None:
        """Mark done outside a graph write (a job whose episode exists already)."""
        with self._tx() as c:
            mark_done_sql(c, seq, episode_id)

    def mark_failed(self, seq: int, error: str) -> bool:
        with self._tx() as c:
            return c.execute("UPDATE jobs SET status = 'failed', finished_at = ?, error = ? WHERE seq = ? "
                             "AND status = 'running'", (_now(), error[:2000], seq)).rowcount == 1

    def release(self, seq: int) -> bool:
        """Put a running job back to pending (shutdown interrupted it before its write)."""
        with self._tx() as c:
            return c.execute("UPDATE jobs SET status = 'pending' WHERE seq = ? AND status = 'running'",
                             (seq,)).rowcount == 1

    # ---- inspection and admin -------------------------------------------------------------------
    def counts(self, group_id: str | None = None) -> dict[str, int]:
        out = {"pending": 0, "running": 0, "done": 0, "failed": 0}
        with self._lock:
            if group_id is None:
                rows = self.conn.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status").fetchall()
            else:
                rows = self.conn.execute("SELECT status, COUNT(*) FROM jobs WHERE group_id = ? GROUP BY status",
                                         (group_id,)).fetchall()
        out.update(dict(rows))
        return out

    def failed_jobs(self, group_id: str, limit: int = FAILED_LIST_LIMIT) -> list[Job]:
        with self._lock:
            rows = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE group_id = ? AND status = 'failed' "
                                     "ORDER BY seq LIMIT ?", (group_id, limit)).fetchall()
        return [_job(r) for r in rows]

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            row = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return _job(row) if row else None

