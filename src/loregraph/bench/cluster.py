"""``loregraph bench search --db <citus-url> --compare-pg <url> --groups N``: many tenants on a Citus cluster
next to one plain PostgreSQL server, in the same run.

Each backend gets the same data: ``groups`` groups of ``group_facts`` facts and one big group of ``facts``
(synthetic facts as in ``bench search``, written through ``Memory.upsert_delta``). Measured per backend: hybrid
search p50/p95 over the small groups and over the big one (one client), then total queries/s with ``clients``
client processes, each searching random groups. Printed: the coordinator's overhead (Citus p50 / PostgreSQL
p50) and the cluster's throughput against the single node's.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import random
import statistics
import time
import uuid
from typing import Any

import numpy as np
from rich.console import Console

from loregraph.bench.search import _pct, build_group
from loregraph.bench.synthetic import World


async def _build(url: str, groups: list[str], group_facts: int, big: str, facts: int, seed: int,
                 console: Console) -> None:
    from loregraph.memory import Memory

    m = await Memory.open(url)
    m.store.build_vector_indexes = False
    try:
        t0 = time.perf_counter()
        with console.status("building") as status:
            for i, g in enumerate(groups):
                await build_group(m, World(seed + i), g, group_facts, np.random.default_rng(seed + i))
                status.update(f"small groups {i + 1}/{len(groups)}")
            await build_group(m, World(seed), big, facts, np.random.default_rng(seed), status)
            status.update("checkpoint (vector indexes, ANALYZE)")
            await m.checkpoint()
        console.print(f"built {len(groups)} x {group_facts} + {facts} facts on {m.store.label} in "
                      f"{time.perf_counter() - t0:.0f} s")
    finally:
        await m.close()


async def _latencies(url: str, groups: list[str], big: str, queries: int, seed: int) -> dict[str, list[float]]:
    from loregraph.memory import Memory

    world = World(seed)
    qs = [world.question() for _ in range(queries)]
    rng = random.Random(seed)
    out: dict[str, list[float]] = {"small": [], "big": []}
    async with await Memory.open(url) as m:
        for q in qs[:5]:
            await m.search(q, big, limit=10)
        for q in qs:
            g = rng.choice(groups)
            t = time.perf_counter()
            await m.search(q, g, limit=10)
            out["small"].append((time.perf_counter() - t) * 1e3)
        for q in qs:
            t = time.perf_counter()
            await m.search(q, big, limit=10)
            out["big"].append((time.perf_counter() - t) * 1e3)
    return out


def _client(url: str, groups: list[str], queries: int, seed: int, start: Any, result: Any) -> None:
    """One client process: open, wait for the others, run ``queries`` searches over random groups."""
    async def go() -> float:
        from loregraph.memory import Memory

        world = World(seed)
        qs = [world.question() for _ in range(queries)]
        rng = random.Random(seed)
        async with await Memory.open(url) as m:
            await m.search(qs[0], groups[0], limit=10)
            start.wait()
            t = time.perf_counter()
            for q in qs:
                await m.search(q, rng.choice(groups), limit=10)
            return time.perf_counter() - t

    result.put(asyncio.run(go()))


def _throughput(url: str, groups: list[str], clients: int, queries: int, seed: int) -> float:
    """Total searches per second of ``clients`` processes at once."""
    ctx = mp.get_context("spawn")
    start, result = ctx.Barrier(clients + 1), ctx.Queue()
    procs = [ctx.Process(target=_client, args=(url, groups, queries, seed + k, start, result))
             for k in range(clients)]
    for p in procs:
        p.start()
    start.wait()
    t = time.perf_counter()
    for _ in procs:
        result.get(timeout=3600)
    wall = time.perf_counter() - t
    for p in procs:
        p.join(60)
    return clients * queries / wall


async def _cleanup(url: str, groups: list[str]) -> None:
    from loregraph.memory import Memory

    async with await Memory.open(url) as m:
        for g in groups:
            await m.delete_group(g)


async def run_cluster_bench(*, db: str, baseline: str, groups: int, group_facts: int, facts: int, queries: int,
                            clients: int, seed: int, console: Console, keep: bool = False) -> None:
    """Build the same tenants on ``baseline`` (plain PostgreSQL) and ``db`` (a Citus coordinator); print one line
    per backend and the ratios."""
    run = uuid.uuid4().hex[:6]
    names = [f"bench-{run}-t{i}" for i in range(groups)]
    big = f"bench-{run}-big"
    rows: dict[str, dict[str, float]] = {}
    for label, url in (("postgresql", baseline), ("citus", db)):
        try:
            await _build(url, names, group_facts, big, facts, seed, console)
            lat = await _latencies(url, names, big, queries, seed)
            qps = _throughput(url, [*names, big], clients, queries, seed)
            row = {"small_p50": statistics.median(lat["small"]), "small_p95": _pct(lat["small"], 0.95),
                   "big_p50": statistics.median(lat["big"]), "big_p95": _pct(lat["big"], 0.95), "qps": qps}
            rows[label] = row
            print(f"search-cluster backend={label} groups={groups}x{group_facts}+1x{facts} "
                  f"small_p50_ms={row['small_p50']:.2f} small_p95_ms={row['small_p95']:.2f} "
                  f"big_p50_ms={row['big_p50']:.2f} big_p95_ms={row['big_p95']:.2f} "
                  f"clients={clients} total_qps={qps:.1f}", flush=True)
        finally:
            if not keep:
                await _cleanup(url, [*names, big])
    pg, ci = rows["postgresql"], rows["citus"]
    print(f"search-cluster coordinator_overhead small_p50={ci['small_p50'] / pg['small_p50']:.2f}x "
          f"big_p50={ci['big_p50'] / pg['big_p50']:.2f}x; throughput citus/postgresql with {clients} clients "
          f"{ci['qps'] / pg['qps']:.2f}x", flush=True)


__all__ = ["run_cluster_bench"]
