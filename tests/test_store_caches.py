"""Per-process caches stay bounded however many groups and terms a long-running process searches (issue 19
item 7), on both backends: SQLite keeps term statistics and per-group counts (now LRU-bounded); PostgreSQL reads
them from the database and must keep no such state at all."""

from __future__ import annotations

import random

import numpy as np
import pytest

from loregraph.graph.types import Entity, GraphDelta
from loregraph.store import open_store
from loregraph.store.caches import LRU, TermStats
from loregraph.store.sqlite import SQLiteStore
from test_store import DIM, SCHEMA, vec


def _state_size(store: object) -> int:
    """Entries held in the store's container attributes (nested dicts counted through)."""
    def size(x: object) -> int:
        if isinstance(x, (LRU, TermStats)):
            return len(x)
        if isinstance(x, dict):
            return len(x) + sum(size(v) for v in x.values())
        if isinstance(x, (set, list, tuple)):
            return len(x)
        return 0

    return sum(size(v) for k, v in vars(store).items() if k != "_vector_cache")  # GroupVectors: 8 entries max


@pytest.fixture(params=["sqlite", "postgres"])
def url(request, tmp_path):
    return f"sqlite:///{tmp_path / 'c.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_db")


def test_searching_many_groups_and_terms_keeps_the_caches_bounded(url, monkeypatch):
    monkeypatch.setattr(SQLiteStore, "TERM_STATS_MAX", 300, raising=False)
    monkeypatch.setattr(SQLiteStore, "COUNT_CACHE_MAX", 40, raising=False)
    monkeypatch.setattr(SQLiteStore, "QUERY_TERMS_CACHE", 10, raising=False)
    s = open_store(url)
    try:
        s.ensure_embedder("test-model", DIM)
        rng = random.Random(3)
        vocab = [f"w{i}" for i in range(5000)]
        for g in range(5):
            s.apply(GraphDelta(group_id=f"g{g}", entities=[
                Entity(group_id=f"g{g}", name=" ".join(rng.sample(vocab[:300], 3)), type="entity", embedding=vec(i))
                for i in range(20)]), SCHEMA)
        q = np.asarray(vec(1), dtype=np.float32)
        for i in range(400):
            gid = f"g{i % 5}" if i % 2 else f"tenant{i}"
            for kind in ("entity", "fact", "episode"):
                s.fulltext(kind, [gid], " ".join(rng.sample(vocab, 4)), 10)
            s.vector("entity", [gid], q, 5)
        # 400 searches x 3 kinds x 4 terms and 200 never-seen groups: unbounded, these held ~5,000 entries
        assert _state_size(s) <= 300 + 2 * 40 + 10 + 20
        # the bounded caches still serve: a write is seen by the next search
        new = Entity(group_id="g0", name="freshword thing", type="entity")
        s.apply(GraphDelta(group_id="g0", entities=[new]), SCHEMA)
        assert s.fulltext("entity", ["g0"], "freshword thing", 5)[0].id == new.id
    finally:
        s.close()


def test_lru_and_term_stats_evict_the_least_recently_used():
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # a is now the most recent
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c"), len(lru)) == (1, None, 3, 2)
    stats = TermStats(4)
    for t in ("t1", "t2"):
        stats.put(("facts", "ga"), t, 1)
    for t in ("t3", "t4"):
        stats.put(("facts", "gb"), t, 2)
    assert stats.get(("facts", "ga"), "t1") == 1  # group ga used last
    stats.put(("facts", "gc"), "t5", 3)  # over the bound: gb (least recent) goes as a whole
    assert stats.get(("facts", "gb"), "t3") is None and len(stats) == 3
    stats.forget(("facts", "ga"))
    assert stats.get(("facts", "ga"), "t1") is None and len(stats) == 1
    for i in range(10):  # one group alone: its oldest terms go
        stats.put(("facts", "gc"), f"x{i}", i)
    assert len(stats) == 4 and stats.get(("facts", "gc"), "x9") == 9 and stats.get(("facts", "gc"), "x0") is None
