"""Durable job queues in the store's own database, one module per backend (opened by ``Store.open_queue``)."""

from loregraph.jobs.base import Job, JobListener, JobLostError, JobQueue, episode_id_for
from loregraph.jobs.postgres import PostgresJobQueue
from loregraph.jobs.sqlite import SQLiteJobQueue

__all__ = ["Job", "JobListener", "JobLostError", "JobQueue", "PostgresJobQueue", "SQLiteJobQueue", "episode_id_for"]
