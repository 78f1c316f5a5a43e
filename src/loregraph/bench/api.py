"""``loregraph bench api``: the REST service under concurrent clients.

A real ``loregraph serve`` process (local extractor, an API key) on a temporary database; ``clients``
concurrent HTTP clients each post their share of the messages, one message per ``POST /messages``.
Measured: acceptance rate and p95 latency of the 202s, and end-to-end processed messages/s (first post →
last job done). Baselines in the same run: ``GET /healthcheck`` with the same clients (the HTTP floor) and
the pipeline alone in process (``Memory.add_messages``), so each number comes with a ratio.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console

from loregraph.bench.synthetic import World

READY = re.compile(r"loregraph serving on (http://[^\s]+) ")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def _start_server(db: Path, log: Path, key: str, timeout: float = 180) -> tuple[subprocess.Popen[bytes], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOREGRAPH_") or k == "LOREGRAPH_CACHE_DIR"}
    env.update({"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "LOREGRAPH_LOG_LEVEL": "WARNING",
                "LOREGRAPH_API_KEYS": f'[{{"key": "{key}", "admin": true, "name": "bench"}}]'})
    out = log.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "loregraph.cli", "serve", "--db", str(db), "--port", "0"],
                            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent)
    out.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text("utf-8", "replace")
        m = READY.search(text)
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}):\n{text[-3000:]}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the server did not start in time")


def _jobs_left(db: Path) -> int:
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'running')").fetchone()[0]
    finally:
        conn.close()


async def _load(url: str, key: str, clients: int, work: list[list[dict[str, Any]]] | int,
                path: str) -> tuple[float, list[float]]:
    """Each client sends its requests one after another; returns wall time and per-request latencies."""
    import httpx

    latencies: list[float] = []
    headers = {"Authorization": f"Bearer {key}"}

    async def client(k: int, http: httpx.AsyncClient) -> None:
        jobs = work[k] if isinstance(work, list) else [None] * work
        for body in jobs:
            t = time.perf_counter()
            r = await (http.post(path, json=body) if body is not None else http.get(path))
            latencies.append((time.perf_counter() - t) * 1e3)
            if r.status_code not in (200, 202):
                raise RuntimeError(f"{path}: HTTP {r.status_code} {r.text[:200]}")

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(k, http) for k in range(clients)))
        return time.perf_counter() - t0, latencies


async def _pipeline_alone(texts: list[str], base: datetime, workdir: Path) -> float:
    from loregraph.memory import Memory, Message

    m = await Memory.open(f"sqlite:///{workdir / 'baseline.db'}")
    try:
        await m.add_messages("warmup", [Message(content=texts[0], role_type="user", timestamp=base)])
        t0 = time.perf_counter()
        for i, t in enumerate(texts):
            await m.add_messages("base", [Message(content=t, role_type="user", timestamp=base + timedelta(minutes=i))])
        return len(texts) / (time.perf_counter() - t0)
    finally:
        await m.close()


async def run_api_bench(*, messages: int, clients: int, db: str | None, console: Console) -> None:
    work = Path(tempfile.mkdtemp(prefix="loregraph-bench-api-"))
    path = Path(db.removeprefix("sqlite:///")) if db else work / "api.db"
    key = secrets.token_urlsafe(24)
    texts = World(11).messages(messages + 60)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    proc, url = _start_server(path, work / "server.log", key)
    try:
        per_client: list[list[dict[str, Any]]] = [[] for _ in range(clients)]
        for i, t in enumerate(texts[:messages]):
            per_client[i % clients].append({"group_id": f"bench-{i % clients}", "messages": [
                {"content": t, "role_type": "user", "timestamp": (base + timedelta(minutes=i)).isoformat()}]})
        # warm the connections and the route code, then the HTTP floor
        await _load(url, key, clients, 5, "/healthcheck")
        floor_s, floor_lat = await _load(url, key, clients, max(20, messages // clients), "/healthcheck")
        floor_rate = len(floor_lat) / floor_s

        t0 = time.perf_counter()
        accept_s, lat = await _load(url, key, clients, per_client, "/messages")
        while _jobs_left(path):
            await asyncio.sleep(0.02)  # polling interval
        total_s = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(60)
    accept_rate = len(lat) / accept_s
    p95 = _pct(lat, 0.95)
    processed_rate = messages / total_s
    alone = await _pipeline_alone(texts[messages:messages + 50], base, work)

    console.print(f"{messages} messages from {clients} concurrent clients, one message per request, over loopback")
    console.print(f"accept: {accept_rate:.0f} requests/s, latency p50 {_pct(lat, 0.5):.1f} ms, p95 {p95:.1f} ms, "
                  f"max {max(lat):.1f} ms (the worker ingests at the same time on the same 2 cores)")
    console.print(f"baseline (same run): GET /healthcheck {floor_rate:.0f} requests/s, p95 "
                  f"{_pct(floor_lat, 0.95):.1f} ms; accept/healthcheck ratio {accept_rate / floor_rate:.2f}")
    console.print(f"end to end: {processed_rate:.1f} messages/s processed; baseline pipeline alone in process "
                  f"{alone:.1f} messages/s; processed/pipeline ratio {processed_rate / alone:.2f}")
    print(f"api accept_per_s={accept_rate:.1f} accept_p95_ms={p95:.1f} processed_per_s={processed_rate:.1f}")
