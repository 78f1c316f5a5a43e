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
