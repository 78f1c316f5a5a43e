"""The optional Qdrant block projection (qdrant-client local mode) and its compensation protocol: a failure injected
after the graph write, after the point upsert, or at the commit leaves graph and projection consistent — the points
a failed write overwrote get their previous vector and payload back, the new ones are gone."""

from __future__ import annotations

import os

import grpc
import numpy as np
import pytest

from grpc_support import NoExtractor, block, edge, entity, start, stop, uid
from loregraph.errors import StoreError
from loregraph.ingest.knowledge import REAL_WORLD_UNIVERSE_ID
from loregraph.memory import Memory
from loregraph.store.projection import QdrantProjection
from test_storage_full import fill


@pytest.fixture
async def run(db_url, embedder, tmp_path):
    memory = await Memory.open(db_url, embedder=embedder, extractor=NoExtractor())
    projection = QdrantProjection(embedder.dim, path=str(tmp_path / "qdrant"))
    memory.set_block_projection(projection)
    r = await start(memory)
    r.projection = projection  # type: ignore[attr-defined]
    yield r
    await stop(r)
    await memory.close()
    projection.close()


def fail() -> None:
    raise StoreError("injected failure")


async def seed(run) -> tuple[str, str]:
    person, b1 = uid(), uid()
    await run.upsert(entities=[entity(person, "Ada")], blocks=[block(b1, "old text")],
                     edges=[edge(person, b1, "DESCRIBED_BY")])
    return person, b1


async def test_blocks_are_projected_with_the_spec_payload(run, embedder):
    person, b1 = await seed(run)
    child = uid()
    await run.upsert(blocks=[block(child, "child text", vis=2)], edges=[edge(b1, child, "SUMMARIZES")])
    pts = run.projection.get("g1", [b1, child])
    assert pts[b1].payload == {"block_id": b1, "universe_id": REAL_WORLD_UNIVERSE_ID, "root_entity_id": person,
                               "user_id": "alice", "visibility": "PRIVATE", "text": "old text", "block_level": 0}
    assert pts[child].payload["block_level"] == 1 and pts[child].payload["visibility"] == "SHARED"
    want = embedder.embed_one("old text")
    got = np.asarray(pts[b1].vector)
    assert float(np.dot(got, want) / (np.linalg.norm(got) * np.linalg.norm(want))) > 0.999
    # an update rewrites the point
    await run.upsert(blocks=[block(b1, "new text")])
    assert run.projection.get("g1", [b1])[b1].payload["text"] == "new text"
    # another group's projection is its own collection
    assert run.projection.get("g2", [b1]) == {}


async def _failed_update_leaves_everything_as_it_was(run, person: str, b1: str) -> None:
    before_point = run.projection.get("g1", [b1])[b1]
    b2 = uid()
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await run.upsert(blocks=[block(b1, "rewritten"), block(b2, "brand new")],
                         edges=[edge(b1, b2, "SUMMARIZES")])
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    # graph rolled back
    assert run.memory.store.get_blocks("g1", [b1])[0].text == "old text"
    assert run.memory.store.get_blocks("g1", [b2]) == []
    # projection: the new point is gone, the overwritten one has its old payload and vector back
    after = run.projection.get("g1", [b1, b2])
    assert b2 not in after
    assert after[b1].payload == before_point.payload
    assert np.allclose(after[b1].vector, before_point.vector, atol=1e-6)


@pytest.mark.parametrize("point", ["after_graph_write", "after_projection", "store_transaction"])
async def test_compensation_at_each_failure_point(run, point):
    person, b1 = await seed(run)
    writer = run.memory.knowledge_writer()
    if point == "after_graph_write":
        writer.fail_after_graph_write = fail
    elif point == "after_projection":
        writer.fail_after_projection = fail
    if point == "store_transaction":  # a failure inside the store's transaction, before the projection step
        with run.memory.store.apply_hook(lambda conn: fail()):
            await _failed_update_leaves_everything_as_it_was(run, person, b1)
    else:
        await _failed_update_leaves_everything_as_it_was(run, person, b1)
    writer.fail_after_graph_write = writer.fail_after_projection = None
    await run.upsert(blocks=[block(b1, "rewritten")])  # and the next write goes through to both
    assert run.projection.get("g1", [b1])[b1].payload["text"] == "rewritten"
    assert run.memory.store.get_blocks("g1", [b1])[0].text == "rewritten"


async def _failed_commit_is_compensated(run, make_commit_fail, prepare=None, recover=None) -> None:
    """``make_commit_fail(conn)`` runs inside the graph transaction after the points were upserted and makes the
    COMMIT itself fail: the call is UNAVAILABLE, the graph unchanged, new points gone, overwritten points restored;
    the store takes the next write (no transaction left open)."""
    _person, b1 = await seed(run)
    if prepare is not None:
        await prepare()
    before_point = run.projection.get("g1", [b1])[b1]
    calls = []

    def hook(conn) -> None:
        calls.append(1)
        make_commit_fail(conn)

    b2 = uid()
    with run.memory.store.apply_hook(hook), pytest.raises(grpc.aio.AioRpcError) as info:
        await run.upsert(blocks=[block(b1, "rewritten"), block(b2, "brand new")], edges=[edge(b1, b2, "SUMMARIZES")])
    assert calls and info.value.code() == grpc.StatusCode.UNAVAILABLE
    assert run.memory.store.get_blocks("g1", [b1])[0].text == "old text"
    assert run.memory.store.get_blocks("g1", [b2]) == []
    after = run.projection.get("g1", [b1, b2])
    assert b2 not in after and after[b1].payload == before_point.payload
    assert np.allclose(after[b1].vector, before_point.vector, atol=1e-6)
    if recover is not None:
        recover()
    # the store is usable: the next write commits, to the graph and the projection
    await run.upsert(blocks=[block(b1, "rewritten"), block(b2, "brand new")], edges=[edge(b1, b2, "SUMMARIZES")])
    assert run.memory.store.get_blocks("g1", [b2])[0].level == 1
    assert run.projection.get("g1", [b1])[b1].payload["text"] == "rewritten"


async def test_compensation_when_the_commit_itself_fails(run, db_url):
    """A deferred foreign key is checked only at COMMIT (both backends): the graph commit fails after the upsert."""
    ddl = ("CREATE TABLE commit_probe (id int PRIMARY KEY, ref int REFERENCES commit_probe(id) "
           "DEFERRABLE INITIALLY DEFERRED)")
    if db_url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(db_url, autocommit=True) as c:
            c.execute(ddl)
    else:
        import sqlean

        c = sqlean.connect(db_url[len("sqlite:///"):], isolation_level=None)
        c.execute(ddl)
        c.close()
        run.memory.store.conn.execute("PRAGMA foreign_keys = ON")  # SQLite enforces foreign keys when asked to

    def violate_at_commit(conn) -> None:
        conn.execute("INSERT INTO commit_probe VALUES (1, 999)")  # only checked when the transaction commits

    await _failed_commit_is_compensated(run, violate_at_commit)


@pytest.fixture
async def run_on_small_disk(small_disk, embedder, tmp_path):
    """The SQLite file on a small tmpfs; the projection on the ordinary disk."""
    memory = await Memory.open(f"sqlite:///{small_disk / 'q.db'}", embedder=embedder, extractor=NoExtractor())
    projection = QdrantProjection(embedder.dim, path=str(tmp_path / "qdrant"))
    memory.set_block_projection(projection)
    r = await start(memory)
    r.projection = projection  # type: ignore[attr-defined]
    yield r
    await stop(r)
    await memory.close()
    projection.close()


async def test_compensation_when_the_disk_fills_at_commit(run_on_small_disk, small_disk):
    """SQLite writes a transaction's pages to the write-ahead log at COMMIT: with the log emptied and the disk
    filled inside the transaction, the COMMIT itself fails (SQLITE_FULL)."""
    run = run_on_small_disk
    fillers = []

    def fill_the_disk(conn) -> None:
        fillers.append(fill(small_disk))

    def free_the_disk() -> None:
        while fillers:
            os.remove(fillers.pop())

    try:  # an empty write-ahead log first: the COMMIT needs new disk space
        await _failed_commit_is_compensated(run, fill_the_disk, prepare=run.memory.checkpoint, recover=free_the_disk)
    finally:
        free_the_disk()


async def test_candidates_search_the_projection_with_the_same_scores(run, embedder):
    """With a projection configured, block similarity comes from Qdrant (spec 001); scores match the store's."""
    ada, bo, b0, b1 = uid(), uid(), uid(), uid()
    await run.upsert(entities=[entity(ada, "Ada"), entity(bo, "Bo", user="bob")],
                     blocks=[block(b0, "wrote the first computer program"), block(b1, "a secret of bob's", user="bob")],
                     edges=[edge(ada, b0, "DESCRIBED_BY"), edge(bo, b1, "DESCRIBED_BY", user="bob")])
    finder = run.memory.candidate_finder()
    assert finder.projection is run.projection
    kw = dict(names=[], potential_type_ids=[], short_description="first program", user_id="alice", limit=5)
    via_qdrant = finder.find("g1", **kw)
    finder.projection = None
    try:
        via_store = finder.find("g1", **kw)
    finally:
        finder.projection = run.projection
    assert [c.entity_id for c in via_qdrant] == [c.entity_id for c in via_store] == [ada]  # bob's block stays his
    assert via_qdrant[0].score == pytest.approx(via_store[0].score, abs=1e-4)
