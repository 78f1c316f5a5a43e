"""loregraph's own routes: entity and fact lookup, query_graph, explain, the durable queue, health."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import AfterValidator

from loregraph.api.rest import format as fmt
from loregraph.api.rest import models as m
from loregraph.api.rest.deps import GroupPath, IdPath, Svc, Who
from loregraph.graph.messages import valid_time

log = logging.getLogger("loregraph.api")
router = APIRouter(prefix="/groups/{group_id}")
health_router = APIRouter()

HEALTH_TIMEOUT_S = 10.0
AsOf = Annotated[datetime | None, Query(description="Facts true at this time (ISO-8601)"),
                 AfterValidator(lambda v: valid_time(v) if v is not None else None)]


@router.get("/entities", response_model=list[m.Entity], tags=["graph"])
async def list_entities(group_id: GroupPath, svc: Svc, who: Who,
                        entity_type: Annotated[str | None, Query(max_length=64)] = None,
                        limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[m.Entity]:
    who.require(group_id)
    ents = await svc.memory.list_entities(group_id, entity_type=entity_type, limit=limit)
    return [fmt.entity(e) for e in ents]


@router.get("/entities/{entity_id}", response_model=m.Entity, tags=["graph"])
async def get_entity(group_id: GroupPath, entity_id: IdPath, svc: Svc, who: Who) -> m.Entity:
    who.require(group_id)
    return fmt.entity(await svc.memory.get_entity(group_id, entity_id))


@router.get("/facts", response_model=list[m.Fact], tags=["graph"])
async def list_facts(group_id: GroupPath, svc: Svc, who: Who, as_of: AsOf = None,
                     current: Annotated[bool, Query(description="false: every fact ever")] = True,
                     limit: Annotated[int, Query(ge=1, le=10000)] = 1000) -> list[m.Fact]:
    who.require(group_id)
    facts = await svc.memory.list_facts(group_id, current=current, as_of=as_of, limit=limit)
    return [fmt.fact(f) for f in facts]


@router.get("/facts/{fact_id}", response_model=m.Fact, tags=["graph"])
async def get_fact(group_id: GroupPath, fact_id: IdPath, svc: Svc, who: Who) -> m.Fact:
    who.require(group_id)
    return fmt.fact(await svc.memory.get_fact(group_id, fact_id))


@router.post("/query-graph", response_model=m.GraphAnswer, tags=["retrieve"],
             summary="Relationship question over the group's graph; each relationship carries its messages")
async def query_graph(group_id: GroupPath, body: m.QueryGraphRequest, svc: Svc, who: Who) -> m.GraphAnswer:
    who.require(group_id)
    answer = await svc.memory.query_graph(body.query, group_id, entity_type=body.entity_type,
                                          relationship_type=body.relationship_type, limit=body.limit)
    return fmt.graph_answer(answer)


@router.get("/explain/{record_id}", response_model=m.Explanation, tags=["retrieve"],
            summary="The messages an entity or fact came from")
async def explain(group_id: GroupPath, record_id: IdPath, svc: Svc, who: Who) -> m.Explanation:
    who.require(group_id)
    return fmt.explanation(await svc.memory.explain(group_id, record_id))


@router.get("/queue", response_model=m.QueueStatus, tags=["queue"])
async def queue_status(group_id: GroupPath, svc: Svc, who: Who) -> m.QueueStatus:
    who.require(group_id)
    counts = await asyncio.to_thread(svc.queue.counts, group_id)
    failed = await asyncio.to_thread(svc.queue.failed_jobs, group_id)
    return m.QueueStatus(group_id=group_id, **counts, failed_jobs=[
        m.FailedJob(id=j.id, attempts=j.attempts, error=j.error, created_at=j.created_at, finished_at=j.finished_at)
        for j in failed])


@router.post("/queue/retry", response_model=m.RetryResult, tags=["queue"], summary="Queue the failed jobs again")
async def retry_failed(group_id: GroupPath, svc: Svc, who: Who) -> m.RetryResult:
    who.require(group_id)
    n = await asyncio.to_thread(svc.queue.retry_failed, group_id)
    if n:
        svc.worker.wake()
    log.info("group=%s: %d failed job(s) queued again", group_id, n)
    return m.RetryResult(group_id=group_id, retried=n)


@health_router.get("/health", response_model=m.Health, tags=["health"],
                   responses={503: {"model": m.Health, "description": "the store does not answer"}})
async def health(request: Request) -> JSONResponse:
    svc = getattr(request.app.state, "services", None)
    if svc is None:
        return JSONResponse({"status": "unavailable"}, status_code=503)
    try:
        await asyncio.wait_for(svc.memory.ping(), HEALTH_TIMEOUT_S)
    except Exception as exc:
        log.error("health: the store does not answer (%s)", type(exc).__name__)
        return JSONResponse({"status": "unavailable"}, status_code=503)
    if svc.degraded:
        return JSONResponse({"status": "degraded", "detail": "the store cannot be written (disk full, read-only or "
                                                             "unreachable); accepted messages wait and are retried",
                             "schema_version": svc.schema_version, "worker": svc.worker.running}, status_code=503)
    return JSONResponse({"status": "ok", "schema_version": svc.schema_version, "worker": svc.worker.running})
