"""Block storage on both backends (issue 14): attributes, vectors, per-group kNN, lookups by root entity; no path
returns another group's blocks."""

from __future__ import annotations

import numpy as np
import pytest

from loregraph.graph.types import Block, Entity, GraphDelta
from loregraph.schema import Schema
from loregraph.store import open_store

DIM = 8


def vec(i: int) -> list[float]:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.3
    return (v / np.linalg.norm(v)).tolist()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_db")
    s = open_store(url)
    s.ensure_embedder("test-model", DIM)
    yield s
    s.close()


def _write(store, group: str, prefix: str) -> None:
    schema = Schema.default()
    ents = [Entity(id=f"{prefix}e{i}", group_id=group, name=f"E{i}") for i in range(3)]
    blocks = [Block(id=f"{prefix}b{i}", group_id=group, entity_id=f"{prefix}e{i}", text=f"text {i}", level=i % 2,
                    attributes={"user_id": "u", "visibility": "SHARED"}, embedding=vec(i)) for i in range(3)]
    store.apply(GraphDelta(group_id=group, entities=ents, blocks=blocks), schema)


def test_blocks_round_trip_with_attributes_and_vectors(store):
    _write(store, "g1", "a")
    got = store.get_blocks("g1", ["ab0", "ab1", "missing"])
    assert [(b.id, b.entity_id, b.level, b.attributes["visibility"]) for b in got] == [
        ("ab0", "ae0", 0, "SHARED"), ("ab1", "ae1", 1, "SHARED")]
    hits = store.block_vector("g1", np.asarray(vec(1), dtype=np.float32), 2)
    assert hits[0][0].id == "ab1" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [b.id for b in store.blocks_of_entities("g1", ["ae0", "ae2"])] == ["ab0", "ab2"]
    assert store.node_types("g1", ["ae0", "ab0", "nope"]) == {"ae0": "entity", "ab0": "block"}
    # an update without an embedding keeps the stored vector
    store.apply(GraphDelta(group_id="g1", blocks=[Block(id="ab1", group_id="g1", entity_id="ae1", text="new",
                                                        level=1)]), Schema.default())
    assert store.block_vector("g1", np.asarray(vec(1), dtype=np.float32), 1)[0][0].text == "new"


def test_blocks_never_cross_groups(store):
    _write(store, "g1", "a")
    _write(store, "g2", "b")
    assert store.get_blocks("g2", ["ab0"]) == []
    assert store.blocks_of_entities("g2", ["ae0"]) == []
    assert store.node_types("g2", ["ab0", "ae0"]) == {}
    assert {b.group_id for b, _ in store.block_vector("g2", np.asarray(vec(0), dtype=np.float32), 10)} == {"g2"}
    store.delete_group("g1")
    assert store.block_vector("g1", np.asarray(vec(0), dtype=np.float32), 10) == []
    assert len(store.block_vector("g2", np.asarray(vec(0), dtype=np.float32), 10)) == 3


def _scoped_world(store, group: str, dim: int) -> tuple[dict[str, np.ndarray], dict[str, dict[str, str]]]:
    """130 blocks in ``group``: 100 of bob's PRIVATE ones right next to the query direction, 20 of alice's, 10 SHARED
    of bob's; every vector random around a common direction (so bob's crowd alice's out of an unfiltered top 100)."""
    rng = np.random.default_rng(3)
    base = np.ones(dim, dtype=np.float32)
    vectors: dict[str, np.ndarray] = {}
    owners: dict[str, dict[str, str]] = {}
    ents, blocks = [], []
    for i, (user, vis, spread) in enumerate([("bob", "PRIVATE", 0.2)] * 100 + [("alice", "PRIVATE", 1.0)] * 20
                                            + [("bob", "SHARED", 1.0)] * 10):
        v = base + spread * rng.standard_normal(dim).astype(np.float32)
        v /= np.linalg.norm(v)
        bid = f"{group}-b{i}"
        vectors[bid], owners[bid] = v, {"user_id": user, "visibility": vis}
        ents.append(Entity(id=f"{group}-e{i}", group_id=group, name=f"E{i}"))
        blocks.append(Block(id=bid, group_id=group, entity_id=f"{group}-e{i}", text=f"text {i}", level=0,
                            attributes=owners[bid], embedding=v.tolist()))
    store.apply(GraphDelta(group_id=group, entities=ents, blocks=blocks), Schema.default())
    return vectors, owners


def test_block_search_past_the_exact_scan_is_scoped_to_the_user(tmp_path, request):
    """Large groups leave the exact scan (SQLite: in-memory binary codes; PostgreSQL: the group's partial HNSW
    index): the user filter is applied inside the search — other users' nearer blocks never crowd the requester's
    out — and the similarities are exact cosines."""
    dim = 32
    for backend in ("sqlite", "postgres"):
        url = f"sqlite:///{tmp_path / 'big.db'}" if backend == "sqlite" else request.getfixturevalue("pg_db")
        s = open_store(url)
        try:
            s.ensure_embedder("test-model", dim)
            s.EXACT_KNN_MAX = 50  # type: ignore[attr-defined]  # SQLite: past this, the in-memory path
            s.HNSW_MIN_ROWS = 50  # type: ignore[attr-defined]  # PostgreSQL: past this, the group's HNSW index
            vectors, owners = _scoped_world(s, "big", dim)
            _scoped_world(s, "other", dim)
            if backend == "postgres":
                import psycopg

                with psycopg.connect(url) as c:
                    kinds = [r[0] for r in c.execute("SELECT kind FROM vector_indexes WHERE group_id = 'big'")]
                    c.execute("SET enable_sort = off")  # as the store's block search does
                    plan = "\n".join(r[0] for r in c.execute(
                        f"EXPLAIN SELECT id FROM blocks WHERE group_id = 'big' AND embedding IS NOT NULL AND "
                        "(attributes->>'user_id' = 'alice' OR attributes->>'visibility' = 'SHARED') "
                        f"ORDER BY embedding::vector({dim}) <=> %s::vector({dim}) LIMIT 5", (str([1.0] * dim),)))
                assert "block" in kinds and "hnsw" in plan, plan
            else:
                s.block_vector("big", np.ones(dim, dtype=np.float32), 1)
                assert ("block", "big") in s._vector_cache  # type: ignore[attr-defined]  # the in-memory path
            q = np.ones(dim, dtype=np.float32) / np.sqrt(dim)
            for user in ("alice", "carol", None):
                got = s.block_vector("big", q, 5, user)
                seen = [b for b in vectors if user is None or owners[b]["user_id"] == user
                        or owners[b]["visibility"] == "SHARED"]
                exact = sorted(seen, key=lambda b: -float(vectors[b] @ q))[:5]
                assert [b.id for b, _ in got] == exact, (backend, user)
                for b, score in got:
                    assert b.group_id == "big" and score == pytest.approx(float(vectors[b.id] @ q), abs=1e-5)
            assert {owners[b.id]["user_id"] for b, _ in s.block_vector("big", q, 100, "alice")} == {"alice", "bob"}
            assert all(owners[b.id]["visibility"] == "SHARED" or owners[b.id]["user_id"] == "alice"
                       for b, _ in s.block_vector("big", q, 100, "alice"))
            # a write gives the group's in-memory codes a new generation: the next search sees it
            new = np.ones(dim, dtype=np.float32) / np.sqrt(dim)
            s.apply(GraphDelta(group_id="big", blocks=[Block(id="big-b120", group_id="big", entity_id="big-e120",
                                                             text="moved", attributes=owners["big-b120"],
                                                             embedding=new.tolist())]), Schema.default())
            assert s.block_vector("big", q, 1, "alice")[0][0].id == "big-b120"
        finally:
            s.close()
