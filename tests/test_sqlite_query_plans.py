"""SQLite query plans of the search's hot reads (hybrid search at 100k facts, issue 16): each statement the store
runs is traced and explained. A plan that reads a whole group instead of the few rows asked for costs
milliseconds per search at that size, and no result changes when it does, so only the plan shows it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from loregraph.graph.types import Entity, Fact, GraphDelta
from loregraph.schema import Schema
from loregraph.store import TimeFilter
from loregraph.store.sqlite import SQLiteStore

DIM = 8
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(DIM).astype(np.float32)
    return (v / np.linalg.norm(v)).tolist()


@pytest.fixture
def store(tmp_path):
    """A group of 40 entities and 1,200 facts (a hub entity in many), plus a small second group; analysed."""
    s = SQLiteStore(tmp_path / "plans.db")
    s.ensure_embedder("test-model", DIM)
    rng = np.random.default_rng(3)
    ents = [Entity(group_id="big", name=f"e{i}", type="person", embedding=unit(rng)) for i in range(40)]
    facts, seen = [], set()
    while len(facts) < 1200:
        a, b = (0 if rng.random() < 0.3 else int(rng.integers(40))), int(rng.integers(40))
        rtype = str(rng.choice(["KNOWS", "WORKS_WITH", "RELATED_TO"]))
        if a == b or (a, b, rtype) in seen:
            continue
        seen.add((a, b, rtype))
        facts.append(Fact(group_id="big", source_id=ents[a].id, target_id=ents[b].id, type=rtype,
                          fact=f"e{a} r e{b}", valid_at=T0 + timedelta(minutes=len(facts)), embedding=unit(rng)))
    s.apply(GraphDelta(group_id="big", entities=ents), Schema.default())
    for i in range(0, len(facts), 400):
        s.apply(GraphDelta(group_id="big", facts=facts[i:i + 400]), Schema.default())
    other = [Entity(group_id="small", name=f"o{i}", type="entity", embedding=unit(rng)) for i in range(3)]
    s.apply(GraphDelta(group_id="small", entities=other), Schema.default())
    s.conn.execute("ANALYZE")
    s.hub = ents[0].id  # type: ignore[attr-defined]
    yield s
    s.close()


def plans(s: SQLiteStore, call: Callable[[], object], marker: str) -> list[str]:
    """The query plans (detail lines joined) of the statements containing ``marker`` that ``call`` runs."""
    seen: list[str] = []
    s.conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        s.conn.set_trace_callback(None)
    stmts = [q for q in seen if marker in q and q.lstrip().upper().startswith("SELECT")]
    assert stmts, f"no statement with {marker!r} ran"
    return [" | ".join(r[-1] for r in s.conn.execute("EXPLAIN QUERY PLAN " + q)) for q in stmts]


def test_fact_ids_by_seq_use_the_rowid_even_when_an_index_has_no_statistics(store):
    """A database analysed before a migration added an index (facts_group_created, 0009) has no statistics for it:
    the planner then took that index for the fact vector stage's id lookup (`seq IN (…) AND group_id = ?`) and read
    the whole group (11.7 ms per search at 100k facts instead of 0.5)."""
    stats = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE 'sqlite_stat%'")}
    for table in {"sqlite_stat1", "sqlite_stat4"} & stats:  # stat4 only where SQLite was built with it
        store.conn.execute(f"DELETE FROM {table} WHERE idx = 'facts_group_created'")
    store.conn.execute("ANALYZE sqlite_schema")  # reload the statistics
    store.EXACT_KNN_MAX = 50  # the in-memory path, whose ids are read by seq
    query = np.asarray(unit(np.random.default_rng(9)), dtype=np.float32)
    for plan in plans(store, lambda: store.vector("fact", ["big"], query, 50, TimeFilter()), "seq IN"):
        assert "INTEGER PRIMARY KEY" in plan and "facts_group_created" not in plan, plan


def test_graph_expansion_reads_an_entitys_facts_in_seq_order(store):
    """fact_edges keeps the newest facts touching the seeds: the (group, end, seq) indexes of migration 0010."""
    [plan] = plans(store, lambda: store.fact_edges("big", [store.hub], TimeFilter(), 50), "UNION ALL")
    assert "facts_group_source_seq" in plan and "facts_group_target_seq" in plan, plan
    assert len(store.fact_edges("big", [store.hub], TimeFilter(), 50)) == 50
    assert store.fact_edges("small", [store.hub], TimeFilter(), 50) == []


def test_full_text_reads_only_the_query_terms_postings(store):
    """BM25 with the group's statistics (migration 0011) walks the query terms' postings by their key, then reads
    the few best facts by rowid: never a scan of the postings or of the group's facts."""
    [plan] = plans(store, lambda: store.fulltext("fact", ["big"], "e0 e5", 10, TimeFilter()), "q(term")
    assert "SEARCH p USING PRIMARY KEY (term=?)" in plan and "INTEGER PRIMARY KEY" in plan, plan
    assert "SCAN p" not in plan and "SCAN x" not in plan, plan
    assert len(store.fulltext("fact", ["big"], "e0 e5", 10, TimeFilter())) == 10
