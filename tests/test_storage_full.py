"""A full disk (issue 19 item 4): the API answers 503 with Retry-After instead of 500, /health says degraded, and
jobs that meet a storage failure wait and run again by themselves — none is failed for good, none runs twice.

The database lives on a small tmpfs mounted for the test (needs root, as CI has; SQLite: a PostgreSQL server's
disk is its own)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from rest_support import Server, job_counts, rows, wait_until


def fill(disk, leave: int = 0) -> os.PathLike:
    """Take every free byte of ``disk`` but ``leave``; returns the filler file (delete it to free the space)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def truncate_wal(db) -> None:
    """Empty the write-ahead log, so the next write needs new disk space (the log keeps its size otherwise). A
    checkpoint that a reader of the server's holds back reports busy instead of failing: try again until it is done."""
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        for _ in range(100):
            busy, log_frames, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy and log_frames in (0, -1):
                return
            time.sleep(0.1)
    raise AssertionError("the write-ahead log could not be truncated: a reader kept it busy for 10 s")


def message(text: str) -> dict:
    return {"group_id": "g", "messages": [{"content": text, "role_type": "user"}]}


# ~800 KB in one request: more than the write-ahead log has room for, so the write needs new disk space
BIG = {"group_id": "g", "messages": [{"content": f"Note {i}: " + "x" * 30000, "role_type": "user"}
                                     for i in range(26)]}


def test_a_full_disk_is_503_and_degraded_then_recovers(tmp_path, small_disk):
    db = small_disk / "memory.db"
    srv = Server(tmp_path / "srv", db).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            assert c.post("/messages", json=message("I use Rust for the parser.")).status_code == 202
            wait_until(lambda: job_counts(db, "g")["done"] == 1, 60, what="the first job")
            truncate_wal(db)
            filler = fill(small_disk)
            full = c.post("/messages", json=BIG)
            assert full.status_code == 503, full.text
            assert int(full.headers["Retry-After"]) > 0 and "Traceback" not in full.text
            health = c.get("/health")
            assert health.status_code == 503 and health.json()["status"] == "degraded"
            os.remove(filler)
            assert c.post("/messages", json=message("I use Kotlin for the app.")).status_code == 202
            wait_until(lambda: job_counts(db, "g")["done"] == 2, 60, what="the job after the disk was freed")
            assert c.get("/health").json()["status"] == "ok"
    finally:
        srv.stop()


def test_jobs_meeting_a_full_disk_wait_and_run_once_when_space_returns(tmp_path, small_disk):
    db = small_disk / "memory.db"
    api = Server(tmp_path / "api", db, args=("--no-worker",)).start()
    worker = None
    try:
        with httpx.Client(base_url=api.url, timeout=30) as c:
            for text in ("I use Rust.", "I use Kotlin.", "I use Elixir."):
                assert c.post("/messages", json=message(text)).status_code == 202
        truncate_wal(db)
        filler = fill(small_disk, leave=64 * 1024)  # room to claim a job, not to write its graph
        worker = Server(tmp_path / "worker", db, command="worker").start()
        worker.wait_log(r"the store cannot be written", timeout=60)
        assert job_counts(db, "g")["failed"] == 0
        os.remove(filler)
        wait_until(lambda: job_counts(db, "g")["done"] == 3, 120, what="the jobs after the disk was freed")
        assert job_counts(db, "g")["failed"] == 0
        contents = [r[0] for r in rows(db, "SELECT content FROM episodes WHERE group_id = 'g' ORDER BY seq")]
        assert contents == ["(user): I use Rust.", "(user): I use Kotlin.", "(user): I use Elixir."]
    finally:
        if worker is not None:
            worker.stop()
        api.stop()


@pytest.fixture
def small_pg_database(tmp_path, pg_url):
    """A database on PostgreSQL whose tables live on a small tmpfs (a tablespace): its disk can be filled."""
    if os.geteuid() != 0 or os.environ.get("LOREGRAPH_TEST_PG_URL"):
        pytest.skip("needs root and the local test server (its tablespace is a directory on this machine)")
    import pwd
    import uuid


    pg = pwd.getpwnam("postgres")
    mount = Path(f"/tmp/lg-tiny-{uuid.uuid4().hex[:8]}")
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=24m,uid={pg.pw_uid},gid={pg.pw_gid},mode=0700", "tmpfs",
                    str(mount)], check=True)
    name = "lg_full_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE TABLESPACE {name} LOCATION '{mount}'")
        c.execute(f"CREATE DATABASE {name} TABLESPACE {name}")
    try:
        yield pg_url.rsplit("/", 1)[0] + "/" + name, mount
    finally:
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            c.execute(f"DROP TABLESPACE IF EXISTS {name}")
        subprocess.run(["umount", "-l", str(mount)], check=False)
        with contextlib.suppress(OSError):
            mount.rmdir()


def test_a_full_disk_on_postgresql_is_503_then_recovers(tmp_path, small_pg_database):
    url, disk = small_pg_database
    srv = Server(tmp_path / "srv", url).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=60) as c:
            assert c.post("/messages", json=message("I use Rust for the parser.")).status_code == 202
            filler = fill(disk)
            full = c.post("/messages", json=BIG)
            assert full.status_code == 503, full.text
            assert int(full.headers["Retry-After"]) > 0
            assert c.get("/health").json()["status"] == "degraded"
            os.remove(filler)
            assert c.post("/messages", json=message("I use Kotlin for the app.")).status_code == 202
            wait_until(lambda: c.get("/groups/g/queue").json()["done"] >= 2, 120, what="the jobs after the disk "
                                                                                      "was freed")
            assert c.get("/groups/g/queue").json()["failed"] == 0
            assert c.get("/health").json()["status"] == "ok"
    finally:
        srv.stop()


def test_jobs_meeting_a_full_disk_on_postgresql_wait_and_run_once(tmp_path, small_pg_database):
    url, disk = small_pg_database
    api = Server(tmp_path / "api", url, args=("--no-worker",)).start()
    worker = None
    try:
        with httpx.Client(base_url=api.url, timeout=60) as c:
            for text in ("I use Rust.", "I use Kotlin.", "I use Elixir."):
                assert c.post("/messages", json=message(text)).status_code == 202
            # A new server session writes the database's relation-cache file if the migrations' catalog changes
            # removed it; on a full disk that write fails and the worker could not connect at all. One session
            # now, so the worker below meets the full disk where this test means it to: writing its jobs.
            psycopg.connect(url).close()
            filler = fill(disk)
            worker = Server(tmp_path / "worker", url, command="worker").start()
            worker.wait_log(r"the store cannot be written|cannot claim a job", timeout=120)
            assert c.get("/groups/g/queue").json()["failed"] == 0
            os.remove(filler)
            wait_until(lambda: c.get("/groups/g/queue").json()["done"] == 3, 180, what="the jobs after the disk "
                                                                                     "was freed")
            assert c.get("/groups/g/queue").json()["failed"] == 0
            contents = sorted(e["content"] for e in c.get("/episodes/g", params={"last_n": 10}).json())
            assert contents == ["(user): I use Elixir.", "(user): I use Kotlin.", "(user): I use Rust."]
    finally:
        if worker is not None:
            worker.stop()
        api.stop()
