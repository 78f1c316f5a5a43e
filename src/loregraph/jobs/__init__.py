"""Durable job queue (in the store's database) and the single worker that executes it in FIFO order."""

from loregraph.jobs.queue import Job, JobQueue, episode_id_for
from loregraph.jobs.worker import Worker, is_transient

__all__ = ["Job", "JobQueue", "Worker", "episode_id_for", "is_transient"]
