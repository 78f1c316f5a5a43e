"""`loregraph grpc` and `loregraph serve --grpc-port` as real processes: they listen, answer over a real channel,
and stop cleanly on SIGTERM."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from grpc_support import struct
from loregraph.api.grpc import knowledge_pb2 as pb
from loregraph.api.grpc import knowledge_pb2_grpc as pb_grpc

LG = [sys.executable, "-m", "loregraph.cli"]


def _wait_for(proc: subprocess.Popen, pattern: str, timeout: float = 120) -> re.Match:
    """Read stderr lines until one matches (the process prints where it listens)."""
    deadline = time.monotonic() + timeout
    seen = []
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return m
    proc.kill()
    pytest.fail(f"no line matching {pattern!r}: {''.join(seen)[-2000:]}")


def _call(port: int) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        health = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=30)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        res = pb_grpc.KnowledgeServiceStub(ch).InitializeUserGraph(
            pb.InitializeUserGraphRequest(user_id="u1", name="Una"), timeout=60)
        assert res.created


def _stop(proc: subprocess.Popen, mode: str) -> None:
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    rest = proc.stderr.read() if proc.stderr else ""
    assert code == 0 and "loregraph stopped" in rest and "Traceback" not in rest, rest[-2000:]


@pytest.mark.parametrize("mode", ["grpc", "serve"])
def test_grpc_process(tmp_path, mode):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    args = ["grpc", "--db", db, "--port", "0"] if mode == "grpc" else [
        "serve", "--db", db, "--port", "0", "--grpc-port", "0", "--no-worker"]
    proc = subprocess.Popen([*LG, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    try:
        m = _wait_for(proc, r"(?:gRPC knowledge interface) on [\d.]+:(\d+)")
        if mode == "serve":
            _wait_for(proc, r"loregraph serving on http://")  # REST is up beside it
        _call(int(m.group(1)))
    finally:
        if proc.poll() is None:
            _stop(proc, mode)


@pytest.mark.parametrize("mode", ["grpc", "serve"])
def test_sigterm_lets_the_call_in_flight_finish_then_exits_0(tmp_path, mode):
    """SIGTERM while a call is in flight: the server says it is stopping, the call still completes (its write
    commits), both servers stop and the process exits 0 without a traceback. The call is held in flight by the
    test holding the database's write lock until the process has said it is stopping (state, not time)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LOREGRAPH_LOG_LEVEL": "DEBUG"}
    path = tmp_path / "cli.db"
    args = ["grpc", "--db", str(path), "--port", "0"] if mode == "grpc" else [
        "serve", "--db", str(path), "--port", "0", "--grpc-port", "0", "--no-worker"]
    proc = subprocess.Popen([*LG, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    lock = None
    try:
        port = int(_wait_for(proc, r"gRPC knowledge interface on [\d.]+:(\d+)").group(1))
        if mode == "serve":
            _wait_for(proc, r"loregraph serving on http://")
        lock = sqlite3.connect(path, isolation_level=None, timeout=30)
        lock.execute("BEGIN IMMEDIATE")  # the server's write waits for this lock (its busy timeout)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            person = str(uuid.uuid4())
            call = pb_grpc.KnowledgeServiceStub(ch).UpsertGraphDelta.future(pb.UpsertGraphDeltaRequest(entities=[
                pb.Entity(id=person, type_id="node.person", properties=struct({"name": "Ada"}), user_id="u1",
                          visibility=pb.PRIVATE)]), timeout=120)
            _wait_for(proc, r"grpc UpsertGraphDelta started")
            proc.send_signal(signal.SIGTERM)
            _wait_for(proc, r"stopping the gRPC knowledge interface")
            assert not call.done()
            lock.execute("ROLLBACK")
            assert call.result(timeout=120).entities_upserted == 1
        code = proc.wait(120)
        rest = proc.stderr.read() if proc.stderr else ""
        assert code == 0 and "loregraph stopped" in rest and "Traceback" not in rest, rest[-3000:]
        with contextlib.closing(sqlite3.connect(path)) as c:
            assert c.execute("SELECT COUNT(*) FROM entities WHERE id = ?", (person,)).fetchone()[0] == 1
    finally:
        if lock is not None:
            lock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
