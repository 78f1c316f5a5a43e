"""`loregraph grpc` and `loregraph serve --grpc-port` as real processes: they listen, answer over a real channel,
and stop cleanly on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

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
    if mode == "grpc":
        assert code == 0
    else:  # uvicorn re-raises the SIGTERM it handled once the graceful shutdown is done (as `serve` alone does)
        rest = proc.stderr.read() if proc.stderr else ""
        assert code in (0, -signal.SIGTERM) and "loregraph stopped" in rest, rest[-2000:]


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
