"""Property-based: random graph deltas, valid and broken, sent over a real channel on both backends, never give
UNKNOWN/INTERNAL, never write part of a rejected delta, and never leave a graph that breaks the schema."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from grpc_support import EDGE_PROPS, NoExtractor, block, edge, entity, start, stop, uid
from loregraph.api.grpc import knowledge_pb2 as pb
from loregraph.api.grpc import knowledge_pb2_grpc as pb_grpc
from loregraph.ingest.knowledge import REAL_WORLD_UNIVERSE_ID
from loregraph.memory import Memory
from loregraph.schema import Schema
from loregraph.store import TimeFilter

ENT = [uid() for _ in range(4)]
BLK = [uid() for _ in range(3)]
UNI = uid()
SCHEMA = Schema.knowledge()


class Background:
    """A server and its Memory on an event loop of their own thread; the test calls it through a sync channel."""

    def __init__(self, url: str, embedder: Any):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.memory: Memory = self.call(Memory.open(url, embedder=embedder, extractor=NoExtractor()))
        self.run = self.call(start(self.memory))
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.run.port}")
        self.stub = pb_grpc.KnowledgeServiceStub(self.channel)

    def call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(120)

    def state(self) -> tuple:
        async def read() -> tuple:
            def snap() -> tuple:
                st_ = self.memory.store
                ents = st_.list_entities("g1", limit=100000)
                facts = st_.list_facts("g1", TimeFilter(include_expired=True), 100000)
                blocks = st_.blocks_of_entities("g1", [e.id for e in ents])
                return (sorted((e.id, e.name, e.type, tuple(e.aliases), repr(sorted(e.attributes.items())))
                               for e in ents),
                        sorted((f.id, f.type, f.source_id, f.target_id, repr(sorted(f.attributes.items())))
                               for f in facts),
                        sorted((b.id, b.entity_id, b.parent_id or "", b.level, b.text) for b in blocks))
            return await self.memory._read(snap)
        return self.call(read())

    def close(self) -> None:
        self.channel.close()
        self.call(stop(self.run))
        self.call(self.memory.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(params=["sqlite", "postgres"])
def bg(request, tmp_path, embedder):
    url = f"sqlite:///{tmp_path / 'p.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_db")
    b = Background(url, embedder)
    yield b
    b.close()


ids = st.sampled_from([*ENT, *BLK, UNI, REAL_WORLD_UNIVERSE_ID, "not-a-uuid"])
entities = st.builds(
    lambda eid, t, name, uni, vis, user, extra: entity(eid, name, type_id=t, universe=uni, vis=vis, user=user,
                                                       **extra),
    st.sampled_from([*ENT, *ENT, "not-a-uuid"]),
    st.sampled_from(["node.person", "node.friend", "node.company", "node.location", "node.dragon", "person"]),
    st.sampled_from(["Ada", "Bo", "", None]), st.sampled_from(["", "", UNI, "bad"]),
    st.sampled_from([pb.PRIVATE, pb.SHARED, pb.VISIBILITY_UNSPECIFIED]), st.sampled_from(["alice", "bob", ""]),
    st.sampled_from([{}, {}, {"aliases": ["A"]}, {"shoe": 1}, {"aliases": "x"}, {"visibility": "SHARED"},
                     {"description": "nul\x00"}, {"aliases": [float("inf")]}]))
blocks = st.builds(lambda bid, text, vis: block(bid, text, vis=vis), st.sampled_from([*BLK, "nope"]),
                   st.sampled_from(["about", "more", None]), st.sampled_from([pb.PRIVATE, pb.SHARED, 7]))
edges = st.builds(
    lambda s, t, etype, props: edge(s, t, etype, props=props), ids, ids,
    st.sampled_from(["RELATED_TO", "KNOWS", "WORKS_FOR", "LOCATED_AT", "DESCRIBED_BY", "SUMMARIZES", "IS_PART_OF",
                     "LOVES"]),
    st.sampled_from([EDGE_PROPS, EDGE_PROPS, {"confidence": 0.5}, {**EDGE_PROPS, "confidence": "high"},
                     {**EDGE_PROPS, "confidence": float("nan")}, {**EDGE_PROPS, "context": {"k": ["\x00"]}}]))
requests = st.builds(
    lambda with_uni, es, bs, xs: pb.UpsertGraphDeltaRequest(
        universes=[pb.Universe(id=UNI, name="Other", user_id="alice", visibility=pb.SHARED)] if with_uni else [],
        entities=es, blocks=bs, edges=xs),
    st.booleans(), st.lists(entities, max_size=4), st.lists(blocks, max_size=3), st.lists(edges, max_size=4))



@st.composite
def mostly_valid(draw: Any) -> pb.UpsertGraphDeltaRequest:
    """A well-formed delta (entities, a block chain, edges), sometimes with one record broken."""
    n = draw(st.integers(1, 4))
    es = [entity(ENT[i], draw(st.sampled_from(["Ada", "Bo", "Cy"])),
                 type_id=draw(st.sampled_from(["node.person", "node.friend", "node.company"])),
                 user=draw(st.sampled_from(["alice", "bob"])), vis=draw(st.sampled_from([pb.PRIVATE, pb.SHARED])))
          for i in range(n)]
    xs = []
    bs = []
    nb = draw(st.integers(0, 3))
    for j in range(nb):
        bs.append(block(BLK[j], draw(st.sampled_from(["about", "more", "detail"]))))
        xs.append(edge(ENT[draw(st.integers(0, n - 1))], BLK[j], "DESCRIBED_BY") if j == 0 or draw(st.booleans())
                  else edge(BLK[j - 1], BLK[j], "SUMMARIZES"))
    for _ in range(draw(st.integers(0, 2))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        xs.append(edge(ENT[a], ENT[b], draw(st.sampled_from(["RELATED_TO", "KNOWS", "WORKS_FOR"]))))
    if draw(st.booleans()):
        which = draw(st.sampled_from(["entity", "block", "edge"]))
        if which == "entity":
            es.append(draw(entities))
        elif which == "block":
            bs.append(draw(blocks))
        else:
            xs.append(draw(edges))
    return pb.UpsertGraphDeltaRequest(entities=es, blocks=bs, edges=xs)


def check_schema(state: tuple) -> None:
    """The stored graph satisfies the knowledge schema."""
    ents, facts, blks = state
    types = {e[0]: e[2] for e in ents}
    types.update({b[0]: "block" for b in blks})
    current = [f for f in facts]
    part_of = Counter(f[2] for f in current if f[1] == "IS_PART_OF")
    for eid, t in types.items():
        if t not in ("universe", "block"):
            assert part_of[eid] == 1, f"entity {eid} is part of {part_of[eid]} universes"
    for f in current:
        assert f[2] in types and f[3] in types, f"dangling edge {f}"
        assert SCHEMA.edge_allowed(f[1], types[f[2]], types[f[3]]), f"edge rule broken: {f}"
    parents = Counter(f[3] for f in current if f[1] in ("DESCRIBED_BY", "SUMMARIZES"))
    by_id = {b[0]: b for b in blks}
    for bid, root, parent, level, _ in blks:
        assert parents[bid] == 1, f"block {bid} has {parents[bid]} parent edges"
        if parent:
            assert by_id[parent][3] + 1 == level and by_id[parent][1] == root
        else:
            assert level == 0 and types.get(root) not in (None, "block", "universe")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(req=st.one_of(requests, mostly_valid()))
def test_random_deltas_are_all_or_nothing_and_never_internal(bg, req):
    before = bg.state()
    try:
        bg.stub.UpsertGraphDelta(req, metadata=[("x-group-id", "g1")], timeout=60)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, (exc.code(), exc.details())
        assert bg.state() == before, "a rejected delta wrote something"
        return
    event("accepted")
    check_schema(bg.state())
