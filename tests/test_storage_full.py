"""A full disk (issue 19 item 4): the API answers 503 with Retry-After instead of 500, /health says degraded, and
jobs that meet a storage failure wait and run again by themselves — none is failed for good, none runs twice.

The database lives on a small tmpfs mounted for the test (needs root, as CI has; SQLite: a PostgreSQL server's
disk is its own)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess

import httpx
import pytest

from rest_support import Server, job_counts, rows, wait_until


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


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
    """Empty the write-ahead log, so the next write needs new disk space (the log keeps its size otherwise)."""
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


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
