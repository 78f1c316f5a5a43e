"""PostgreSQL's search of large groups' vectors in memory (``PostgresStore.VECTORS_IN_MEMORY_MIN_ROWS``): the same
neighbours as the SQLite store's search of the same rows (binary pre-selection forced on a small group), exact
results when every vector is a candidate, no other group's rows, and writes by any process (insert, embedding
update, delete, group deletion) seen by the next search.

Real servers (the ``pg_db`` / ``citus_db`` fixtures), a fresh database per test; a real SQLite file.
"""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from loregraph.graph.types import Fact, GraphDelta
from loregraph.store import TimeFilter
from loregraph.store.postgres import PostgresStore
from loregraph.store.sqlite import SQLiteStore
from loregraph.store.vectors import GroupVectors
from test_store import DIM, SCHEMA, small_graph, vec

GRAPHS = 40  # facts, episodes and 80 entities per group


def _store(url: str, min_rows: int | None = 10) -> PostgresStore:
    s = PostgresStore(url)
    s.ensure_embedder("test-model", DIM)
    s.VECTORS_IN_MEMORY_MIN_ROWS = min_rows
    return s


def _exact(url: str, table: str, group: str, q: np.ndarray, k: int) -> list[str]:
    with psycopg.connect(url) as c:
        rows = c.execute(f"SELECT id, embedding::real[] FROM {table} WHERE group_id = %s", (group,)).fetchall()
    sims = {rid: float(np.dot(np.asarray(v), q) / np.linalg.norm(v) / np.linalg.norm(q)) for rid, v in rows}
    return sorted(sims, key=lambda r: -sims[r])[:k]


def _fill(*stores: PostgresStore | SQLiteStore) -> list[GraphDelta]:
    deltas = [small_graph(g, f"{g}{i}", seed=(i * 7) if g == "big" else 1000 + i) for g in ("big", "other")
              for i in range(GRAPHS)]
    for d in deltas:
        for s in stores:
            s.apply(d, SCHEMA)
    return deltas


@pytest.fixture
def pg_or_citus(request):
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("pg_or_citus", ["pg_db", "citus_db"], indirect=True)
def test_large_groups_find_what_sqlite_finds_and_only_their_own_rows(pg_or_citus, tmp_path, monkeypatch):
    url = pg_or_citus
    pg, lite = _store(url), SQLiteStore(tmp_path / "s.db")
    lite.ensure_embedder("test-model", DIM)
    monkeypatch.setattr(SQLiteStore, "EXACT_KNN_MAX", 10)
    try:
        deltas = _fill(pg, lite)
        other_ids = {r.id for d in deltas if d.group_id == "other" for r in (*d.facts, *d.episodes, *d.entities)}
        # every vector a candidate: exact cosine neighbours (the float16 rescoring keeps the order here)
        for seed in (3, 11, 77, 123):
            q = np.asarray(vec(seed))
            for kind, table in (("fact", "facts"), ("episode", "episodes"), ("entity", "entities")):
                assert [h.id for h in pg.vector(kind, ["big"], q, 5)] == _exact(url, table, "big", q, 5)
        assert set(pg.vector_memory()) == {"fact", "episode", "entity"}
        # the binary pre-selection doing its work (8-bit codes: Hamming ties everywhere, broken by insertion order
        # on both backends): the same hits and scores as SQLite's search of the same rows
        monkeypatch.setattr(GroupVectors, "EXACT_SCAN_MAX", 0)
        monkeypatch.setattr(GroupVectors, "CANDIDATES", 12)
        pg._vector_cache.clear()
        for seed in range(200, 230):
            q = np.asarray(vec(seed))
            for kind in ("fact", "episode", "entity"):
                got, want = pg.vector(kind, ["big"], q, 5), lite.vector(kind, ["big"], q, 5)
                assert [h.id for h in got] == [h.id for h in want]
                assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)
                assert not {h.id for h in got} & other_ids
                both = pg.vector(kind, ["big", "other"], q, 200)
                assert [h.id for h in both] == [h.id for h in lite.vector(kind, ["big", "other"], q, 200)]
        # a fact ended is held to the time filter after the kNN, as on SQLite
        ended = deltas[0].facts[0]
        for s in (pg, lite):
            s.apply(GraphDelta(group_id="big", facts=[ended.model_copy(update={"invalid_at": ended.valid_at})]),
                    SCHEMA)
        q = np.asarray(ended.embedding)
        assert ended.id not in {h.id for h in pg.vector("fact", ["big"], q, 5)}
        assert ended.id in {h.id for h in pg.vector("fact", ["big"], q, 5, TimeFilter(include_expired=True))}
        assert [h.id for h in pg.vector("fact", ["big"], q, 5)] == [h.id for h in lite.vector("fact", ["big"], q, 5)]
    finally:
        pg.close()
        lite.close()


def _held_as_loaded(s: PostgresStore, kind: str, group: str) -> bool:
    """The vectors ``s`` holds for (kind, group) equal those a fresh load gives."""
    held = s._vector_cache[(kind, group)][0]
    with s._read() as c:
        fresh = GroupVectors(held.generation, s._load_vectors(c, kind, group, None), DIM)  # type: ignore[arg-type]
    return (np.array_equal(held.seqs, fresh.seqs) and np.array_equal(held.codes, fresh.codes)
            and np.array_equal(held.vectors, fresh.vectors) and held.ids == fresh.ids)


@pytest.mark.parametrize("codes", [False, True], ids=["exact", "codes"])
@pytest.mark.parametrize("pg_or_citus", ["pg_db", "citus_db"], indirect=True)
def test_another_processes_writes_reach_the_vectors_held_in_memory(pg_or_citus, codes, monkeypatch, caplog):
    url = pg_or_citus
    if codes:  # binary codes + float16 rescoring (every vector a candidate: still the exact order here)
        monkeypatch.setattr(GroupVectors, "EXACT_SCAN_MAX", 0)
    writer, reader = _store(url), _store(url)
    try:
        deltas = _fill(writer)
        q = np.asarray(vec(999_999))
        before = [h.id for h in reader.vector("fact", ["big"], q, 5)]
        assert before == _exact(url, "facts", "big", q, 5) and reader.vector_memory()
        # insert: a fact on the query's own vector comes first
        src = deltas[0].entities
        new = Fact(group_id="big", source_id=src[0].id, target_id=src[1].id, type="KNOWS", fact="new fact",
                   valid_at=deltas[0].facts[0].valid_at, embedding=q.tolist())
        caplog.set_level("INFO", logger="loregraph.store")
        writer.apply(GraphDelta(group_id="big", facts=[new]), SCHEMA)
        assert [h.id for h in reader.vector("fact", ["big"], q, 5)] == [new.id, *before[:4]]
        # only inserts since: the new row read and added to those held, the same as loading them all
        assert "added 1 fact vectors" in caplog.text and "loaded" not in caplog.text
        assert _held_as_loaded(reader, "fact", "big")
        reader.vector("episode", ["big"], q, 5)  # held from here on
        writer.apply(small_graph("big", "more", seed=31337), SCHEMA)  # an episode, two entities, a fact
        reader.vector("episode", ["big"], q, 5)
        assert _held_as_loaded(reader, "episode", "big")
        assert "added 1 episode vectors" in caplog.text
        # update of an embedding: the old best moves away from the query
        far = deltas[[d.facts[0].id for d in deltas].index(before[0])].facts[0]
        writer.apply(GraphDelta(group_id="big", facts=[far.model_copy(update={"embedding": (-q).tolist()})]), SCHEMA)
        got = [h.id for h in reader.vector("fact", ["big"], q, 5)]
        assert got == _exact(url, "facts", "big", q, 5) and before[0] not in got
        assert _held_as_loaded(reader, "fact", "big")
        # delete
        assert writer.delete_fact("big", new.id) == 1
        assert [h.id for h in reader.vector("fact", ["big"], q, 5)] == _exact(url, "facts", "big", q, 5)
        # the group deleted and written again: nothing of the old rows, though the reader held them
        writer.delete_group("big")
        assert reader.vector("fact", ["big"], q, 5) == []
        again = [small_graph("big", f"again{i}", seed=5000 + i) for i in range(GRAPHS)]
        for d in again:
            writer.apply(d, SCHEMA)
        got = [h.id for h in reader.vector("fact", ["big"], q, 5)]
        assert got == _exact(url, "facts", "big", q, 5) and set(got) <= {d.facts[0].id for d in again}
    finally:
        writer.close()
        reader.close()


def test_switched_off_the_server_searches_and_holds_nothing(pg_db, monkeypatch):
    monkeypatch.setenv("LOREGRAPH_PG_VECTORS_IN_MEMORY", "off")
    s = PostgresStore(pg_db)
    s.ensure_embedder("test-model", DIM)
    try:
        assert s.VECTORS_IN_MEMORY_MIN_ROWS is None
        _fill(s)
        q = np.asarray(vec(5))
        assert [h.id for h in s.vector("fact", ["big"], q, 5)] == _exact(pg_db, "facts", "big", q, 5)
        assert s.vector_memory() == {}
    finally:
        s.close()
    monkeypatch.setenv("LOREGRAPH_PG_VECTORS_IN_MEMORY", "sometimes")
    with pytest.raises(Exception, match="LOREGRAPH_PG_VECTORS_IN_MEMORY must be on or off"):
        PostgresStore(pg_db)


def test_a_transactions_own_writes_are_searched_before_it_commits(pg_db):
    s = _store(pg_db)
    try:
        deltas = _fill(s)
        q = np.asarray(vec(424_242))
        assert s.vector("fact", ["big"], q, 3)  # held in memory now
        src = deltas[0].entities
        new = Fact(group_id="big", source_id=src[0].id, target_id=src[1].id, type="KNOWS", fact="inside",
                   valid_at=deltas[0].facts[0].valid_at, embedding=q.tolist())
        with s.transaction("big"):
            s.apply(GraphDelta(group_id="big", facts=[new]), SCHEMA)
            assert s.vector("fact", ["big"], q, 1)[0].id == new.id
        assert s.vector("fact", ["big"], q, 1)[0].id == new.id
    finally:
        s.close()


@pytest.mark.parametrize("in_memory", [True, False], ids=["in-memory", "server"])
def test_no_hnsw_index_for_kinds_searched_in_memory(pg_db, in_memory):
    """Groups searched in memory get no HNSW index (it would only slow their writes); searched on the server, the
    groups past ``HNSW_MIN_ROWS`` get theirs."""
    s = _store(pg_db, 10 if in_memory else None)
    s.HNSW_MIN_ROWS = 30 if in_memory else 20  # in memory from 10 rows, long before an index would be built
    try:
        _fill(s)
        s.checkpoint()
        with psycopg.connect(pg_db) as c:
            names = [r[0] for r in c.execute("SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'")]
        assert len(names) == (0 if in_memory else 6), names  # facts, episodes, entities of both groups
        q = np.asarray(vec(8))
        assert [h.id for h in s.vector("fact", ["big"], q, 5)] == _exact(pg_db, "facts", "big", q, 5)
    finally:
        s.close()
