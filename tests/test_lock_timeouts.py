"""A write that waits too long for a lock another writer holds (SQLite's busy timeout, PostgreSQL's lock_timeout)
is a retryable answer with a clear message — gRPC ``UNAVAILABLE``, REST 503 with ``Retry-After`` — never
``INTERNAL`` or 500, and nothing of it is written; the same call succeeds once the lock is free.

The lock is held by a real second connection; the store's wait is shortened on the real server (SQLite: the
connection's busy timeout; PostgreSQL: the database's ``lock_timeout``)."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import grpc
import httpx
import psycopg
import pytest
import sqlean

from grpc_support import NoExtractor, entity, start, stop, uid
from loregraph.memory import Memory
from loregraph.store.postgres import GROUP_WRITE_LOCK_CLASS
from rest_support import Server


def short_lock_timeout(pg_url: str, db_url: str) -> None:
    """Sessions opened on ``db_url`` from now on give up a lock wait after 300 ms."""
    name = db_url.rsplit("/", 1)[1].split("?")[0]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f'ALTER DATABASE "{name}" SET lock_timeout = \'300ms\'')


@contextlib.contextmanager
def group_write_locked(db_url: str, group: str):
    """Another writer holds the group's write lock (PostgreSQL) / the database's write lock (SQLite)."""
    if db_url.startswith("postgresql"):
        with psycopg.connect(db_url) as c:
            c.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (GROUP_WRITE_LOCK_CLASS, group))
            yield
            c.rollback()
    else:
        c = sqlean.connect(db_url[len("sqlite:///"):], isolation_level=None)
        try:
            c.execute("BEGIN IMMEDIATE")
            yield
            c.execute("ROLLBACK")
        finally:
            c.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def run(request, tmp_path, embedder):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'q.db'}"
    else:
        url = request.getfixturevalue("pg_db")
        short_lock_timeout(request.getfixturevalue("pg_url"), url)
    memory = await Memory.open(url, embedder=embedder, extractor=NoExtractor())
    if request.param == "sqlite":
        memory.store.conn.execute("PRAGMA busy_timeout = 300")
    r = await start(memory)
    r.url = url  # type: ignore[attr-defined]
    yield r
    await stop(r)
    await memory.close()


async def test_a_grpc_write_that_times_out_on_a_lock_is_unavailable_and_can_be_retried(run):
    ada = uid()
    with group_write_locked(run.url, "g1"), pytest.raises(grpc.aio.AioRpcError) as info:
        await run.upsert(entities=[entity(ada, "Ada")])
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE, (info.value.code(), info.value.details())
    assert "busy" in info.value.details() and "retry" in info.value.details()
    assert (await run.counts())["entities"] == 0  # nothing of the call was written
    await run.upsert(entities=[entity(ada, "Ada")])  # the same call, once the lock is free
    assert ada in {e.id for e in await run.entities()}


def test_a_rest_write_that_times_out_on_a_lock_is_503_with_retry_after(tmp_path, pg_url, pg_db):
    short_lock_timeout(pg_url, pg_db)
    srv = Server(tmp_path / "srv", pg_db, args=("--no-worker",)).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=60) as client:
            body = {"group_id": "g", "messages": [{"content": "I use Rust.", "role_type": "user"}]}
            with psycopg.connect(pg_db) as holder:
                holder.execute("LOCK TABLE jobs IN SHARE MODE")  # blocks every insert into the queue
                busy = client.post("/messages", json=body)
                holder.rollback()
            assert busy.status_code == 503, busy.text
            assert int(busy.headers["Retry-After"]) > 0
            assert "busy" in busy.json()["detail"] and "Traceback" not in busy.text
            assert client.get("/groups/g/queue").json()["pending"] == 0
            assert client.post("/messages", json=body).status_code == 202
            assert client.get("/groups/g/queue").json()["pending"] == 1
            assert client.get("/health").json()["status"] == "ok"  # a lock wait is not a degraded store
    finally:
        srv.stop()


async def test_an_mcp_write_that_times_out_on_a_lock_says_busy_and_retry(tmp_path, pg_url, pg_db):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from test_documents_mcp import _env

    short_lock_timeout(pg_url, pg_db)
    params = StdioServerParameters(command=sys.executable, args=["-m", "loregraph.cli", "mcp", "--db", pg_db],
                                   cwd=tmp_path, env=_env({}))
    args = {"group_id": "g", "messages": [{"content": "I use Rust.", "role_type": "user"}]}
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            with group_write_locked(pg_db, "g"):
                busy = await client.call_tool("add_messages", args)
            assert busy.is_error, busy.structured_content
            assert "busy" in busy.content[0].text and "retry" in busy.content[0].text, busy.content[0].text
            again = await client.call_tool("add_messages", args)
            assert not again.is_error, again.content[0].text


async def test_a_worker_job_that_meets_a_held_lock_waits_without_degrading_and_then_runs(pg_url, pg_db, embedder):
    """A background job whose write times out on a lock runs again once the lock is free; a busy store is not a
    broken one, so the worker never reports degraded (that state is for full disks and I/O errors) and the job
    is never failed."""
    from loregraph.assembly.worker import Worker
    from loregraph.errors import StoreBusyError
    from loregraph.jobs.base import is_storage_failure
    from scripted import ScriptedExtractor

    assert not is_storage_failure(StoreBusyError("busy"))
    short_lock_timeout(pg_url, pg_db)
    memory = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor())
    queue = memory.store.open_queue()
    worker = Worker(memory, queue, retry_backoff_s=0.05)
    worker.storage_backoff_s = (0.05,)

    async def wait_for(predicate, what: str, timeout: float = 60) -> None:
        try:
            async with asyncio.timeout(timeout):
                while not predicate():
                    await asyncio.sleep(0.02)
        except TimeoutError:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}") from None

    try:
        with group_write_locked(pg_db, "g"):
            queue.enqueue("g", [{"group_id": "g", "content": "I use Rust.", "role_type": "user",
                                 "source": "message"}])
            assert await worker.start()
            worker.wake()
            await wait_for(lambda: worker.lock_waits >= 2, "two busy retries")
            assert worker.degraded_since is None
            assert queue.counts()["failed"] == 0
        await wait_for(lambda: queue.counts()["done"] == 1, "the job after the lock was released")
        assert worker.failed == 0 and worker.degraded_since is None
        assert [e.content for e in await memory.get_episodes("g")] == ["(user): I use Rust."]
    finally:
        await worker.stop()
        await memory.close()
