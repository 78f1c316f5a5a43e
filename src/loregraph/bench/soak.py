"""``loregraph bench soak``: a bounded soak of the REST service — mixed ingestion and search from several clients
against a real server on loopback, for ``minutes`` (and at most ``max_requests``).

Reported: requests/s of the mix, p95 latency per kind, and the server's resident memory slope in MB per 10,000
requests (a least-squares line through RSS samples taken every ``sample_s``; flat is the target). Baseline in the
same run: ``GET /healthcheck`` from the same clients, so throughput comes with a ratio.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console

from loregraph.bench.api import _load, _pct, _start_server
from loregraph.bench.synthetic import World


def rss_mb(pid: int) -> float:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y over x."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


async def run_soak_bench(*, minutes: float, clients: int, search_share: float, groups: int, max_requests: int,
                         sample_s: float, console: Console) -> dict[str, float]:
    import httpx

    work = Path(tempfile.mkdtemp(prefix="loregraph-bench-soak-"))
    key = secrets.token_urlsafe(24)
    texts = World(29).messages(2000)
    questions = ["What does the team use?", "Who works on the project?", "Which database do we run?",
                 "What did we decide about the release?", "Who prefers which editor?"]
    base = datetime(2025, 1, 1, tzinfo=UTC)
    proc, url = _start_server(work / "soak.db", work / "server.log", key)
    latencies: dict[str, list[float]] = {"ingest": [], "search": []}
    errors = 0
    done = 0
    samples: list[tuple[float, float]] = []
    rng = random.Random(7)
    try:
        await _load(url, key, clients, 5, "/healthcheck")
        floor_s, floor_lat = await _load(url, key, clients, 50, "/healthcheck")
        floor_rate = len(floor_lat) / floor_s
        deadline = time.monotonic() + minutes * 60
        headers = {"Authorization": f"Bearer {key}"}

        async def client(k: int, http: httpx.AsyncClient) -> None:
            nonlocal done, errors
            i = k
            while time.monotonic() < deadline and done < max_requests:
                group = f"soak-{rng.randrange(groups)}"
                if rng.random() < search_share:
                    kind, path = "search", "/search"
                    body: dict[str, object] = {"query": rng.choice(questions), "group_ids": [group], "max_facts": 10}
                else:
                    kind, path = "ingest", "/messages"
                    body = {"group_id": group, "messages": [{"content": texts[i % len(texts)], "role_type": "user",
                                                             "timestamp": (base + timedelta(seconds=i)).isoformat()}]}
                t = time.perf_counter()
                r = await http.post(path, json=body)
                latencies[kind].append((time.perf_counter() - t) * 1e3)
                errors += r.status_code >= 500
                done += 1
                i += clients

        async def sampler() -> None:
            while time.monotonic() < deadline and done < max_requests:
                samples.append((done, rss_mb(proc.pid)))
                await asyncio.sleep(sample_s)
            samples.append((done, rss_mb(proc.pid)))

        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as http:
            t0 = time.perf_counter()
            await asyncio.gather(sampler(), *(client(k, http) for k in range(clients)))
            elapsed = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(60)
    rate = done / elapsed
    # the first samples hold start-up growth (models, caches filling): the slope is taken over the second half
    steady = samples[len(samples) // 2:]
    mb_per_10k = slope(steady) * 10_000
    out = {"requests": done, "per_s": rate, "ingest_p95_ms": _pct(latencies["ingest"] or [0.0], 0.95),
           "search_p95_ms": _pct(latencies["search"] or [0.0], 0.95), "rss_mb_per_10k": mb_per_10k,
           "rss_start_mb": samples[0][1] if samples else 0.0, "rss_end_mb": samples[-1][1] if samples else 0.0,
           "errors_5xx": errors, "healthcheck_per_s": floor_rate}
    console.print(f"{done} requests in {elapsed:.0f} s from {clients} clients over {groups} groups "
                  f"({search_share:.0%} searches, the rest one-message ingests); 5xx: {errors}")
    console.print(f"latency p95: ingest {out['ingest_p95_ms']:.1f} ms, search {out['search_p95_ms']:.1f} ms")
    console.print(f"server RSS {out['rss_start_mb']:.0f} → {out['rss_end_mb']:.0f} MB; slope over the second half "
                  f"{mb_per_10k:+.2f} MB per 10k requests ({len(steady)} samples)")
    console.print(f"baseline (same run): GET /healthcheck {floor_rate:.0f} requests/s; mix/healthcheck ratio "
                  f"{rate / floor_rate:.3f}")
    print(f"soak requests={done} per_s={rate:.1f} ingest_p95_ms={out['ingest_p95_ms']:.1f} "
          f"search_p95_ms={out['search_p95_ms']:.1f} rss_mb_per_10k={mb_per_10k:.2f} errors_5xx={errors}")
    return out


__all__ = ["rss_mb", "run_soak_bench", "slope"]
