"""The job queue on PostgreSQL (issue 6): any number of API and worker processes share one database; jobs of one
group run one at a time in acceptance order; a job of a killed worker is retried by another, without a partial
write or a duplicate.

The server-process tests use the scripted stand-in for a remote model (rest_support:make_extractor) instead of
the LocalExtractor: they measure the queue, and 1,000 messages through spaCy would dominate the suite's time
(with it the 1,000-message test finishes in well under a minute). Every test gets a fresh database.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from loregraph.assembly.worker import Worker
from loregraph.jobs import JobLostError, PostgresJobQueue
from loregraph.jobs.postgres import LISTENER_APP_NAME
from rest_support import Server, wait_until
from scripted import ScriptedExtractor


def pg_rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as c:
        return c.execute(sql, params).fetchall()


def pg_counts(url: str, group_id: str | None = None) -> dict[str, int]:
    where, params = ("WHERE group_id = %s", (group_id,)) if group_id else ("", ())
    out = {"pending": 0, "running": 0, "done": 0, "failed": 0}
    out.update(dict(pg_rows(url, f"SELECT status, COUNT(*) FROM jobs {where} GROUP BY status", params)))
    return out


def pg_wait_idle(url: str, timeout: float = 60) -> dict[str, int]:
    def idle() -> dict[str, int] | None:
        c = pg_counts(url)
        return c if c["pending"] == 0 and c["running"] == 0 else None

    return wait_until(idle, timeout, interval=0.1, what="the queue to drain")


def message_payload(group: str, content: str) -> dict:
    return {"group_id": group, "content": content, "role_type": "user", "source": "message"}


def assert_processed_exactly_once_in_order(url: str, group: str, contents: list[str]) -> None:
    eps = pg_rows(url, "SELECT id, content FROM episodes WHERE group_id = %s ORDER BY seq", (group,))
    assert [c for c, n in Counter(c for _, c in eps).items() if n > 1] == []  # no duplicates
    assert [c for _, c in eps] == [f"(user): {t}" for t in contents]  # every one, in acceptance order
    jobs = pg_rows(url, "SELECT id, status, episode_id, started_at, finished_at FROM jobs WHERE group_id = %s "
                        "ORDER BY seq", (group,))
    assert len(jobs) == len(contents) and {j[1] for j in jobs} == {"done"}
    # each job recorded the episode it created; the episode's id is fixed per message (a retry finds it)
    assert [j[2] for j in jobs] == [i for i, _ in eps] and len({i for i, _ in eps}) == len(eps)
    # one job of the group at a time, whichever worker ran it: each started after the previous one finished
    assert all(a[4] <= b[3] for a, b in itertools.pairwise(jobs))


# ---- in process: claiming, group locks, reclaim, fencing ---------------------------------------------
async def test_one_group_at_a_time_across_queues_and_a_dead_claimers_job_is_reclaimed(pg_db, embedder):
    from loregraph.memory import Memory

    m = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor())
    q1, q2 = m.store.open_queue(), PostgresJobQueue(pg_db)
    try:
        assert isinstance(q1, PostgresJobQueue)
        a1, a2 = q1.enqueue("a", [message_payload("a", "a1"), message_payload("a", "a2")])
        (b1,) = q2.enqueue("b", [message_payload("b", "b1")])
        job, remaining = q1.claim()
        assert (job.id, job.attempts, remaining) == (a1, 1, 2)
        job2, _ = q2.claim()
        assert job2.id == b1  # group a is q1's: q2 neither runs a2 nor a1 again
        assert q2.claim() is None
        q2.mark_done(job2.seq, None)  # b is through: the only job a claim can take next is a's
        q2.finished(job2)

        q1.conn.close()  # q1's process died with a1 running: its group lock is gone with its connection
        reclaimed, _ = wait_until(q2.claim, 10, what="the dead connection's group lock to go")
        assert (reclaimed.id, reclaimed.attempts, reclaimed.status) == (a1, 2, "running")
        # the first claimer comes back (reconnects): its claim is over, it can neither fail nor release the job
        assert not q1.mark_failed(job.seq, "late error") and not q1.release(job.seq)
        assert q2.get(a1).status == "running"
        with pytest.raises(JobLostError):  # nor could its write commit
            await Worker(m, q2)._execute(job)
        assert (await m.count("a"))["episodes"] == 0
        await Worker(m, q2)._execute(reclaimed)
        q2.finished(reclaimed)
        nxt, _ = q2.claim()
        assert nxt.id == a2
        q2.finished(nxt)
        assert q2.get(a1).status == "done" and (await m.count("a"))["episodes"] == 1
    finally:
        q1.close()
        q2.close()
        await m.close()


async def test_a_job_interrupted_too_often_is_failed_at_reclaim(pg_db, embedder):
    from loregraph.memory import Memory

    m = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor())
    q = PostgresJobQueue(pg_db, max_attempts=3)
    try:
        a, b = q.enqueue("g", [message_payload("g", "a"), message_payload("g", "b")])
        with q.conn.transaction():
            q.conn.execute("UPDATE jobs SET status = 'running', attempts = 3 WHERE id = %s", (a,))
        job, _ = q.claim()
        assert job.id == b
        assert q.get(a).status == "failed" and "interrupted 3 times" in q.get(a).error
        q.finished(job)
    finally:
        q.close()
        await m.close()


async def test_two_workers_in_one_process_drain_the_queue_in_group_order(pg_db, embedder):
    from loregraph.memory import Memory

    m1 = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor())
    m2 = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor())
    q1, q2 = PostgresJobQueue(pg_db), PostgresJobQueue(pg_db)
    w1, w2 = Worker(m1, q1, poll_interval_s=0.05), Worker(m2, q2, poll_interval_s=0.05)
    groups = {f"g{k}": [f"I use Tool{k}x{i} in step {i}." for i in range(8)] for k in range(4)}
    for i in range(8):
        for g, contents in groups.items():
            q1.enqueue(g, [message_payload(g, contents[i])])
    assert await w1.start() and await w2.start()  # no file lock: both run
    try:
        await async_wait_until(lambda: q1.counts() == {"pending": 0, "running": 0, "done": 32, "failed": 0}, 60,
                               "the 32 jobs to be done")
    finally:
        await w1.stop()
        await w2.stop()
        q1.close()
        q2.close()
        await m1.close()
        await m2.close()
    assert w1.processed > 0 and w2.processed > 0 and w1.processed + w2.processed == 32
    for g, contents in groups.items():
        assert_processed_exactly_once_in_order(pg_db, g, contents)


# ---- wake-up: NOTIFY on enqueue, LISTEN in the idle worker ------------------------------------------------
LONG_POLL_S = 30.0  # a worker that only polled would see a new job this late
PROMPT_S = 10.0  # generous, yet well below LONG_POLL_S: checks the wake-up path, not its speed


async def async_wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """``wait_until`` without blocking the event loop (the worker and its listener run on it)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(predicate)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


def listener_pids(url: str) -> list[int]:
    return [r[0] for r in pg_rows(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                       "AND application_name = %s", (LISTENER_APP_NAME,))]


async def enqueue_to_idle_worker(worker: Worker, producer: PostgresJobQueue, group: str, content: str) -> None:
    """Enqueue one job on ``producer`` (not the worker's queue: nothing calls ``Worker.wake``) while ``worker``
    waits idle; it must be done well before the worker's next poll (only a notification can wake it that soon),
    and the worker idle again afterwards."""
    (job_id,) = producer.enqueue(group, [message_payload(group, content)])
    await async_wait_until(lambda: producer.get(job_id).status == "done", PROMPT_S, f"job {job_id} to be done")
    await async_wait_until(lambda: worker.idle, PROMPT_S, "the worker to wait again")


async def idle_listening_worker(pg_db: str, embedder: Any) -> tuple[Any, Worker, PostgresJobQueue]:
    """A started worker with a long poll interval, listening, past its first look at the empty queue."""
    from loregraph.memory import Memory

    m = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor())
    worker = Worker(m, PostgresJobQueue(pg_db), poll_interval_s=LONG_POLL_S, listen_poll_interval_s=LONG_POLL_S)
    assert await worker.start()
    await async_wait_until(lambda: worker.listener is not None and worker.listener.listening, PROMPT_S,
                           "the worker to listen")
    # the claim woken by the listener's start found nothing: the worker waits now
    await async_wait_until(lambda: worker.idle, PROMPT_S, "the worker to wait")
    return m, worker, PostgresJobQueue(pg_db)


async def stop_idle_listening_worker(m, worker, producer) -> None:
    await worker.stop()
    worker.queue.close()
    producer.close()
    await m.close()


async def test_a_job_enqueued_by_another_connection_wakes_an_idle_worker_at_once(pg_db, embedder):
    m, worker, producer = await idle_listening_worker(pg_db, embedder)
    try:
        assert listener_pids(pg_db) == [worker.listener.backend_pid]
        for i in range(3):  # each time the worker is idle again before the next job comes
            await enqueue_to_idle_worker(worker, producer, "wake", f"I use Wake{i} every day.")
        assert worker.processed == 3
    finally:
        await stop_idle_listening_worker(m, worker, producer)
    assert worker.listener is None
    wait_until(lambda: listener_pids(pg_db) == [], 10, what="the listening connection to close")


async def test_the_listener_reconnects_after_its_connection_is_terminated(pg_db, embedder, caplog):
    caplog.set_level(logging.WARNING, logger="loregraph.jobs")
    m, worker, producer = await idle_listening_worker(pg_db, embedder)
    try:
        await enqueue_to_idle_worker(worker, producer, "re", "I use Before every day.")
        pid = worker.listener.backend_pid
        assert pg_rows(pg_db, "SELECT pg_terminate_backend(%s)", (pid,)) == [(True,)]
        await async_wait_until(lambda: worker.listener.listening and worker.listener.backend_pid != pid, PROMPT_S,
                               "the listener to reconnect")
        assert listener_pids(pg_db) == [worker.listener.backend_pid] and worker.listener.reconnects == 1
        await async_wait_until(lambda: worker.idle, PROMPT_S, "the worker to wait after the catch-up claim")
        for i in range(2):
            await enqueue_to_idle_worker(worker, producer, "re", f"I use After{i} every day.")
        assert worker.processed == 3
    finally:
        await stop_idle_listening_worker(m, worker, producer)
    warnings = [r.getMessage() for r in caplog.records if r.name == "loregraph.jobs" and r.levelno == logging.WARNING]
    assert any(re.fullmatch(r"job listener: connection lost \(\w+\); .*", w) for w in warnings), warnings
    reconnected = r"job listener: reconnected after [\d.]+ s without notifications \(\d+ failed attempt\(s\)\)"
    assert any(re.fullmatch(reconnected, w) for w in warnings), warnings


# ---- real processes -----------------------------------------------------------------------------------
def processes(tmp_path: Path, url: str, apis: int, workers: int, env: dict[str, str] | None = None
              ) -> tuple[list[Server], list[Server]]:
    """``apis`` servers with --no-worker and ``workers`` ``loregraph worker`` processes on one database, started
    at once (the first opener migrates, the others wait on the migration lock)."""
    api = [Server(tmp_path / f"api{i}", url, env=env, args=("--no-worker",)) for i in range(apis)]
    wrk = [Server(tmp_path / f"worker{i}", url, env=env, command="worker") for i in range(workers)]
    for p in api + wrk:
        p.spawn()
    for p in api + wrk:
        p.wait_ready()
    return api, wrk


def jobs_done_by(proc: Server) -> int:
    return len(re.findall(r"job \S+ done in", proc.log()))


@pytest.fixture(params=["postgres", "citus"])
def queue_db(request):
    """A fresh database on plain PostgreSQL, then on the Citus cluster (its coordinator: the queue is a
    coordinator-local table there, the graph distributed by group)."""
    return request.getfixturevalue("pg_db" if request.param == "postgres" else "citus_db")


def test_two_api_and_two_worker_processes_1000_messages_over_10_groups(tmp_path, queue_db):
    pg_db = queue_db
    api, wrk = processes(tmp_path, pg_db, apis=2, workers=2)
    groups = {f"grp{k}": [f"I use Tool{k}n{i} for task {i}." for i in range(100)] for k in range(10)}
    errors: list[BaseException] = []

    def client(k: int, group: str, contents: list[str]) -> None:
        # requests of 5 messages, alternating between the two API processes; each accepted before the next
        try:
            for n, i in enumerate(range(0, len(contents), 5)):
                url = api[(k + n) % 2].url
                msgs = [{"content": t, "role_type": "user"} for t in contents[i:i + 5]]
                r = httpx.post(f"{url}/messages", json={"group_id": group, "messages": msgs}, timeout=60)
                assert r.status_code == 202, r.text
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    try:
        threads = [threading.Thread(target=client, args=(k, g, c)) for k, (g, c) in enumerate(groups.items())]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert pg_wait_idle(pg_db, timeout=120) == {"pending": 0, "running": 0, "done": 1000, "failed": 0}
    finally:
        for p in api + wrk:
            p.stop()
    for g, contents in groups.items():
        assert_processed_exactly_once_in_order(pg_db, g, contents)
    done = [jobs_done_by(w) for w in wrk]
    assert sum(done) == 1000 and min(done) > 0  # both workers took part; nobody ran a job twice
    assert all(jobs_done_by(a) == 0 for a in api)  # the API processes only accepted


def test_kill_9_of_a_worker_in_the_middle_of_a_graph_write(tmp_path, pg_db):
    """The write is held open deterministically: the test locks the facts table, so the worker's transaction has
    written its episode and entities and waits to insert its fact when the worker is killed."""
    api, (w1,) = processes(tmp_path, pg_db, apis=1, workers=1)
    contents = [f"I use Crash{i} for step {i}." for i in range(6)]
    httpx.post(f"{api[0].url}/messages", json={"group_id": "k", "messages": [
        {"content": t, "role_type": "user"} for t in contents]}, timeout=60).raise_for_status()
    w1.wait_log(r"job \S+ done in", timeout=60)
    blocker = psycopg.connect(pg_db)
    w2 = Server(tmp_path / "worker_b", pg_db, command="worker")
    try:
        blocker.execute("LOCK TABLE facts IN EXCLUSIVE MODE")  # reads go on, inserts wait
        waiting = ("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
                   "AND query ILIKE 'INSERT INTO facts%%'")
        wait_until(lambda: pg_rows(pg_db, waiting), 60, what="a write waiting")
        (victim,) = pg_rows(pg_db, "SELECT id, attempts FROM jobs WHERE status = 'running'")
        assert victim[1] == 1
        w1.kill()  # kill -9 in the middle of the job's write transaction
        w2.start()
        w2.wait_log(rf"job {victim[0]} picked up: group=k attempt=2", timeout=60)  # another worker retries it
        blocker.rollback()  # let the writes go on
        assert pg_wait_idle(pg_db) == {"pending": 0, "running": 0, "done": 6, "failed": 0}
    finally:
        blocker.close()
        w2.stop()
        api[0].stop()
    assert_processed_exactly_once_in_order(pg_db, "k", contents)
    (ep,) = pg_rows(pg_db, "SELECT episode_id FROM jobs WHERE id = %s", (victim[0],))[0]
    facts = pg_rows(pg_db, "SELECT fact FROM facts WHERE episodes ? %s", (ep,))
    assert len(facts) == 1  # the retried job wrote its episode and fact once; nothing of the killed run remains
    assert pg_rows(pg_db, "SELECT attempts FROM jobs WHERE id = %s", (victim[0],))[0][0] == 2


def test_kill_9_of_one_of_two_workers_under_load_loses_and_duplicates_nothing(tmp_path, pg_db):
    env = {"LOREGRAPH_TEST_DELAY_MS": "5"}  # a remote model's latency keeps both workers busy long enough
    api, (w1, w2) = processes(tmp_path, pg_db, apis=1, workers=2, env=env)
    groups = {f"load{k}": [f"I use Load{k}n{i} for task {i}." for i in range(40)] for k in range(5)}
    try:
        for g, contents in groups.items():
            for i in range(0, 40, 10):
                httpx.post(f"{api[0].url}/messages", json={"group_id": g, "messages": [
                    {"content": t, "role_type": "user"} for t in contents[i:i + 10]]}, timeout=60).raise_for_status()
        wait_until(lambda: jobs_done_by(w1) >= 20, 60, what="20 jobs done by the first worker")
        w1.kill()
        assert pg_counts(pg_db)["done"] < 200
        assert pg_wait_idle(pg_db, timeout=120) == {"pending": 0, "running": 0, "done": 200, "failed": 0}
    finally:
        w2.stop()
        api[0].stop()
    for g, contents in groups.items():
        assert_processed_exactly_once_in_order(pg_db, g, contents)
