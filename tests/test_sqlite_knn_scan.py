"""A small group's kNN on SQLite is an exact scan of the stored floats: it must give what sqlite-vec's own vec0 kNN
gives, hit for hit and score for score, ties included (the later write first), under every kind's filter."""

from __future__ import annotations

import numpy as np

from loregraph.graph.types import Entity, Fact, GraphDelta
from loregraph.store import TimeFilter
from loregraph.store.sqlite import SQLiteStore
from test_store import DIM, SCHEMA, T0, vec


def _vec0_knn(store: SQLiteStore, kind: str, group: str, query: np.ndarray, k: int) -> list[tuple[str, float]]:
    table = {"entity": "entities", "fact": "facts"}[kind]
    rows = store.conn.execute(
        f"SELECT x.id, v.distance FROM (SELECT rowid, distance FROM {kind}_vec WHERE embedding MATCH ? AND k = ? "
        f"AND grp = ?) v JOIN {table} x ON x.seq = v.rowid ORDER BY v.distance", (query.tobytes(), k, group))
    return [(r[0], 1.0 - float(r[1])) for r in rows]


def test_small_group_knn_is_sqlite_vecs_knn_ties_included(tmp_path):
    store = SQLiteStore(tmp_path / "knn.db")
    store.ensure_embedder("test-model", DIM)
    twin = vec(3)  # several records share one vector: their order is the tie rule
    ents = [Entity(group_id="g", name=f"e{i}", type="tool", embedding=twin if i % 4 == 0 else vec(i))
            for i in range(40)]
    store.apply(GraphDelta(group_id="g", entities=ents), SCHEMA)
    # a rewritten vector counts as the latest write; another group's vectors stay out
    ents[8].embedding = vec(3)
    store.apply(GraphDelta(group_id="g", entities=[ents[8]]), SCHEMA)
    store.apply(GraphDelta(group_id="h", entities=[Entity(group_id="h", name="x", type="tool", embedding=twin)]),
                SCHEMA)
    facts = [Fact(group_id="g", source_id=ents[i].id, target_id=ents[i + 1].id, type="USES", fact=f"f{i}",
                  embedding=twin if i % 3 == 0 else vec(100 + i), valid_at=T0,
                  invalid_at=T0 if i % 5 == 0 else None) for i in range(30)]
    store.apply(GraphDelta(group_id="g", facts=facts), SCHEMA)
    queries = [np.asarray(twin, dtype=np.float32), *(np.asarray(vec(500 + i), dtype=np.float32) for i in range(5))]
    for query in queries:
        for k in (1, 3, 10, 40):
            want = _vec0_knn(store, "entity", "g", query, k)
            got = [(h.id, h.score) for h in store.vector("entity", ["g"], query, k)]
            assert got == want[:k]
            # facts: the time filter applies after the kNN's headroom, as before
            fetch = k * 2 + 10
            current = {f.id for f in facts if f.invalid_at is None}
            want_facts = [hit for hit in _vec0_knn(store, "fact", "g", query, fetch) if hit[0] in current][:k]
            assert [(h.id, h.score) for h in store.vector("fact", ["g"], query, k, TimeFilter())] == want_facts
    store.close()
