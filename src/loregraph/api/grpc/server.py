"""The knowledge interface over gRPC (spec 001): ``loregraph.knowledge.v1.KnowledgeService`` on ``grpc.aio``, with
server reflection and the standard health service. A thin adapter: parse, call the ``Memory`` facade, format.

API keys are the REST service's (``Settings.api_keys``), read from call metadata ``authorization: Bearer <key>``
or ``x-api-key``. The group a call works in is ``x-group-id`` (optional when the key has exactly one group, or
when no keys are configured: then ``default``); a key outside its groups gets ``PERMISSION_DENIED``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import grpc
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from loregraph.api.grpc import knowledge_pb2 as pb
from loregraph.api.grpc import knowledge_pb2_grpc as pb_grpc
from loregraph.api.grpc.errors import abort_with
from loregraph.api.rest.auth import KeyRing
from loregraph.config import ApiKey
from loregraph.errors import InvalidInputError, LoregraphError
from loregraph.graph.types import validate_group_id
from loregraph.ingest.knowledge import (
    REAL_WORLD_UNIVERSE_ID,
    BlockRecord,
    EdgeRecord,
    EntityRecord,
    KnowledgeDelta,
    UniverseRecord,
)
from loregraph.memory import Memory

log = logging.getLogger("loregraph.api")
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["KnowledgeService"].full_name
DEFAULT_GROUP = "default"


def _vis(value: int) -> str:
    try:
        name = pb.Visibility.Name(value)
    except ValueError:
        return str(value)
    return "" if name == "VISIBILITY_UNSPECIFIED" else name


def _value(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "struct_value":
        return {k: _value(x) for k, x in v.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(x) for x in v.list_value.values]
    if kind == "number_value":
        return v.number_value  # NaN/infinity kept: the writer names the property that holds one
    if kind == "string_value":
        return v.string_value
    if kind == "bool_value":
        return v.bool_value
    return None


def _props(msg: Any, field: str) -> dict[str, Any]:
    return {k: _value(x) for k, x in getattr(msg, field).fields.items()} if msg.HasField(field) else {}


def to_delta(req: pb.UpsertGraphDeltaRequest) -> KnowledgeDelta:
    return KnowledgeDelta(
        universes=[UniverseRecord(u.id, u.name, u.user_id, _vis(u.visibility)) for u in req.universes],
        entities=[EntityRecord(e.id, e.type_id, _props(e, "properties"), e.universe_id, e.user_id, _vis(e.visibility))
                  for e in req.entities],
        blocks=[BlockRecord(b.id, b.type_id or "node.block", _props(b, "properties"), b.user_id, _vis(b.visibility))
                for b in req.blocks],
        edges=[EdgeRecord(x.source_id, x.target_id, x.edge_type, _props(x, "properties"), x.id, x.user_id,
                          _vis(x.visibility)) for x in req.edges],
    )


class Denied(Exception):
    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code


class KnowledgeService(pb_grpc.KnowledgeServiceServicer):
    def __init__(self, memory: Memory, keys: list[ApiKey]):
        self.memory = memory
        self.keyring = KeyRing(keys)

    def group_of(self, context: grpc.aio.ServicerContext) -> str:
        """Authenticate the call and pick its group (raises Denied / InvalidInputError)."""
        md = {k.lower(): v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}
        auth = md.get("authorization", "")
        presented = auth[7:].strip() if auth.lower().startswith("bearer ") else md.get("x-api-key")
        who = self.keyring.authenticate(presented)
        if who is None:
            log.warning("grpc unauthorized: %s API key", "unknown" if presented else "missing")
            raise Denied(grpc.StatusCode.UNAUTHENTICATED, "missing or unknown API key")
        group = md.get("x-group-id", "").strip()
        if not group:
            if not self.keyring.enabled:
                group = DEFAULT_GROUP
            elif len(who.groups) == 1 and not who.admin:
                group = next(iter(who.groups))
            else:
                raise InvalidInputError("x-group-id: metadata required (this API key has several groups)")
        validate_group_id(group, "x-group-id")
        if not who.can(group) and self.keyring.enabled:
            log.warning("grpc forbidden: key %r asked for a group outside its scope", who.name)
            raise Denied(grpc.StatusCode.PERMISSION_DENIED, f"this API key may not access group {group!r}")
        return group

    async def _call(self, context: grpc.aio.ServicerContext, method: str, work: Any) -> Any:
        t0 = time.perf_counter()
        log.debug("grpc %s started", method)
        try:
            group = self.group_of(context)
            result = await work(group)
        except Denied as exc:
            await context.abort(exc.code, str(exc))
        except (LoregraphError, ValueError) as exc:
            await abort_with(context, exc if isinstance(exc, LoregraphError) else InvalidInputError(str(exc)), method)
        except Exception as exc:
            await abort_with(context, exc, method)
        log.debug("grpc %s ok in %.1f ms", method, (time.perf_counter() - t0) * 1e3)
        return result

    async def UpsertGraphDelta(self, request: pb.UpsertGraphDeltaRequest,
                               context: grpc.aio.ServicerContext) -> pb.UpsertGraphDeltaResponse:
        async def work(group: str) -> pb.UpsertGraphDeltaResponse:
            res = await self.memory.upsert_graph_delta(group, to_delta(request))
            return pb.UpsertGraphDeltaResponse(universes_upserted=res.universes, entities_upserted=res.entities,
                                               blocks_upserted=res.blocks, edges_upserted=res.edges)
        return await self._call(context, "UpsertGraphDelta", work)

    async def InitializeUserGraph(self, request: pb.InitializeUserGraphRequest,
                                  context: grpc.aio.ServicerContext) -> pb.InitializeUserGraphResponse:
        async def work(group: str) -> pb.InitializeUserGraphResponse:
            pid, created = await self.memory.initialize_user_graph(group, request.user_id, request.name)
            return pb.InitializeUserGraphResponse(person_entity_id=pid, universe_id=REAL_WORLD_UNIVERSE_ID,
                                                  created=created)
        return await self._call(context, "InitializeUserGraph", work)

    async def FindEntityCandidates(self, request: pb.FindEntityCandidatesRequest,
                                   context: grpc.aio.ServicerContext) -> pb.FindEntityCandidatesResponse:
        async def work(group: str) -> pb.FindEntityCandidatesResponse:
            found = await self.memory.find_entity_candidates(
                group, names=list(request.names), potential_type_ids=list(request.potential_type_ids),
                short_description=request.short_description, user_id=request.user_id,
                limit=request.limit if request.HasField("limit") else None)
            return pb.FindEntityCandidatesResponse(candidates=[pb.EntityCandidate(
                entity_id=c.entity_id, entity_name=c.entity_name, described_by_text=c.described_by_text,
                score=c.score, matched_name=c.matched_name, matched_alias=c.matched_alias,
                entity_type_id=c.entity_type_id) for c in found])
        return await self._call(context, "FindEntityCandidates", work)


async def start_server(memory: Memory, *, host: str = "127.0.0.1", port: int = 0,
                       keys: list[ApiKey] | None = None) -> tuple[grpc.aio.Server, int]:
    """Build and start the server (knowledge service, reflection, health); returns it and the bound port."""
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", 32 * 1024 * 1024)])
    pb_grpc.add_KnowledgeServiceServicer_to_server(KnowledgeService(memory, list(keys or [])), server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection((SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                                         reflection.SERVICE_NAME), server)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    bound = server.add_insecure_port(address)
    if bound == 0:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    await health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
    log.info("grpc knowledge service listening on %s:%d", host, bound)
    return server, bound


__all__ = ["SERVICE_NAME", "KnowledgeService", "start_server", "to_delta"]
