"""``loregraph bench search``: hybrid search latency at N facts in one group, against a brute-force
exact cosine scan over every fact vector held in RAM (measured in the same run).

Fact vectors are composed from real embeddings of their parts (subject, relation wording, object),
normalised: realistic neighbourhoods at a fraction of the cost of embedding 100k sentences. Queries are
embedded by the real model, inside the timed search.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from loregraph.bench.synthetic import TEMPLATES, World


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def _backend(url: str) -> str:
    from loregraph.store import url_scheme

    return "postgresql" if url_scheme(url) in ("postgresql", "postgres") else "sqlite"


def _temp_sqlite(reuse: str | None = None) -> str:
    """A new temporary SQLite file; with ``reuse`` (a name), the same file in the system's temporary directory on
    every run."""
    if reuse:
        return f"sqlite:///{Path(tempfile.gettempdir()) / f'loregraph-{reuse}.db'}"
    return f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-bench-')) / 'bench.db'}"


def _reuse_name(facts: int, seed: int) -> str:
    return f"bench-reuse-{facts}-{seed}"


async def run_search_bench(*, facts: int, queries: int, db: str | None, seed: int, console: Console,
                           compare_sqlite: bool = False, reuse: bool = False) -> None:
    """One line per backend: ``db`` (default: a new temporary SQLite file), then, with ``compare_sqlite`` and a
    PostgreSQL ``db``, a new temporary SQLite file with the same seed (same facts, same queries) in the same run.
    With ``reuse``, the group built is kept (in ``db``, and in an SQLite file of the temporary directory) and a
    later run with the same ``facts`` and ``seed`` searches it without building it again."""
    name = _reuse_name(facts, seed) if reuse else None
    urls = [db or _temp_sqlite(name)]
    if compare_sqlite and _backend(urls[0]) != "sqlite":
        urls.append(_temp_sqlite(name))
    runs = [await _bench_one(url, facts=facts, queries=queries, seed=seed, console=console, own_db=url != db,
                             reuse=reuse) for url in urls]
    if len(runs) == 2:
        print(compare_line(*runs), flush=True)


def compare_line(db: tuple[float, list[list[tuple[str, str]]]], sqlite: tuple[float, list[list[tuple[str, str]]]]
                 ) -> str:
    """``search-compare``: the share of queries whose top-10 facts are the same on both backends (as a set, and
    in the same order), the mean share of one top-10 found in the other, and the ratio of the p50 latencies.
    Facts are named by their text and time (ids differ between the two builds of the same facts)."""
    (p50, tops), (sqlite_p50, sqlite_tops) = db, sqlite
    pairs = list(zip(tops, sqlite_tops, strict=True))
    same = sum(set(a) == set(b) for a, b in pairs) / len(pairs)
    ordered = sum(a == b for a, b in pairs) / len(pairs)
    overlap = statistics.mean(len(set(a) & set(b)) / max(len(a), len(b), 1) for a, b in pairs)
    return (f"search-compare top10_overlap={same:.3f} top10_same_order={ordered:.3f} mean_top10_shared={overlap:.3f} "
            f"pg_over_sqlite_p50={p50 / sqlite_p50:.2f} queries={len(pairs)}")


async def _bench_one(url: str, *, facts: int, queries: int, seed: int, console: Console,
                     own_db: bool, reuse: bool = False) -> tuple[float, list[list[tuple[str, str]]]]:
    """The search p50 (ms) and each query's top facts (text, valid time)."""
    import uuid

    from loregraph.memory import Memory

    backend = _backend(url)
    m = await Memory.open(url)
    m.store.build_vector_indexes = False  # a bulk import: checkpoint() builds them once
    world = World(seed)
    # a database given by the caller may hold other groups (or an earlier run's): build a group of our own and
    # delete it at the end
    group = _reuse_name(facts, seed) if reuse else "bench" if own_db else f"bench-{uuid.uuid4().hex[:8]}"
    try:
        stored = (await m.count(group))["facts"] if reuse else 0
        if reuse and stored == facts:  # built by an earlier run: only its vectors and ids are recomputed
            console.print(f"({backend}) reusing the {facts} facts of group {group}")
            matrix, fact_ids, n_ents = await build_group(m, world, group, facts, np.random.default_rng(seed),
                                                         write=False)
        else:
            if stored:  # an earlier run stopped half way
                await m.delete_group(group)
            console.print(f"({backend}) building {facts} facts in group {group}")
            t0 = time.perf_counter()
            with console.status(f"writing {facts} facts") as status:
                matrix, fact_ids, n_ents = await build_group(m, world, group, facts, np.random.default_rng(seed),
                                                             status)
            t_index = time.perf_counter()
            await m.checkpoint()
            console.print(f"checkpoint (PostgreSQL: vector indexes, ANALYZE) took "
                          f"{time.perf_counter() - t_index:.1f} s")
            console.print(f"built {facts} facts, {n_ents} entities in {time.perf_counter() - t0:.1f} s")

        qs = [world.question() for _ in range(queries)]
        for q in qs[:5]:  # warm caches and the model
            await m.search(q, group, limit=10)
        # each loop runs on its own so neither evicts the other's working set from the CPU caches
        lat, base_lat = [], []
        tops: list[list[tuple[str, str]]] = []
        for q in qs:
            t = time.perf_counter()
            found = await m.search(q, group, limit=10)
            lat.append((time.perf_counter() - t) * 1e3)
            tops.append([(f.fact.fact, str(f.fact.valid_at)) for f in found.facts])
        for q in qs:
            # baseline: embed + exact scan of every fact vector, then load the top facts
            t = time.perf_counter()
            qv = m.embedder.embed_one(q + " ")  # bypass the query cache like the search's first call
            top = np.argpartition(-(matrix @ qv), 10)[:10]
            await m.get_facts(group, [fact_ids[i] for i in top])
            base_lat.append((time.perf_counter() - t) * 1e3)
        p50, p95 = statistics.median(lat), _pct(lat, 0.95)
        b50 = statistics.median(base_lat)
        recall = await vector_recall(m, group, qs, matrix, fact_ids, k=20)
        console.print(f"({backend}) hybrid search (BM25 + vector + graph over facts, entities, episodes): "
                      f"p50 {p50:.2f} ms, p95 {p95:.2f} ms over {queries} queries")
        console.print(f"({backend}) baseline (embed + brute-force cosine over {facts} vectors in RAM, vector "
                      f"only): p50 {b50:.2f} ms; ratio search/baseline {p50 / b50:.2f}")
        console.print(f"({backend}) vector stage over facts: recall@20 {recall:.3f} against the exact scan")
        held = getattr(m.store, "vector_memory", None)  # SQLite: large groups' vectors held in memory
        memory = ""
        if held is not None:
            parts = held()
            console.print(f"({backend}) vectors held in memory: " + (", ".join(
                f"{kind} {n / 1e6:.1f} MB" for kind, n in sorted(parts.items())) or "none"))
            memory = f" vector_memory_mb={sum(parts.values()) / 1e6:.1f}"
        print(f"search backend={backend} p50_ms={p50:.2f} p95_ms={p95:.2f} baseline_p50_ms={b50:.2f} "
              f"facts={facts} vector_recall_at_20={recall:.3f}{memory}", flush=True)
        return p50, tops
    finally:
        if not own_db and not reuse:
            try:
                await m.delete_group(group)
            except Exception as exc:  # reported, never hides the measurement
                console.print(f"({backend}) could not delete the bench group {group}: {exc}")
        await m.close()


async def vector_recall(m: Any, group: str, queries: list[str], matrix: np.ndarray, fact_ids: list[str],
                        k: int) -> float:
    """Mean recall@k of the store's fact vector stage (the one hybrid search runs) against an exact cosine scan of
    ``matrix`` (one row per id of ``fact_ids``)."""
    found = 0
    for q in dict.fromkeys(queries):
        qv = m.embedder.embed_one(q)
        exact = {fact_ids[i] for i in np.argpartition(-(matrix @ qv), k)[:k]}
        hits = await m._read(m.store.vector, "fact", [group], qv, k)
        found += len(exact & {h.id for h in hits})
    return found / (k * len(dict.fromkeys(queries)))


async def build_group(m: Any, world: World, group: str, facts: int, rng: np.random.Generator,
                      status: Any = None, write: bool = True) -> tuple[np.ndarray, list[str], int]:
    """Write ``facts`` synthetic facts (and an episode per five) into ``group`` through ``Memory.upsert_delta``;
    returns the fact vectors, their ids and the number of entities. Fact ids follow from their position, so
    ``write=False`` recomputes what an earlier build with the same ``world`` and ``rng`` wrote."""
    import uuid

    from loregraph.graph.types import Entity, Episode, Fact, GraphDelta

    emb = m.embedder
    names = world.people + world.projects + world.orgs + world.tools
    types = (["person"] * len(world.people) + ["project"] * len(world.projects) +
             ["organization"] * len(world.orgs) + ["tool"] * len(world.tools))
    name_vecs = emb.embed(names)
    rel_vecs = {rt: emb.embed_one(t.format(s="", o="", p="")) for rt, t in TEMPLATES}
    ents = [Entity(group_id=group, name=n, type=t, embedding=v.tolist())
            for n, t, v in zip(names, types, name_vecs, strict=True)]
    by_name = {e.name: e for e in ents}
    vec_of = dict(zip(names, name_vecs, strict=True))
    if write:
        await m.upsert_delta(GraphDelta(group_id=group, entities=ents))
    base = datetime(2024, 1, 1, tzinfo=UTC)
    batch: list[Fact] = []
    eps: list[Episode] = []
    done = 0
    matrix = np.zeros((facts, emb.dim), dtype=np.float32)
    fact_ids: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    while done < facts:
        s, _, rtype, o, _, text = world.fact()
        if (s, rtype, o) in seen or s == o:
            continue  # the schema allows one current fact per (source, type, target)
        seen.add((s, rtype, o))
        v = vec_of[s] + vec_of[o] + rel_vecs[rtype] + rng.normal(0, 0.05, emb.dim).astype(np.float32)
        v /= np.linalg.norm(v)
        matrix[done] = v
        when = base + timedelta(minutes=done)
        if done % 5 == 0:
            eps.append(Episode(group_id=group, content=text, valid_at=when, embedding=v.tolist()))
        batch.append(Fact(id=str(uuid.uuid5(uuid.NAMESPACE_OID, f"loregraph-bench-fact-{done}")), group_id=group,
                          source_id=by_name[s].id, target_id=by_name[o].id, type=rtype, fact=text, valid_at=when,
                          episodes=[eps[-1].id], embedding=v.tolist() if write else None))
        fact_ids.append(batch[-1].id)
        done += 1
        if len(batch) >= 2000 or done == facts:
            if write:
                await m.upsert_delta(GraphDelta(group_id=group, facts=batch, episodes=eps))
            batch, eps = [], []
            if status is not None:
                status.update(f"writing facts of {group}: {done}/{facts}")
    return matrix, fact_ids, len(ents)
