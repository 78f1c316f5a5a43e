"""The job queue's protocol: a durable queue of per-group jobs in the store's database (one module per backend:
``jobs/sqlite.py``, ``jobs/postgres.py``), opened by the store itself (``Store.open_queue``).

Life of a job: ``pending`` (accepted; all jobs of one request inserted in one transaction) → ``running`` (claimed,
oldest first) → ``done`` (marked inside the graph write's own transaction, ``mark_done_in``) or ``failed`` (error
recorded; ``retry_failed`` puts it back).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from loregraph.errors import EmbedderMismatchError, StoreError, is_lock_timeout

JOB_NAMESPACE = uuid.UUID("0b7c5a52-7a0e-4a8e-9a4c-6c6f72656a62")
FAILED_LIST_LIMIT = 100


def episode_id_for(job_id: str) -> str:
    """The id of the episode a message job creates: fixed per job, so a second run would find it."""
    return str(uuid.uuid5(JOB_NAMESPACE, job_id))


class JobLostError(RuntimeError):
    """The job was no longer ``running`` when its graph write tried to mark it done (write rolled back)."""


@dataclass(slots=True)
class Job:
    seq: int
    id: str
    group_id: str
    kind: str
    payload: dict[str, Any]
    status: str
    attempts: int
    error: str | None
    episode_id: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None


_STORAGE_FAILURE_CLASSES = frozenset({"DiskFull", "IoError", "InsufficientResources", "OutOfMemory", "AdminShutdown",
                                      "CrashShutdown", "CannotConnectNow", "ReadOnlySqlTransaction"})
_STORAGE_FAILURE_WORDS = ("disk is full", "disk i/o error", "no space left", "readonly database", "read-only",
                          "unable to open database")


def is_storage_failure(exc: BaseException) -> bool:
    """The store cannot be written right now (disk full, I/O error, read-only, server shutting down): nothing is
    wrong with the job, so it waits and runs again instead of failing for good. A lock wait that timed out
    (another writer held the lock) is not one: see ``is_lock_timeout``."""
    if is_lock_timeout(exc):
        return False
    for e in (exc, exc.__cause__):
        if e is None:
            continue
        if isinstance(e, StoreError) and not isinstance(e, EmbedderMismatchError):
            return True
        if type(e).__name__ in _STORAGE_FAILURE_CLASSES:
            return True
        if type(e).__name__ in {"OperationalError", "DatabaseError"} and \
                any(w in str(e).lower() for w in _STORAGE_FAILURE_WORDS):
            return True
    return False


class JobListener(Protocol):
    """Wakes an idle worker when another process enqueues (PostgreSQL's LISTEN/NOTIFY)."""

    @property
    def listening(self) -> bool: ...
    def start(self) -> None: ...
    async def close(self) -> None: ...


class JobQueue(Protocol):
    """A durable FIFO of jobs per group, in the store's own database."""

    single_worker_lock: Path | None
    """A file that at most one worker process may lock (SQLite: one worker per database file); None when any
    number of workers may share the queue."""

    def close(self) -> None: ...
    def enqueue(self, group_id: str, payloads: Sequence[dict[str, Any]], kind: str = "message") -> list[str]: ...
    def notify(self, group_id: str = "") -> None: ...
    def listener(self, on_notify: Callable[[], None]) -> JobListener | None: ...
    def recover(self, max_attempts: int) -> dict[str, int]: ...
    def claim(self) -> tuple[Job, int] | None: ...
    def mark_done_in(self, conn: Any, job: Job, episode_id: str | None) -> None: ...
    def finished(self, job: Job) -> None: ...
    def note_attempt(self, seq: int) -> None: ...
    def mark_done(self, seq: int, episode_id: str | None) -> None: ...
    def mark_failed(self, seq: int, error: str) -> bool: ...
    def release(self, seq: int) -> bool: ...
    def counts(self, group_id: str | None = None) -> dict[str, int]: ...
    def failed_jobs(self, group_id: str, limit: int = ...) -> list[Job]: ...
    def get(self, job_id: str) -> Job | None: ...
    def retry_failed(self, group_id: str) -> int: ...
    def cancel(self, group_id: str | None = None) -> int: ...
    def wait_idle(self, timeout: float, group_id: str | None = None, poll: float = ...) -> dict[str, int]: ...


class QueueMaintenance:
    """Queue operations whose SQL is the same on every backend but for the parameter marker (``PARAM``)."""

    PARAM = "?"

    def _tx(self) -> AbstractContextManager[Any]:  # pragma: no cover - each backend defines it
        raise NotImplementedError

    def counts(self, group_id: str | None = None) -> dict[str, int]:  # pragma: no cover - each backend defines it
        raise NotImplementedError

    def retry_failed(self, group_id: str) -> int:
        """Failed jobs of the group go back to pending; they keep their place (oldest first)."""
        with self._tx() as c:
            return c.execute("UPDATE jobs SET status = 'pending', error = NULL, finished_at = NULL, attempts = 0 "
                             f"WHERE group_id = {self.PARAM} AND status = 'failed'", (group_id,)).rowcount

    def cancel(self, group_id: str | None = None) -> int:
        """Delete jobs not yet done (pending and failed) of one group, or of every group."""
        with self._tx() as c:
            if group_id is None:
                return c.execute("DELETE FROM jobs WHERE status IN ('pending', 'failed')").rowcount
            return c.execute(f"DELETE FROM jobs WHERE group_id = {self.PARAM} AND status IN ('pending', 'failed')",
                             (group_id,)).rowcount

    def wait_idle(self, timeout: float, group_id: str | None = None, poll: float = 0.02) -> dict[str, int]:
        """Block until nothing is pending or running (for scripts and benchmarks); returns the counts."""
        deadline = time.monotonic() + timeout
        while True:
            c = self.counts(group_id)
            if (c["pending"] == 0 and c["running"] == 0) or time.monotonic() > deadline:
                return c
            time.sleep(poll)


__all__ = ["FAILED_LIST_LIMIT", "Job", "JobListener", "JobLostError", "JobQueue", "QueueMaintenance",
           "episode_id_for"]
