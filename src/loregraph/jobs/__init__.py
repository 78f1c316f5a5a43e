"""Durable job queue (in the store's database) and the worker that executes it in FIFO order per group."""

from typing import Any

from loregraph.jobs.pg_queue import PgJobQueue
from loregraph.jobs.queue import Job, JobQueue, episode_id_for
from loregraph.jobs.worker import Worker, is_transient


def open_queue(store: Any, *, max_attempts: int = 3) -> JobQueue | PgJobQueue:
    """The job queue in ``store``'s database: a file lock and one worker for SQLite, shared by any number of
    processes for PostgreSQL."""
    if getattr(store, "path", None) is not None:
        return JobQueue(store.path)
    url = getattr(store, "url", None)
    if url and str(url).startswith(("postgresql://", "postgres://")):
        return PgJobQueue(url, max_attempts=max_attempts)
    raise RuntimeError(f"no job queue for a {type(store).__name__}")


__all__ = ["Job", "JobQueue", "PgJobQueue", "Worker", "episode_id_for", "is_transient", "open_queue"]
