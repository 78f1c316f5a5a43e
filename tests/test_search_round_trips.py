"""PostgreSQL search reads in fewer statements (issue 16 part 2): each read gives what the shared SQL gives, in one
statement instead of several. Statements are counted on the store's own connections; nothing is timed.

Real servers (the ``pg_db`` and ``citus_db`` fixtures), a fresh database per test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import psycopg
import pytest

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from loregraph.store.base import TimeFilter, second_hop_starts
from loregraph.store.postgres import PostgresStore
from loregraph.store.sql import SQLStore
from test_store import DIM, SCHEMA, T0, vec


@contextmanager
def counted() -> Iterator[list[str]]:
    """The statements run on any psycopg cursor meanwhile."""
    seen: list[str] = []
    run = psycopg.Cursor.execute

    def execute(self, query, params=None, **kw):  # type: ignore[no-untyped-def]
        seen.append(str(query))
        return run(self, query, params, **kw)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Cursor.execute = run  # type: ignore[method-assign]


@pytest.fixture(params=["pg_db", "citus_db"])
def store(request):
    s = PostgresStore(request.getfixturevalue(request.param), pool_size=2)
    s.ensure_embedder("test-model", DIM)
    yield s
    s.close()


def _web(group: str) -> GraphDelta:
    """A hub with spokes, spokes linked in a ring (some of those ended), and a far rim behind each spoke: two hops
    from the hub reach the ring and the rim."""
    hub = Entity(group_id=group, name="hub", type="person", embedding=vec(1))
    spokes = [Entity(group_id=group, name=f"spoke {i}", type="tool", embedding=vec(2 + i)) for i in range(12)]
    rim = [Entity(group_id=group, name=f"rim {i}", type="tool", embedding=vec(40 + i)) for i in range(12)]
    facts = [Fact(group_id=group, source_id=hub.id if i % 3 else s.id, target_id=s.id if i % 3 else hub.id,
                  type="USES", fact=f"hub uses spoke {i}", valid_at=T0 + timedelta(minutes=i), embedding=vec(100 + i))
             for i, s in enumerate(spokes)]
    facts += [Fact(group_id=group, source_id=spokes[i].id, target_id=spokes[(i + 1) % 12].id, type="RELATED_TO",
                   fact=f"spoke {i} beside spoke {i + 1}", valid_at=T0, embedding=vec(200 + i),
                   **({"invalid_at": T0} if i % 4 == 0 else {})) for i in range(12)]
    facts += [Fact(group_id=group, source_id=rim[i].id, target_id=spokes[i].id, type="DEPENDS_ON",
                   fact=f"rim {i} feeds spoke {i}", valid_at=T0, embedding=vec(300 + i)) for i in range(12)]
    return GraphDelta(group_id=group, entities=[hub, *spokes, *rim], facts=facts)


def test_graph_expansion_is_one_statement_with_the_shared_sqls_answer(store):
    """Both hops of the graph expansion in one statement: the same edges, in the same order, as the two reads of
    the shared SQL (hop 2 from the ``second_hop_starts`` of hop 1), for seeds, time filters, limits and widths."""
    web = _web("g")
    store.apply(web, SCHEMA)
    store.apply(_web("other"), SCHEMA)
    hub, spokes = web.entities[0], web.entities[1:13]
    cases = 0
    for seeds in ([hub.id], [spokes[3].id, hub.id], [spokes[0].id, spokes[5].id, spokes[9].id], ["missing"]):
        for tf in (TimeFilter(), TimeFilter(include_expired=True), TimeFilter(as_of=T0)):
            for limit in (1, 4, 50):
                for width in (0, 1, 5):
                    with counted() as seen:
                        mine = store.fact_edges_two_hops("g", seeds, tf, limit, width)
                    assert len(seen) == 1
                    assert mine == SQLStore.fact_edges_two_hops(store, "g", seeds, tf, limit, width), (seeds, limit)
                    cases += bool(mine[1])
    assert cases > 10  # the second hop was reached
    first, second = store.fact_edges_two_hops("g", [hub.id], TimeFilter(), 50, 5)
    assert len(first) == 12 and len(second) > 0
    assert set(second_hop_starts(first, [hub.id], 5)) <= {s.id for s in spokes}


def test_adjacent_episodes_is_one_statement_with_the_shared_sqls_answer(store):
    """The turns around an episode in one statement: what the shared SQL's three reads give, in a conversation
    and without one, at its ends, and for an episode of another group (nothing)."""
    eps = [Episode(group_id="g", content=f"turn {i}", valid_at=T0 + timedelta(minutes=i),
                   conversation_id="c1" if i < 6 else None, embedding=vec(500 + i)) for i in range(10)]
    other = Episode(group_id="other", content="elsewhere", valid_at=T0, conversation_id="c1", embedding=vec(600))
    store.apply(GraphDelta(group_id="g", episodes=eps), SCHEMA)
    store.apply(GraphDelta(group_id="other", episodes=[other]), SCHEMA)
    for ep in [*eps, other]:
        for n in (0, 1, 2, 5):
            with counted() as seen:
                mine = store.adjacent_episodes("g", ep.id, n)
            assert len(seen) <= 1
            assert [e.id for e in mine] == [e.id for e in SQLStore.adjacent_episodes(store, "g", ep.id, n)]
    assert [e.id for e in store.adjacent_episodes("g", eps[2].id, 2)] == [e.id for e in eps[0:2] + eps[3:5]]
    assert [e.id for e in store.adjacent_episodes("g", eps[7].id, 1)] == [eps[6].id, eps[8].id]
    assert store.adjacent_episodes("g", other.id, 2) == []


def test_vectors_held_in_memory_are_searched_in_one_statement(pg_db):
    """A fact or entity search of a group whose vectors this process holds reads the group's tokens and the best
    candidates' ids in one statement; what another process writes meanwhile is still found (the tokens moved: the
    search reads again), and the hits are those of a store that loads the vectors afresh."""
    import numpy as np

    from test_pg_vectors_in_memory import _fill
    from test_store import small_graph

    def store() -> PostgresStore:
        s = PostgresStore(pg_db, pool_size=2)
        s.ensure_embedder("test-model", DIM)
        s.VECTORS_IN_MEMORY_MIN_ROWS = 10
        return s

    reader, writer = store(), store()
    try:
        _fill(writer)
        q = np.asarray(vec(999_999))
        for kind in ("fact", "entity"):
            reader.vector(kind, ["big"], q, 5)  # loads the group's vectors
            with counted() as seen:
                held = reader.vector(kind, ["big"], q, 5, TimeFilter())
            assert len(seen) == 1 and len(held) == 5
            fresh = store()
            try:
                assert held == fresh.vector(kind, ["big"], q, 5, TimeFilter())
                writer.apply(small_graph("big", f"late {kind}", seed=4242), SCHEMA)
                with counted() as seen:
                    after = reader.vector(kind, ["big"], q, 5, TimeFilter())
                assert len(seen) > 1 and after == fresh.vector(kind, ["big"], q, 5, TimeFilter())
            finally:
                fresh.close()
    finally:
        reader.close()
        writer.close()
