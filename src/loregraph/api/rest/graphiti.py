"""The add-messages contract (spec 000) and the other routes Graphiti's REST server has, same paths and
bodies, so its clients can switch. Routes parse, check the caller's scope, call Memory, format.

Where Graphiti answers 200, so do these routes: unknown body fields are ignored, ``last_n`` and
``max_facts`` are clamped to the caps (0 or less: an empty answer), a blank query or no messages finds no
facts. Oversized bodies still get 413."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from loregraph.api.rest import format as fmt
from loregraph.api.rest import models as m
from loregraph.api.rest.auth import Principal
from loregraph.api.rest.deps import GroupPath, IdPath, Service, Svc, Who, readable_group_of
from loregraph.graph.messages import Message
from loregraph.graph.types import utcnow

log = logging.getLogger("loregraph.api")
router = APIRouter()

QUEUED = "Messages added to processing queue"
MAX_EPISODES = 1000
TICK = timedelta(microseconds=1)  # the resolution of stored times: valid_at < now + TICK is valid_at <= now


def _check_limits(svc: Service, messages: list[m.MessageIn]) -> None:
    s = svc.settings
    errors: list[dict[str, Any]] = []
    if len(messages) > s.max_messages_per_request:
        errors.append({"type": "too_long", "loc": ("body", "messages"), "input": None,
                       "msg": f"at most {s.max_messages_per_request} messages per request"})
    for i, msg in enumerate(messages):
        if len(msg.content) > s.max_message_chars:
            errors.append({"type": "string_too_long", "loc": ("body", "messages", i, "content"), "input": None,
                           "msg": f"message content is limited to {s.max_message_chars} characters"})
    if errors:
        raise RequestValidationError(errors)


@router.post("/messages", status_code=202, response_model=m.Result, tags=["ingest"],
             summary="Queue messages for ingestion (one job per message, processed in order)")
async def add_messages(body: m.AddMessagesRequest, svc: Svc, who: Who) -> m.Result:
    who.require(body.group_id)
    _check_limits(svc, body.messages)
    payloads = [msg.to_payload() for msg in body.messages]  # one queued job = one message (spec 000 B.4)
    if payloads:
        await asyncio.to_thread(svc.queue.enqueue, body.group_id, payloads)
        svc.last_store_failure = None  # the store takes writes again
        svc.worker.wake()
    log.info("accepted %d message(s) for group=%s", len(payloads), body.group_id)
    return m.Result(message=QUEUED, success=True)


async def _default_groups(svc: Service, who: Principal) -> list[str]:
    if not who.admin:
        return sorted(who.groups)
    return list(await svc.memory.groups())


@router.post("/search", response_model=m.SearchResults, tags=["retrieve"])
async def search(body: m.SearchQuery, svc: Svc, who: Who) -> m.SearchResults:
    groups = list(dict.fromkeys(body.group_ids)) if body.group_ids is not None else await _default_groups(svc, who)
    who.require(groups)
    if not groups or not body.max_facts or not body.query.strip():
        return m.SearchResults(facts=[])
    res = await svc.memory.search(body.query, groups, limit=body.max_facts, include=["facts"], as_of=body.as_of,
                                  include_ended=body.include_ended, min_relevance=body.min_relevance)
    return m.SearchResults(facts=[fmt.fact_result(sf.fact) for sf in res.facts], below_floor=res.below_floor,
                           relevance=res.relevance)


@router.post("/get-memory", response_model=m.GetMemoryResponse, tags=["retrieve"],
             summary="Facts relevant to a conversation (optionally ranked around center_node_uuid)")
async def get_memory(body: m.GetMemoryRequest, svc: Svc, who: Who) -> m.GetMemoryResponse:
    who.require(body.group_id)
    query = memory_query(body.messages)
    if not body.max_facts or not query.strip():
        return m.GetMemoryResponse(facts=[])
    res = await svc.memory.search(query, [body.group_id], limit=body.max_facts, include=["facts"],
                                  center_node_id=body.center_node_uuid)
    return m.GetMemoryResponse(facts=[fmt.fact_result(sf.fact) for sf in res.facts])


def memory_query(messages: Sequence[Message]) -> str:
    """The search query of /get-memory, built like Graphiti's: one ``role_type(role): content`` line per message
    (the last QUERY_CHARS characters)."""
    text = "".join(f"{msg.role_type or ''}({msg.role or ''}): {msg.content}\n" for msg in messages)
    return text[-m.QUERY_CHARS:]


@router.get("/episodes/{group_id}", response_model=list[m.EpisodicNode], tags=["retrieve"],
            summary="The last episodes dated up to now (last_n clamped to 0..1000)")
async def get_episodes(group_id: GroupPath, svc: Svc, who: Who,
                       last_n: Annotated[int, Query(description="0 or less: none")] = 10) -> list[m.EpisodicNode]:
    who.require(group_id)
    n = min(last_n, MAX_EPISODES)
    if n <= 0:
        return []
    eps = await svc.memory.get_episodes(group_id, last_n=n, before=utcnow() + TICK)  # valid_at <= now, as Graphiti
    return [fmt.episodic_node(ep) for ep in eps]


@router.post("/entity-node", status_code=201, response_model=m.EntityNode, tags=["graph"])
async def add_entity_node(body: m.AddEntityNodeRequest, svc: Svc, who: Who) -> m.EntityNode:
    who.require(body.group_id)  # ids are per group: another group's entity with this uuid is another record
    ent = await svc.memory.add_entity(body.group_id, body.name, summary=body.summary, entity_id=body.uuid)
    return fmt.entity_node(ent)


@router.get("/entity-edge/{uuid}", response_model=m.FactResult, tags=["graph"])
async def get_entity_edge(uuid: IdPath, svc: Svc, who: Who) -> m.FactResult:
    gid = await readable_group_of(svc, who, "fact", uuid)
    return fmt.fact_result(await svc.memory.get_fact(gid, uuid))


@router.delete("/entity-edge/{uuid}", response_model=m.Result, tags=["graph"])
async def delete_entity_edge(uuid: IdPath, svc: Svc, who: Who) -> m.Result:
    gid = await readable_group_of(svc, who, "fact", uuid)
    await svc.memory.delete_fact(gid, uuid)
    return m.Result(message="Entity Edge deleted", success=True)


@router.delete("/episode/{uuid}", response_model=m.Result, tags=["graph"])
async def delete_episode(uuid: IdPath, svc: Svc, who: Who) -> m.Result:
    gid = await readable_group_of(svc, who, "episode", uuid)
    await svc.memory.delete_episode(gid, uuid)
    return m.Result(message="Episode deleted", success=True)


@router.delete("/group/{group_id}", response_model=m.Result, tags=["graph"])
async def delete_group(group_id: GroupPath, svc: Svc, who: Who) -> m.Result:
    who.require_destructive()
    who.require(group_id)
    cancelled = await asyncio.to_thread(svc.queue.cancel, group_id)
    counts = await svc.memory.delete_group(group_id)
    log.info("deleted group=%s: %s; %d queued job(s) cancelled", group_id, counts, cancelled)
    return m.Result(message="Group deleted", success=True)


@router.post("/clear", response_model=m.Result, tags=["admin"], summary="Delete every group's data (admin key)")
async def clear(svc: Svc, who: Who) -> m.Result:
    who.require_admin()
    cancelled = await asyncio.to_thread(svc.queue.cancel, None)
    counts = await svc.memory.clear()
    log.warning("cleared the whole graph: %s; %d queued job(s) cancelled", counts, cancelled)
    return m.Result(message="Graph cleared", success=True)


@router.get("/healthcheck", tags=["health"])
async def healthcheck() -> JSONResponse:
    return JSONResponse({"status": "healthy"})
