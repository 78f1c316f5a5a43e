"""The graph explorer: the page at ``/ui`` (static files, vendored Cytoscape.js) and the JSON routes it reads,
all scoped to one group and bounded (pages and neighbourhoods, never the whole graph)."""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, FastAPI, Query
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import AfterValidator, StringConstraints

from loregraph.api.rest import models as m
from loregraph.api.rest.deps import GroupPath, IdPath, Svc, Who
from loregraph.graph.messages import valid_text, valid_time
from loregraph.graph.types import Community, Entity, Fact
from loregraph.search.explore import MAX_NODES, MAX_OFFSET, GraphPiece

router = APIRouter(prefix="/groups/{group_id}")
STATIC = Path(str(resources.files("loregraph.api.rest") / "ui" / "static"))

AsOf = Annotated[datetime | None, Query(description="The graph as it was at this time (ISO-8601); default: now"),
                 AfterValidator(lambda v: valid_time(v) if v is not None else None)]
Limit = Annotated[int, Query(ge=1, le=MAX_NODES)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
EntityId = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(valid_text)]
EntityIds = Annotated[list[EntityId], Query(min_length=1, max_length=20, description="Entity ids (1-20)")]


def community(c: Community) -> m.Community:
    return m.Community(uuid=c.id, group_id=c.group_id, name=c.name, summary=c.summary, member_ids=list(c.member_ids),
                       created_at=c.created_at, updated_at=c.updated_at)


def _node(e: Entity, piece: GraphPiece) -> m.GraphNode:
    cid = piece.communities.get(e.id)
    return m.GraphNode(id=e.id, name=e.name, type=e.type, summary=e.summary, aliases=list(e.aliases),
                       community_id=cid, community=piece.community_names.get(cid) if cid else None)


def _edge(f: Fact) -> m.GraphEdge:
    return m.GraphEdge(id=f.id, source=f.source_id, target=f.target_id, type=f.type, fact=f.fact,
                       valid_at=f.valid_at, invalid_at=f.invalid_at, current=f.is_current())


def piece_body(piece: GraphPiece) -> m.GraphPiece:
    return m.GraphPiece(nodes=[_node(e, piece) for e in piece.entities], edges=[_edge(f) for f in piece.facts],
                        more=piece.more, time_min=piece.time_min, time_max=piece.time_max)


@router.get("/communities", response_model=list[m.Community], tags=["communities"],
            summary="The group's communities, largest first, with their members")
async def list_communities(group_id: GroupPath, svc: Svc, who: Who, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                           offset: Offset = 0) -> list[m.Community]:
    who.require(group_id)
    return [community(c) for c in await svc.memory.communities(group_id, limit=limit, offset=offset)]


@router.post("/communities/build", response_model=m.CommunityBuild, tags=["communities"],
             summary="Rebuild the group's communities from its current facts")
async def build_communities(group_id: GroupPath, svc: Svc, who: Who) -> m.CommunityBuild:
    who.require(group_id)
    report = await svc.memory.build_communities(group_id)
    return m.CommunityBuild(**report.as_dict())


@router.get("/explore/graph", response_model=m.GraphPiece, tags=["explore"],
            summary="A page of the group's entities and the facts among them")
async def graph_page(group_id: GroupPath, svc: Svc, who: Who, as_of: AsOf = None, limit: Limit = 100,
                     offset: Offset = 0) -> m.GraphPiece:
    who.require(group_id)
    return piece_body(await svc.memory.graph_page(group_id, as_of=as_of, limit=limit, offset=offset))


@router.get("/explore/neighbourhood", response_model=m.GraphPiece, tags=["explore"],
            summary="Entities and their neighbours by facts valid at as_of")
async def neighbourhood(group_id: GroupPath, svc: Svc, who: Who, entity_id: EntityIds, as_of: AsOf = None,
                        limit: Annotated[int, Query(ge=1, le=MAX_NODES)] = 50) -> m.GraphPiece:
    who.require(group_id)
    return piece_body(await svc.memory.graph_neighbourhood(group_id, entity_id, as_of=as_of, limit=limit))


@router.get("/explore/facts", response_model=list[m.GraphEdge], tags=["explore"],
            summary="Facts touching any of the entities, valid at as_of (the edges to draw at that time)")
async def explore_facts(group_id: GroupPath, svc: Svc, who: Who,
                        entity_id: Annotated[list[EntityId], Query(min_length=1, max_length=50,
                                                              description="Entity ids (1-50)")],
                        as_of: AsOf = None) -> list[m.GraphEdge]:
    who.require(group_id)
    facts = await svc.memory.graph_facts(group_id, entity_id, as_of=as_of)
    return [_edge(f) for f in facts]


@router.get("/explore/search", response_model=m.ExploreHits, tags=["explore"],
            summary="Hybrid search; the hits and their neighbourhood")
async def explore_search(group_id: GroupPath, svc: Svc, who: Who,
                         q: Annotated[str, Query(min_length=1, max_length=512), AfterValidator(valid_text)],
                         as_of: AsOf = None, limit: Annotated[int, Query(ge=1, le=20)] = 5) -> m.ExploreHits:
    who.require(group_id)
    res = await svc.memory.search(q, group_id, limit=limit, as_of=as_of, include=["entities", "facts"],
                                  neighbours=0)
    ids = [e.entity.id for e in res.entities]
    for f in res.facts:
        ids += [f.fact.source_id, f.fact.target_id]
    ids = list(dict.fromkeys(ids))[:20]
    if not ids:
        return m.ExploreHits(entity_ids=[], fact_ids=[], piece=m.GraphPiece(nodes=[], edges=[], more=False))
    piece = await svc.memory.graph_neighbourhood(group_id, ids, as_of=as_of, limit=50)
    return m.ExploreHits(entity_ids=[e.entity.id for e in res.entities] or ids, fact_ids=[f.fact.id for f in res.facts],
                         piece=piece_body(piece))


@router.get("/explore/entities/{entity_id}/timeline", response_model=m.Timeline, tags=["explore"],
            summary="Every fact of one entity, current and ended, in the order they became true")
async def timeline(group_id: GroupPath, entity_id: IdPath, svc: Svc, who: Who,
                   limit: Annotated[int, Query(ge=1, le=1000)] = 200) -> m.Timeline:
    who.require(group_id)
    ent, facts, names = await svc.memory.entity_timeline(group_id, entity_id, limit=limit)
    piece = await svc.memory.graph_neighbourhood(group_id, [entity_id], limit=1)
    out = []
    for f in facts:
        other = f.target_id if f.source_id == entity_id else f.source_id
        out.append(m.TimelineFact(**_edge(f).model_dump(), other_id=other, other_name=names.get(other, ""),
                                  created_at=f.created_at, expired_at=f.expired_at))
    return m.Timeline(entity=_node(ent, piece), facts=out)


def mount_ui(app: FastAPI) -> None:
    """``/ui``: the explorer page; ``/ui/static``: its script, style and the vendored Cytoscape.js."""
    app.mount("/ui/static", StaticFiles(directory=str(STATIC)), name="ui-static")

    @app.get("/ui", include_in_schema=False)
    async def ui() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")


__all__ = ["mount_ui", "router"]
