"""``loregraph bench writes --db <url> --compare-pg <url>``: store write latency on a Citus coordinator (or any
PostgreSQL) next to plain PostgreSQL, in the same run.

Two shapes of write, both through ``Store.apply`` (one transaction each, schema-checked), with synthetic
records and random unit vectors of the database's embedding dimension (no model runs while timing):

- *message*: what ingesting one chat message writes — an episode, two new entities and one updated, two facts
  between them, three mentions;
- *bulk*: one delta of ``bulk`` facts with an episode per five (the shape ``bench search`` builds groups with).

Printed per backend: message p50/p95 in ms and bulk facts/s; then the ratio of ``--db`` to the baseline.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from loregraph.bench.search import _pct
from loregraph.bench.synthetic import World


def _vec(rng: np.random.Generator, dim: int) -> list[float]:
    v = rng.normal(0, 1, dim).astype(np.float32)
    return (v / np.linalg.norm(v)).tolist()


def _message_deltas(group: str, n: int, dim: int, seed: int) -> list[Any]:
    """``n`` message-shaped deltas for one group (the first also creates the recurring speaker entity)."""
    from loregraph.graph.types import Entity, Episode, Fact, GraphDelta, Mention

    world = World(seed)
    rng = np.random.default_rng(seed)
    speaker = Entity(group_id=group, name=world.people[0], type="person", embedding=_vec(rng, dim))
    base = datetime(2025, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        when = base + timedelta(minutes=i)
        tool = Entity(group_id=group, name=f"{world.tools[i % len(world.tools)]} {i}", type="tool",
                      embedding=_vec(rng, dim))
        proj = Entity(group_id=group, name=f"{world.projects[i % len(world.projects)]} {i}", type="project",
                      embedding=_vec(rng, dim))
        speaker = speaker.model_copy(update={"mention_count": i + 1, "updated_at": when})
        ep = Episode(group_id=group, content=f"{speaker.name} uses {tool.name} for {proj.name}", valid_at=when,
                     embedding=_vec(rng, dim))
        facts = [Fact(group_id=group, source_id=speaker.id, target_id=tool.id, type="USES",
                      fact=f"{speaker.name} uses {tool.name}", valid_at=when, episodes=[ep.id],
                      embedding=_vec(rng, dim)),
                 Fact(group_id=group, source_id=speaker.id, target_id=proj.id, type="WORKS_ON",
                      fact=f"{speaker.name} works on {proj.name}", valid_at=when, episodes=[ep.id],
                      embedding=_vec(rng, dim))]
        ents = [speaker, tool, proj]
        out.append(GraphDelta(group_id=group, episodes=[ep], entities=ents, facts=facts,
                              mentions=[Mention(group_id=group, episode_id=ep.id, entity_id=e.id) for e in ents]))
    return out


def _bulk_delta(group: str, facts: int, dim: int, seed: int) -> Any:
    """Entities of a synthetic world, then one delta of ``facts`` facts with an episode per five."""
    from loregraph.graph.types import Entity, Episode, Fact, GraphDelta

    world = World(seed)
    rng = np.random.default_rng(seed)
    names = world.people + world.projects + world.orgs + world.tools
    ents = {n: Entity(group_id=group, name=n, type="entity", embedding=_vec(rng, dim)) for n in names}
    base = datetime(2024, 1, 1, tzinfo=UTC)
    eps: list[Episode] = []
    out: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()
    while len(out) < facts:
        s, _, rtype, o, _, text = world.fact()
        if (s, rtype, o) in seen or s == o:
            continue
        seen.add((s, rtype, o))
        when = base + timedelta(minutes=len(out))
        if len(out) % 5 == 0:
            eps.append(Episode(group_id=group, content=text, valid_at=when, embedding=_vec(rng, dim)))
        out.append(Fact(group_id=group, source_id=ents[s].id, target_id=ents[o].id, type=rtype, fact=text,
                        valid_at=when, episodes=[eps[-1].id], embedding=_vec(rng, dim)))
    return (GraphDelta(group_id=group, entities=list(ents.values())),
            GraphDelta(group_id=group, facts=out, episodes=eps))


def _measure(url: str, messages: int, bulk: int, seed: int) -> dict[str, float]:
    from loregraph.memory import Memory

    async def go() -> dict[str, float]:
        run = uuid.uuid4().hex[:6]
        small, big = f"bench-w{run}-msg", f"bench-w{run}-bulk"
        async with await Memory.open(url) as m:
            store, schema, dim = m.store, m.schema, m.embedder.dim
            try:
                deltas = _message_deltas(small, messages + 5, dim, seed)
                for d in deltas[:5]:  # warm-up: connections, statement caches
                    store.apply(d, schema)
                lat = []
                for d in deltas[5:]:
                    t = time.perf_counter()
                    store.apply(d, schema)
                    lat.append((time.perf_counter() - t) * 1e3)
                ents, facts = _bulk_delta(big, bulk, dim, seed)
                store.apply(ents, schema)
                t = time.perf_counter()
                store.apply(facts, schema)
                bulk_s = time.perf_counter() - t
            finally:
                for g in (small, big):
                    store.delete_group(g)
        return {"p50": statistics.median(lat), "p95": _pct(lat, 0.95), "bulk_fps": bulk / bulk_s}

    return asyncio.run(go())


def run_writes_bench(*, db: str, baseline: str, messages: int, bulk: int, seed: int) -> None:
    """Measure ``baseline`` then ``db``; print a line each and the ratios (db / baseline)."""
    rows: dict[str, dict[str, float]] = {}
    for label, url in (("baseline", baseline), ("db", db)):
        row = rows[label] = _measure(url, messages, bulk, seed)
        print(f"writes backend={label} messages={messages} message_p50_ms={row['p50']:.2f} "
              f"message_p95_ms={row['p95']:.2f} bulk={bulk} bulk_facts_per_s={row['bulk_fps']:.0f}", flush=True)
    b, d = rows["baseline"], rows["db"]
    print(f"writes db/baseline message_p50={d['p50'] / b['p50']:.2f}x message_p95={d['p95'] / b['p95']:.2f}x "
          f"bulk_time={b['bulk_fps'] / d['bulk_fps']:.2f}x", flush=True)


__all__ = ["run_writes_bench"]
