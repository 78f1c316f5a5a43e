"""The queue worker: one job at a time, oldest first, for the service's lifetime (SQLite: the only worker of the
database file; PostgreSQL: one of any number, each on one group at a time, see ``jobs/postgres.py``).

A job is one message (the payload is ``Message`` JSON) run through the facade, ``Memory.add_message_job``, which
marks it done inside the graph write's transaction: a kill at any moment leaves either both or neither. The episode
id is derived from the job id, a second guard: a job whose episode exists already is only marked done.
A failing job is recorded as failed and the worker goes on; a transient error (connection, timeout,
database busy) is retried once after a backoff. On shutdown the worker takes no new job; what is still
pending runs at the next start. Logs carry ids, counts and durations, never message content.

An idle worker waits for ``wake`` (the API of its own process), for ``poll_interval_s``, and on PostgreSQL for a
``NOTIFY`` from any process (the queue's ``listener``); while that listener is connected the poll is only a fallback
and runs every ``listen_poll_interval_s`` at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loregraph.errors import is_lock_timeout
from loregraph.graph.messages import Message
from loregraph.ingest.pipeline import AddEpisodeResult
from loregraph.ingest.request import message_episode_id
from loregraph.jobs.base import Job, JobListener, JobQueue, episode_id_for, is_storage_failure
from loregraph.memory import Memory

log = logging.getLogger("loregraph.jobs")

RETRY_BACKOFF_S = 0.5
POLL_INTERVAL_S = 1.0  # also picks up jobs enqueued by other processes sharing the database
# PostgreSQL while the listener is connected: new jobs wake the worker at once; the poll only catches a lost
# notification and the running job of a dead worker (reclaimed once its group lock is free)
LISTEN_POLL_INTERVAL_S = 10.0
LOGGED_FACT_IDS = 20
# waits between tries of a job while the store cannot be written (disk full, I/O error, server shutting down):
# the job is not at fault, so it is neither failed nor skipped, and the jobs after it keep their order
STORAGE_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


def is_transient(exc: BaseException) -> bool:
    """Errors worth one more try: connection problems, timeouts, a busy database, or any error that
    declares itself transient (``exc.transient = True``)."""
    if getattr(exc, "transient", False):
        return True
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    if type(exc).__name__ in {"DeadlockDetected", "SerializationFailure"}:  # PostgreSQL: rolled back, try again
        return True
    msg = str(exc).lower()
    return type(exc).__name__ == "OperationalError" and ("locked" in msg or "busy" in msg)


def error_text(exc: BaseException) -> str:
    """What the jobs table records about a failure (validation errors without the offending input)."""
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors(include_input=False)]
        return f"ValidationError: {'; '.join(parts)}"
    return f"{type(exc).__name__}: {exc}"[:2000]


class _WorkerLock:
    """At most one worker per database file across processes (an OS lock, released even on kill -9)."""

    def __init__(self, path: Path | None):
        self.path = path  # None: a queue any number of workers share
        self.fd: int | None = None

    def acquire(self) -> bool:
        if self.path is None:  # PostgreSQL: any number of workers (the queue serializes each group)
            return True
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: single process assumed
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing drops the lock
            self.fd = None


class Worker:
    def __init__(self, memory: Memory, queue: JobQueue, *, max_attempts: int = 3,
                 retry_backoff_s: float = RETRY_BACKOFF_S, poll_interval_s: float = POLL_INTERVAL_S,
                 listen_poll_interval_s: float = LISTEN_POLL_INTERVAL_S):
        self.memory = memory
        self.queue = queue
        self.max_attempts = max_attempts
        self.retry_backoff_s = retry_backoff_s
        self.poll_interval_s = poll_interval_s
        self.listen_poll_interval_s = listen_poll_interval_s
        self.listener: JobListener | None = None  # PostgreSQL, while started
        self._wake = asyncio.Event()
        self._stop_event = asyncio.Event()
        self._stopping = False
        self._waiting = False
        self._task: asyncio.Task[None] | None = None
        self._lock = _WorkerLock(queue.single_worker_lock)
        self.processed = 0
        self.failed = 0
        self.storage_backoff_s = STORAGE_BACKOFF_S
        self.degraded_since: float | None = None
        """Monotonic time since when writes fail for a storage reason (None: writes work)."""
        self.lock_waits = 0
        """Job writes that found the store busy (a lock held by another writer past the lock timeout) and ran
        again: contention, not a broken store, so the service is not reported degraded for them."""

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> bool:
        """Recover interrupted jobs and start the loop. False when another process runs this database's worker
        (jobs accepted here are then executed there)."""
        if not self._lock.acquire():
            log.warning("another process runs the worker of this database; this one only accepts jobs")
            return False
        recovered = await asyncio.to_thread(self.queue.recover, self.max_attempts)
        counts = await asyncio.to_thread(self.queue.counts)
        log.info("worker started: pending=%d failed=%d (recovered %d interrupted job(s), %d over the attempt limit)",
                 counts["pending"], counts["failed"], recovered["reset"], recovered["failed"])
        self.listener = self.queue.listener(self.wake)
        if self.listener is not None:
            self.listener.start()
        self._task = asyncio.create_task(self._loop(), name="loregraph-worker")
        return True

    @property
    def idle(self) -> bool:
        """The loop found no job and waits for a wake-up (none is pending): a job enqueued now is picked up only
        through a notification or the next poll."""
        return self._waiting and not self._wake.is_set() and self.running

    def _idle_wait_s(self) -> float:
        """How long an idle worker waits for a wake-up before it looks at the queue again."""
        if self.listener is not None and self.listener.listening:
            return max(self.poll_interval_s, self.listen_poll_interval_s)
        return self.poll_interval_s

    def wake(self) -> None:
        """New jobs were enqueued."""
        self._wake.set()

    async def stop(self, timeout: float = 30.0) -> None:
        """Take no new job; let the running one finish (up to ``timeout``); leave the rest pending."""
        self._stopping = True
        self._stop_event.set()
        self._wake.set()
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=timeout)
            if not done:
                log.warning("worker stop: the running job did not finish within %.1f s; it runs again at the "
                            "next start", timeout)
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._task
            with contextlib.suppress(Exception):  # the groups this worker held are free: others may take them
                await asyncio.to_thread(self.queue.notify)
        if self.listener is not None:
            await self.listener.close()
            self.listener = None
        counts = await asyncio.to_thread(self.queue.counts)
        log.info("worker stopped: %d processed, %d failed in this run; %d pending left for the next start",
                 self.processed, self.failed, counts["pending"])
        self._lock.release()

    async def _loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            wait_s = self._idle_wait_s()
            try:
                claimed = await asyncio.to_thread(self.queue.claim)
            except Exception as exc:  # the database is unreachable: keep the worker alive, try again later
                wait_s = self.poll_interval_s  # no notification announces its return
                log.error("worker: cannot claim a job (%s); retrying in %.1f s", type(exc).__name__, wait_s)
                claimed = None
            if claimed is None:
                self._waiting = True
                try:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), wait_s)
                finally:
                    self._waiting = False
                continue
            job, remaining = claimed
            log.info("job %s picked up: group=%s attempt=%d queue_remaining=%d", job.id, job.group_id,
                     job.attempts, remaining)
            try:
                await self._run(job)
            except asyncio.CancelledError:
                # stop() gave up waiting: the job goes back to pending unless its write already committed
                await asyncio.to_thread(self.queue.release, job.seq)
                raise
            except Exception:  # bookkeeping failed; never let one job end the worker
                log.exception("job %s: unexpected worker error", job.id)
            finally:  # PostgreSQL: other workers may take this job's group now
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.queue.finished, job)

    async def _run(self, job: Job) -> None:
        t0 = time.perf_counter()
        retries = storage_tries = busy_tries = 0
        while True:
            try:
                result = await self._execute(job)
                self.degraded_since = None
                break
            except Exception as exc:
                if is_lock_timeout(exc) and not self._stopping:
                    # nothing was written; the writer holding the lock finishes: run again, however long it takes
                    wait = self.retry_backoff_s * min(2 ** busy_tries, 64)
                    busy_tries += 1
                    self.lock_waits += 1
                    log.info("job %s: the store is busy (a lock held by another writer); trying again in %.2f s "
                             "(try %d)", job.id, wait, busy_tries)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop_event.wait(), wait)
                    if self._stopping:
                        with contextlib.suppress(Exception):
                            await asyncio.to_thread(self.queue.release, job.seq)
                        return
                    continue
                if is_storage_failure(exc) and not self._stopping:
                    wait = self.storage_backoff_s[min(storage_tries, len(self.storage_backoff_s) - 1)]
                    storage_tries += 1
                    if self.degraded_since is None:
                        self.degraded_since = time.monotonic()
                    log.warning("job %s: the store cannot be written (%s); trying again in %.0f s (try %d)", job.id,
                                type(exc).__name__, wait, storage_tries)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop_event.wait(), wait)
                    if self._stopping:  # shutting down: the job runs at the next start
                        with contextlib.suppress(Exception):
                            await asyncio.to_thread(self.queue.release, job.seq)
                        return
                    continue
                if is_transient(exc) and retries < 1 and not self._stopping:
                    retries += 1
                    log.warning("job %s: transient %s; retrying once in %.2f s", job.id, type(exc).__name__,
                                self.retry_backoff_s)
                    await asyncio.sleep(self.retry_backoff_s)  # backoff before the retry
                    await asyncio.to_thread(self.queue.note_attempt, job.seq)
                    continue
                await asyncio.to_thread(self.queue.mark_failed, job.seq, error_text(exc))
                self.failed += 1
                log.warning("job %s failed after %.1f ms: group=%s error=%s retries=%d", job.id,
                            (time.perf_counter() - t0) * 1e3, job.group_id, type(exc).__name__, retries)
                return
        self.processed += 1
        ms = (time.perf_counter() - t0) * 1e3
        if result is None:
            log.info("job %s done in %.1f ms: its episode existed already (not processed again)", job.id, ms)
            return
        c = result.counts
        fact_ids = [f.id for f in result.facts][:LOGGED_FACT_IDS]
        log.info("job %s done in %.1f ms: group=%s episode=%s candidate_entities=%d candidate_relations=%d "
                 "entities=%d accepted_facts=%d invalidated_facts=%d duplicates=%d skipped=%d retries=%d "
                 "fact_ids=%s", job.id, ms, job.group_id, result.episode.id, c.get("entities_extracted", 0),
                 c.get("relations_extracted", 0), len(result.entities), len(result.facts), len(result.invalidated),
                 len(result.duplicates), c.get("skipped", 0), retries, ",".join(fact_ids) or "-")

    @staticmethod
    def _episode_id(job: Job) -> str:
        """The episode a message job creates: the message's own key when it carries its time (every REST job
        does), so the same message sent twice is ingested once; else fixed per job."""
        if not job.payload.get("timestamp"):
            return episode_id_for(job.id)
        message = Message.from_payload(job.payload)
        return message_episode_id(job.group_id, message.role_type, message.role, message.timestamp, message.content)

    async def _execute(self, job: Job) -> AddEpisodeResult | None:
        """The job's message through the facade, with the done-mark inside its write transaction; None when its
        episode existed already (then it is only marked done)."""
        reprocess = job.payload.get("uuid")
        episode_id = reprocess or self._episode_id(job)
        if not reprocess and await self.memory.get_episodes(job.group_id, ids=[episode_id]):
            # run before (a crash after its commit), or the same message sent again: done, once
            await asyncio.to_thread(self.queue.mark_done, job.seq, episode_id)  # its payload may be cleared already
            return None
        message = Message.from_payload(job.payload)
        marked: list[bool] = []

        def mark_done(conn: Any) -> None:
            self.queue.mark_done_in(conn, job, episode_id)
            marked.append(True)

        result = await self.memory.add_message_job(job.group_id, message, episode_id=episode_id, in_write=mark_done)
        if not marked:  # nothing was written (the episode existed): still done exactly once
            await asyncio.to_thread(self.queue.mark_done, job.seq, episode_id)
        return result
