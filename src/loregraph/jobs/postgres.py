"""The durable job queue on PostgreSQL: table ``jobs`` of the store's database, shared by any number of API and
worker processes.

Same interface and life of a job as ``queue.JobQueue`` (pending → running → done | failed). What differs:

- **One group at a time, cluster-wide.** A worker first takes a session-level advisory lock on the group
  (``pg_try_advisory_lock(GROUP_LOCK_CLASS, hashtext(group_id))``, on this queue's own connection) and holds it
  until the job is finished (``finished``). The group's oldest unfinished job is then claimed with
  ``SELECT ... FOR UPDATE SKIP LOCKED``; jobs of one group therefore run one after another, in acceptance order,
  whichever worker runs them, while different groups run in parallel.
- **Crash recovery without leases.** A killed worker's connection drops and PostgreSQL releases its group lock.
  A ``running`` job whose group lock is free therefore belongs to no live worker: the next worker that locks
  the group reclaims it (attempts + 1; ``failed`` once interrupted ``max_attempts`` times). Its graph write
  committed together with the done-mark or not at all, so running it again cannot duplicate anything.
- **Fencing.** Each claim stamps ``started_at``; the done-mark (inside the graph write's transaction) requires
  the same stamp, so a worker whose job was reclaimed meanwhile cannot commit its write (``JobLostError``).

The connection is autocommit and used by one thread at a time under a lock; the group locks it holds are
session locks, so this connection must stay open while jobs run.

**Wake-up.** Enqueueing (and ``retry_failed``) sends ``NOTIFY loregraph_jobs`` in its own transaction, so it is
delivered on commit; an idle worker waits on it with a ``PgJobListener`` (its own connection) and claims at once,
whichever process enqueued. Notifications are only a hint: workers still poll now and then, for a notification
lost while a listener reconnected and for jobs left running by a dead worker.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any

from loregraph.errors import StoreError, lock_timeout_error
from loregraph.jobs.base import (
    FAILED_LIST_LIMIT,
    Job,
    JobListener,
    JobLostError,
    QueueMaintenance,
    is_storage_failure,
)

GROUP_LOCK_CLASS = 0x4C47  # first key of the two-key advisory locks of loregraph job groups ("LG")
CANDIDATE_GROUPS = 64  # groups with unfinished jobs looked at per claim, oldest head job first
NOTIFY_CHANNEL = "loregraph_jobs"  # NOTIFY payload: the group id (a hint only; listeners claim whatever is next)
NOTIFY_PAYLOAD_MAX = 200  # characters of the group id sent (PostgreSQL refuses payloads of 8000 bytes or more)
LISTENER_APP_NAME = "loregraph-job-listener"  # application_name of the listening connection (pg_stat_activity)
RECONNECT_MIN_S = 0.2  # first wait before the listener reconnects; doubles per failed attempt ...
RECONNECT_MAX_S = 10.0  # ... up to this
LISTENER_KEEPALIVE = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}

log = logging.getLogger("loregraph.jobs")

_COLS = "seq, id, group_id, kind, payload, status, attempts, error, episode_id, created_at, started_at, finished_at"


def _iso(v: datetime | None) -> str | None:
    return v.isoformat() if v is not None else None


def _notify(conn: Any, group_id: str) -> None:
    """Queue a notification for listening workers on ``conn``: sent when its transaction commits."""
    conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, group_id[:NOTIFY_PAYLOAD_MAX]))


def _one(cur: Any) -> tuple[Any, ...]:
    """The row a statement always returns (an aggregate, RETURNING of a row known to exist)."""
    row = cur.fetchone()
    if row is None:  # pragma: no cover - the statements above always return a row
        raise RuntimeError("the job queue expected a row")
    return tuple(row)


def _job(r: Sequence[Any]) -> Job:
    # started_at keeps microseconds in its ISO form: it is the claim's fencing token (see mark_done_in)
    return Job(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8], _iso(r[9]) or "", _iso(r[10]),
               _iso(r[11]))


class PostgresJobQueue(QueueMaintenance):
    """The job queue of a PostgreSQL store (``url`` as given to ``PostgresStore``)."""

    PARAM = "%s"

    single_worker_lock = None  # any number of workers share the queue (each group runs in one at a time)

    def __init__(self, url: str, *, max_attempts: int = 3):
        import psycopg

        self.url = url
        self.max_attempts = max_attempts
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute("SET TIME ZONE 'UTC'")
        self._lock = threading.RLock()
        self._held: dict[int, tuple[str, str | None]] = {}  # seq of a job claimed here -> (group, claim stamp)
        row = self.conn.execute("SELECT to_regclass('jobs')").fetchone()
        if row is None or row[0] is None:
            self.conn.close()
            raise RuntimeError("the database has no jobs table: open it with PostgresStore first (migration 0001 "
                               "creates it)")

    def close(self) -> None:
        with self._lock, suppress(Exception):
            self.conn.close()  # also releases any group lock still held

    def _ensure_connected(self) -> None:
        """Reconnect after a lost connection (the server restarted, the network dropped). Its group locks are gone
        with it: other workers may reclaim our jobs, and the claim stamps keep our stale writes out."""
        if self.conn.closed or self.conn.broken:
            import psycopg

            self.conn = psycopg.connect(self.url, autocommit=True)
            self.conn.execute("SET TIME ZONE 'UTC'")  # _held keeps the claim stamps: they still fence our updates

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """A transaction on the queue's connection; a lock wait past ``lock_timeout`` (or a lost deadlock) is a
        ``StoreBusyError``: nothing was written, the call can be retried."""
        with self._lock:
            self._ensure_connected()
            try:
                with self.conn.transaction():
                    yield self.conn
            except Exception as exc:
                busy = lock_timeout_error(exc)
                if busy is not None and busy is not exc:
                    raise busy from exc
                raise

    def _stamp(self, seq: int) -> tuple[str, list[Any]]:
        """SQL condition + parameters: the job is still in the claim made here (no condition if not claimed here)."""
        held = self._held.get(seq)
        if held is None:
            return "", []
        return " AND started_at = %s::timestamptz", [held[1]]

    # ---- producer -------------------------------------------------------------------------------
    def enqueue(self, group_id: str, payloads: Sequence[dict[str, Any]], kind: str = "message") -> list[str]:
        """Insert one job per payload, all in one transaction; returns the job ids in queue order."""
        if not payloads:
            return []
        rows = [(str(uuid.uuid4()), group_id, kind, json.dumps(p, ensure_ascii=False)) for p in payloads]
        try:
            with self._tx() as c, c.cursor() as cur:
                cur.executemany("INSERT INTO jobs (id, group_id, kind, payload, status, created_at) "
                                "VALUES (%s,%s,%s,%s,'pending',clock_timestamp())", rows)
                _notify(cur, group_id)  # delivered on commit: idle workers of every process claim at once
        except StoreError:
            raise
        except Exception as exc:
            if is_storage_failure(exc):
                raise StoreError(f"cannot queue jobs: {type(exc).__name__}") from exc
            raise
        return [r[0] for r in rows]

    def listener(self, on_notify: Callable[[], None]) -> JobListener:
        """A LISTEN connection that calls ``on_notify`` whenever any process enqueues."""
        return PgJobListener(self.url, on_notify)

    def notify(self, group_id: str = "") -> None:
        """Make listening workers look for jobs now (e.g. a stopping worker hands over the groups it held)."""
        with self._tx() as c:
            _notify(c, group_id)

    def retry_failed(self, group_id: str) -> int:
        """Failed jobs of the group go back to pending (oldest first) and listening workers are notified."""
        with self._tx() as c:
            n = super().retry_failed(group_id)  # a savepoint inside this transaction
            if n:
                _notify(c, group_id)
        return n

    # ---- worker ---------------------------------------------------------------------------------
    def recover(self, max_attempts: int) -> dict[str, int]:
        """Nothing to do at start: interrupted jobs are reclaimed by ``claim`` once their group lock is free."""
        self.max_attempts = max_attempts
        return {"reset": 0, "failed": 0}

    def _try_group(self, group_id: str) -> bool:
        return bool(_one(self.conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                                           (GROUP_LOCK_CLASS, group_id)))[0])

    def _unlock_group(self, group_id: str) -> None:
        self.conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (GROUP_LOCK_CLASS, group_id))

    def claim(self) -> tuple[Job, int] | None:
        """Take the oldest unfinished job of a group no other worker is on (→ running, attempts + 1), keeping the
        group's lock until ``finished``; returns it with the pending count left."""
        with self._lock:
            self._ensure_connected()
            held = {g for g, _ in self._held.values()}
            heads = self.conn.execute(
                "SELECT group_id FROM jobs WHERE status IN ('pending', 'running') GROUP BY group_id "
                "ORDER BY MIN(seq) LIMIT %s", (CANDIDATE_GROUPS,)).fetchall()
            for (gid,) in heads:
                if gid in held or not self._try_group(gid):
                    continue  # another worker (or this one) runs this group now
                try:
                    job = self._claim_in_group(gid)
                except BaseException:
                    self._unlock_group(gid)
                    raise
                if job is None:
                    self._unlock_group(gid)
                    continue
                self._held[job.seq] = (gid, job.started_at)
                remaining = _one(self.conn.execute("SELECT COUNT(*) FROM jobs WHERE status = 'pending'"))[0]
                return job, remaining
            return None

    def _claim_in_group(self, group_id: str) -> Job | None:
        """With the group's lock held: its oldest pending job, or a running one left by a dead worker."""
        while True:
            with self.conn.transaction():
                head = self.conn.execute("SELECT seq FROM jobs WHERE group_id = %s AND status IN ('pending', "
                                         "'running') ORDER BY seq LIMIT 1", (group_id,)).fetchone()
                if head is None:
                    return None
                # never skip past the head: a row lock on it (e.g. the rollback of a killed worker's write still
                # under way, or a cancel) means "not now" for the whole group, so order is kept
                row = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE seq = %s AND status IN ('pending', "
                                        "'running') FOR UPDATE SKIP LOCKED", (head[0],)).fetchone()
                if row is None:
                    if self.conn.execute("SELECT 1 FROM jobs WHERE seq = %s AND status IN ('pending', 'running')",
                                         (head[0],)).fetchone():
                        return None  # locked right now
                    continue  # finished or cancelled meanwhile: look again
                seq, status, attempts = row[0], row[5], row[6]
                if status == "running" and attempts >= self.max_attempts:  # interrupted too often
                    self.conn.execute(
                        "UPDATE jobs SET status = 'failed', finished_at = clock_timestamp(), error = %s "
                        "WHERE seq = %s", (f"interrupted {attempts} times; retry it once the cause is fixed", seq))
                    continue
                row = _one(self.conn.execute(
                    f"UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = clock_timestamp() "
                    f"WHERE seq = %s RETURNING {_COLS}", (seq,)))
                return _job(row)

    def finished(self, job: Job) -> None:
        """The worker is through with ``job`` (done, failed or released): free its group for other workers."""
        with self._lock:
            held = self._held.pop(job.seq, None)
            gid = held[0] if held else None
            if gid is not None and gid not in {g for g, _ in self._held.values()}:
                with suppress(Exception):  # a broken connection has dropped the lock anyway
                    self._unlock_group(gid)

    def mark_done_in(self, conn: Any, job: Job, episode_id: str | None) -> None:
        """Mark ``job`` done on ``conn`` — inside the transaction of its graph write — if it is still this claim."""
        cur = conn.execute("UPDATE jobs SET status = 'done', finished_at = clock_timestamp(), episode_id = %s, "
                           "payload = '{}', error = NULL WHERE seq = %s AND status = 'running' "
                           "AND started_at = %s::timestamptz", (episode_id, job.seq, job.started_at))
        if cur.rowcount != 1:
            raise JobLostError(f"job #{job.seq} is no longer running under this claim; its write is rolled back")

    def note_attempt(self, seq: int) -> None:
        cond, params = self._stamp(seq)
        with self._tx() as c:
            c.execute("UPDATE jobs SET attempts = attempts + 1 WHERE seq = %s AND status = 'running'" + cond,
                      [seq, *params])

    def mark_done(self, seq: int, episode_id: str | None) -> None:
        """Mark done outside a graph write (a job whose episode exists already)."""
        cond, params = self._stamp(seq)
        with self._tx() as c:
            cur = c.execute("UPDATE jobs SET status = 'done', finished_at = clock_timestamp(), episode_id = %s, "
                            "payload = '{}', error = NULL WHERE seq = %s AND status = 'running'" + cond,
                            [episode_id, seq, *params])
            if cur.rowcount != 1:
                raise JobLostError(f"job #{seq} is no longer running")

    def mark_failed(self, seq: int, error: str) -> bool:
        cond, params = self._stamp(seq)  # a job reclaimed by another worker meanwhile is not ours to fail
        with self._tx() as c:
            return c.execute("UPDATE jobs SET status = 'failed', finished_at = clock_timestamp(), error = %s "
                             "WHERE seq = %s AND status = 'running'" + cond, [error[:2000], seq, *params]).rowcount == 1

    def release(self, seq: int) -> bool:
        """Put a running job back to pending (shutdown interrupted it before its write)."""
        cond, params = self._stamp(seq)
        with self._tx() as c:
            return c.execute("UPDATE jobs SET status = 'pending' WHERE seq = %s AND status = 'running'" + cond,
                             [seq, *params]).rowcount == 1

    # ---- inspection and admin -------------------------------------------------------------------
    def counts(self, group_id: str | None = None) -> dict[str, int]:
        out = {"pending": 0, "running": 0, "done": 0, "failed": 0}
        with self._lock:
            self._ensure_connected()
            if group_id is None:
                rows = self.conn.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status").fetchall()
            else:
                rows = self.conn.execute("SELECT status, COUNT(*) FROM jobs WHERE group_id = %s GROUP BY status",
                                         (group_id,)).fetchall()
        out.update({s: int(n) for s, n in rows})
        return out

    def failed_jobs(self, group_id: str, limit: int = FAILED_LIST_LIMIT) -> list[Job]:
        with self._lock:
            self._ensure_connected()
            rows = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE group_id = %s AND status = 'failed' "
                                     "ORDER BY seq LIMIT %s", (group_id, limit)).fetchall()
        return [_job(r) for r in rows]

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            self._ensure_connected()
            row = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE id = %s", (job_id,)).fetchone()
        return _job(row) if row else None



class PgJobListener:
    """``LISTEN loregraph_jobs`` on its own autocommit connection (an ``AsyncConnection``: waiting never blocks
    the event loop); ``on_notify`` is called, on the loop, for each notification.

    A dropped connection is reconnected with a growing delay (``RECONNECT_MIN_S`` .. ``RECONNECT_MAX_S``);
    ``on_notify`` is also called when it drops (the worker falls back to its short poll) and once it listens
    again (to catch up on jobs enqueued meanwhile). ``listening`` tells whether notifications arrive now.
    TCP keepalives detect a peer that vanished without closing the connection.
    """

    def __init__(self, url: str, on_notify: Callable[[], None]):
        self.url = url
        self.on_notify = on_notify
        self.listening = False
        self.backend_pid: int | None = None  # the server process of the listening connection
        self.reconnects = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Connect and listen in a task of the running loop (returns at once)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="loregraph-job-listener")

    async def close(self) -> None:
        """Stop listening and close the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await task
        self.listening = False

    async def _connect(self) -> Any:
        import psycopg

        options: dict[str, Any] = {"connect_timeout": 10, "application_name": LISTENER_APP_NAME,
                                   **LISTENER_KEEPALIVE}
        conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True, **options)
        try:
            await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _run(self) -> None:
        down_since: float | None = None  # monotonic time the connection was lost (None: not lost)
        attempts = 0
        while True:
            try:
                conn = await self._connect()
            except Exception as exc:
                attempts += 1
                if down_since is None:  # the first connection failed: poll until it works
                    down_since = time.monotonic()
                    log.warning("job listener: cannot connect (%s); workers poll until it can", type(exc).__name__)
                await asyncio.sleep(min(RECONNECT_MAX_S, RECONNECT_MIN_S * 2 ** min(attempts - 1, 16)))
                continue
            self.backend_pid, self.listening = conn.info.backend_pid, True
            if down_since is not None:
                self.reconnects += 1
                log.warning("job listener: reconnected after %.1f s without notifications (%d failed attempt(s))",
                            time.monotonic() - down_since, attempts)
            down_since, attempts = None, 0
            try:
                self.on_notify()  # look for jobs enqueued while this connection was not listening
                async for _ in conn.notifies():
                    self.on_notify()
                raise ConnectionError("the notification stream ended")  # pragma: no cover - not without an error
            except Exception as exc:
                down_since = time.monotonic()
                log.warning("job listener: connection lost (%s); reconnecting, workers poll meanwhile",
                            type(exc).__name__)
            finally:
                self.listening = False
                with suppress(Exception):
                    await conn.close()
            self.on_notify()  # the worker goes back to its short poll until the listener is back
            await asyncio.sleep(RECONNECT_MIN_S)
