"""Document routes (spec 002) under ``/groups/{group_id}/collections``: collections, ingest text/URL, search,
collection-scoped relationship and timeline questions. The same facade as MCP; errors mapped by ``errors.py``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from loregraph.api.rest.deps import GroupPath, IdPath, Svc, Who
from loregraph.documents.pipeline import MAX_DOCUMENTS_PAGE
from loregraph.search.explore import MAX_OFFSET

router = APIRouter(prefix="/groups/{group_id}", tags=["documents"])



class CollectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=100)
    description: str = Field(min_length=1, max_length=2000)
    domain: str | None = None
    domain_scope: str | None = None
    metadata_schema: dict[str, Any] | None = None


class TextIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str = Field(min_length=1)
    title: str = Field(min_length=1, max_length=2048)
    metadata: dict[str, Any] | None = None
    mode: Literal["ingest", "reingest"] = "ingest"


class UrlIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=2048)
    follow_links: bool = False
    max_pages: int = Field(20, ge=1, le=200)
    max_depth: int | None = Field(None, ge=0, le=10)
    mode: Literal["ingest", "reingest"] = "ingest"


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=4096)
    limit: int = Field(5, ge=1, le=50)
    threshold: float = Field(0.35, ge=-1, le=1)
    hybrid: bool = False


class QueryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=4096)
    num_results: int = Field(5, ge=1, le=50)
    threshold: float = Field(0.35, ge=-1, le=1)
    valid_from: datetime | None = None
    valid_until: datetime | None = None


@router.post("/collections", status_code=201)
async def create_collection(group_id: GroupPath, body: CollectionIn, svc: Svc, who: Who) -> dict[str, Any]:
    who.require(group_id)
    c = await svc.memory.create_collection(group_id, body.name, body.description, domain=body.domain,
                                           domain_scope=body.domain_scope, metadata_schema=body.metadata_schema)
    return {"collection_id": c.id, "name": c.name, "description": c.description, "metadata_schema": c.metadata_schema}


@router.get("/collections")
async def list_collections(group_id: GroupPath, svc: Svc, who: Who) -> list[dict[str, Any]]:
    who.require(group_id)
    return [{"name": c.name, "description": c.description, "domain": c.domain, "documents": n,
             "metadata_schema": c.metadata_schema} for c, n in await svc.memory.list_collections(group_id)]


@router.delete("/collections/{name}")
async def delete_collection(group_id: GroupPath, name: IdPath, svc: Svc, who: Who) -> dict[str, int]:
    who.require(group_id)
    return await svc.memory.delete_collection(group_id, name)


@router.post("/collections/{name}/documents", status_code=201)
async def ingest_text(group_id: GroupPath, name: IdPath, body: TextIn, svc: Svc, who: Who) -> dict[str, Any]:
    who.require(group_id)
    r = await svc.memory.ingest_text(group_id, body.content, name, body.title, metadata=body.metadata, mode=body.mode)
    return {"document_id": r.document_id, "num_chunks": r.num_chunks, "entities_extracted": r.entities_extracted,
            "facts_extracted": r.facts_extracted, "replaced": r.replaced}


@router.post("/collections/{name}/urls", status_code=201)
async def ingest_url(group_id: GroupPath, name: IdPath, body: UrlIn, svc: Svc, who: Who) -> dict[str, Any]:
    who.require(group_id)
    return await svc.memory.ingest_url(group_id, body.url, name, follow_links=body.follow_links,
                                       max_pages=body.max_pages, max_depth=body.max_depth, mode=body.mode)


@router.get("/collections/{name}/documents")
async def list_documents(group_id: GroupPath, name: IdPath, svc: Svc, who: Who,
                         limit: Annotated[int, Query(ge=1, le=MAX_DOCUMENTS_PAGE)] = 50,
                         offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0) -> list[dict[str, Any]]:
    who.require(group_id)
    return [{"document_id": d.id, "title": d.title, "source": d.source, "chunks": d.chunk_count, "chars": d.chars,
             "metadata": d.metadata, "created_at": d.created_at}
            for d in await svc.memory.list_documents(group_id, name, limit=limit, offset=offset)]


@router.delete("/documents/{document_id}")
async def delete_document(group_id: GroupPath, document_id: IdPath, svc: Svc, who: Who) -> dict[str, int]:
    who.require(group_id)
    return await svc.memory.delete_document(group_id, document_id)


@router.post("/collections/{name}/search")
async def search_documents(group_id: GroupPath, name: IdPath, body: SearchIn, svc: Svc,
                           who: Who) -> list[dict[str, Any]]:
    who.require(group_id)
    hits = await svc.memory.search_documents(group_id, body.query, name, limit=body.limit, threshold=body.threshold,
                                             hybrid=body.hybrid)
    return [h.__dict__ for h in hits]


@router.post("/collections/{name}/relationships")
async def query_relationships(group_id: GroupPath, name: IdPath, body: QueryIn, svc: Svc,
                              who: Who) -> list[dict[str, Any]]:
    who.require(group_id)
    from dataclasses import asdict

    hits = await svc.memory.query_relationships(group_id, body.query, name, num_results=body.num_results,
                                                threshold=body.threshold)
    return [asdict(h) for h in hits]


@router.post("/collections/{name}/timeline")
async def query_temporal(group_id: GroupPath, name: IdPath, body: QueryIn, svc: Svc, who: Who) -> list[dict[str, Any]]:
    who.require(group_id)
    from dataclasses import asdict

    hits = await svc.memory.query_temporal(group_id, body.query, name, valid_from=body.valid_from,
                                           valid_until=body.valid_until, num_results=body.num_results)
    return [asdict(h) for h in hits]
