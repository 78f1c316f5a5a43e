"""Shared parts of the gRPC tests: a real server on loopback over a real Memory (SQLite file or PostgreSQL), real
channels, and request builders for spec 001 records."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
from google.protobuf import struct_pb2

from loregraph.api.grpc import knowledge_pb2 as pb
from loregraph.api.grpc import knowledge_pb2_grpc as pb_grpc
from loregraph.api.grpc.server import start_server
from loregraph.graph.types import Entity
from loregraph.memory import Memory

EDGE_PROPS = {"confidence": 0.9, "status": "active", "context": "test"}


class NoExtractor:
    """The knowledge interface never extracts; this keeps spaCy out of these tests."""

    def extract(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not used")


def uid() -> str:
    return str(uuid.uuid4())


def struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def entity(eid: str | None = None, name: str | None = "Ada", type_id: str = "node.person", user: str = "alice",
           vis: int = pb.PRIVATE, universe: str = "", **props: Any) -> pb.Entity:
    p = dict(props)
    if name is not None:
        p["name"] = name
    return pb.Entity(id=eid or uid(), type_id=type_id, properties=struct(p), universe_id=universe, user_id=user,
                     visibility=vis)  # type: ignore[arg-type]


def block(bid: str | None = None, text: str | None = "A description.", user: str = "alice",
          vis: int = pb.PRIVATE, **props: Any) -> pb.Block:
    p = dict(props)
    if text is not None:
        p["text"] = text
    return pb.Block(id=bid or uid(), type_id="node.block", properties=struct(p), user_id=user,
                    visibility=vis)  # type: ignore[arg-type]


def edge(src: str, dst: str, etype: str = "RELATED_TO", user: str = "alice", vis: int = pb.PRIVATE,
         props: dict[str, Any] | None = None, eid: str = "") -> pb.Edge:
    return pb.Edge(id=eid, edge_type=etype, source_id=src, target_id=dst,
                   properties=struct(EDGE_PROPS if props is None else props), user_id=user,
                   visibility=vis)  # type: ignore[arg-type]


class Running:
    """A started server, a channel to it and a stub; ``md(group)`` is the call metadata."""

    def __init__(self, memory: Memory, server: grpc.aio.Server, port: int, channel: grpc.aio.Channel):
        self.memory = memory
        self.server = server
        self.port = port
        self.channel = channel
        self.stub = pb_grpc.KnowledgeServiceStub(channel)

    @staticmethod
    def md(group: str = "g1", key: str | None = None) -> list[tuple[str, str]]:
        out = [("x-group-id", group)]
        if key:
            out.append(("authorization", f"Bearer {key}"))
        return out

    async def upsert(self, group: str = "g1", **fields: Any) -> pb.UpsertGraphDeltaResponse:
        return await self.stub.UpsertGraphDelta(pb.UpsertGraphDeltaRequest(**fields), metadata=self.md(group))

    async def counts(self, group: str = "g1") -> dict[str, int]:
        """Every row the group holds (entities, facts, blocks)."""
        st = self.memory.store
        ents = st.list_entities(group, limit=100000)
        facts = st.list_facts(group, __import__("loregraph.store", fromlist=["TimeFilter"]).TimeFilter(
            include_expired=True), 100000)
        blocks = st.blocks_of_entities(group, [e.id for e in ents])
        return {"entities": len(ents), "facts": len(facts), "blocks": len(blocks)}

    async def entities(self, group: str = "g1") -> list[Entity]:
        return self.memory.store.list_entities(group, limit=100000)


async def start(memory: Memory, keys: list[Any] | None = None) -> Running:
    server, port = await start_server(memory, host="127.0.0.1", port=0, keys=keys)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    return Running(memory, server, port, channel)


async def stop(run: Running) -> None:
    await run.channel.close()
    await run.server.stop(None)
