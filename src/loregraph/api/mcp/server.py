"""MCP tools over one ``Memory``: memory (add_messages, search_memory, query_graph, explain, get_episodes,
delete_episode) and documents (collections, ingest_text/ingest_url, analyze_website, search_documents,
query_relationships, query_temporal, list_documents, delete_document).

Every tool names its group; the caller's principal must hold it (stdio: the groups configured for the local user;
HTTP: the API key's groups, as in REST). Results are bounded (never a whole graph). loregraph's errors are mapped
here, once, to tool errors whose text names the field and the rule."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from loregraph.api.rest.auth import KeyRing, Principal
from loregraph.config import Settings
from loregraph.errors import (
    ConflictError,
    InvalidInputError,
    LoregraphError,
    NotFoundError,
    StoreBusyError,
    StoreError,
    lock_timeout_error,
)
from loregraph.graph.messages import Message
from loregraph.graph.types import Entity, Episode, Fact
from loregraph.memory import Memory
from loregraph.search.explore import MAX_OFFSET

log = logging.getLogger("loregraph.mcp")
T = TypeVar("T")

MAX_ITEMS = 50
MAX_TEXT = 2000
INSTRUCTIONS = """loregraph: temporal knowledge-graph memory and document (RAG) memory. Every tool takes a group_id
(the user or tenant whose memory it is). Store conversation turns with add_messages; answer questions with
search_memory (hybrid) or query_graph (relationships). Documents live in collections: create_collection once,
then ingest_text / ingest_url, and search_documents for passages; query_relationships and query_temporal answer
graph questions limited to one collection. explain tells where a fact or entity came from."""

GroupId = Annotated[str, Field(description="The group (user or tenant) whose memory this is, e.g. 'alice'")]
CollectionName = Annotated[str, Field(description="A collection of this group (see list_collections)")]


def _clip(text: str, n: int = MAX_TEXT) -> str:
    return text if len(text) <= n else text[:n] + "…"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _fact(f: Fact, source: str = "", target: str = "") -> dict[str, Any]:
    return {"id": f.id, "type": f.type, "fact": f.fact, "source_id": f.source_id, "source": source,
            "target_id": f.target_id, "target": target, "valid_at": _iso(f.valid_at),
            "invalid_at": _iso(f.invalid_at), "expired_at": _iso(f.expired_at), "episodes": f.episodes[:10]}


def _entity(e: Entity) -> dict[str, Any]:
    return {"id": e.id, "name": e.name, "type": e.type, "aliases": e.aliases[:10], "summary": _clip(e.summary, 500)}


def _episode(ep: Episode) -> dict[str, Any]:
    return {"id": ep.id, "name": ep.name, "source": ep.source, "source_description": ep.source_description,
            "role": ep.role, "role_type": ep.role_type, "valid_at": _iso(ep.valid_at), "content": _clip(ep.content)}


class Tools:
    """The tool bodies: who may act (a principal per call) and error mapping around the facade."""

    def __init__(self, memory: Callable[[], Memory], *, keyring: KeyRing | None, local: Principal):
        self._memory = memory
        self.keyring = keyring
        self.local = local

    def principal(self, headers: Any) -> Principal:
        """stdio: the local principal. HTTP: the API key in the request's headers (as REST reads it)."""
        if self.keyring is None:
            return self.local
        presented = None
        if headers is not None:
            auth = headers.get("authorization") or ""
            presented = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get("x-api-key")
        who = self.keyring.authenticate(presented)
        if who is None:
            raise PermissionError("unauthorized: missing or unknown API key")
        return who

    async def run(self, name: str, headers: Any, group_id: str,
                  body: Callable[[Memory], Awaitable[T]]) -> T:
        t0 = time.perf_counter()
        try:
            who = self.principal(headers)
            if not isinstance(group_id, str) or not who.can(group_id):
                log.warning("mcp: %s refused: principal %r asked for a group outside its scope", name, who.name)
                raise PermissionError(f"forbidden: this client may not access group {group_id!r}")
            result = await body(self._memory())
        except PermissionError as exc:
            raise ToolError(str(exc)) from None
        except InvalidInputError as exc:
            raise ToolError(f"invalid input: {exc}") from None
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}"
                                 for e in exc.errors(include_input=False, include_url=False))
            raise ToolError(f"invalid input: {problems}") from None
        except NotFoundError as exc:
            raise ToolError(f"not found: {exc}") from None
        except ConflictError as exc:
            raise ToolError(f"conflict: {exc}") from None
        except StoreBusyError as exc:
            log.warning("mcp: %s: a lock wait timed out (%s)", name, type(exc.__cause__ or exc).__name__)
            raise ToolError(StoreBusyError.PUBLIC_MESSAGE) from None
        except StoreError as exc:
            log.error("mcp: %s: store error %s", name, type(exc).__name__)
            raise ToolError("the store is unavailable; try again later") from None
        except LoregraphError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:
            if lock_timeout_error(exc) is not None:
                log.warning("mcp: %s: a lock wait timed out (%s)", name, type(exc).__name__)
                raise ToolError(StoreBusyError.PUBLIC_MESSAGE) from None
            log.exception("mcp: %s failed", name)
            raise ToolError(f"{name} failed on the server (logged); nothing was written") from None
        log.info("mcp: %s group=%s in %.1f ms", name, group_id, (time.perf_counter() - t0) * 1e3)
        return result


def build_server(memory: Callable[[], Memory], *, keyring: KeyRing | None = None,
                 local: Principal | None = None) -> MCPServer:
    """An ``MCPServer`` with every tool. ``keyring``: HTTP (each call authenticated by its API key); without it,
    stdio as ``local`` (default: every group)."""
    tools = Tools(memory, keyring=keyring, local=local or Principal("local user", True, frozenset()))
    server = MCPServer("loregraph", instructions=INSTRUCTIONS, version="0.1.0")
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    destructive = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)

    def headers(ctx: Context) -> Any:
        return ctx.headers

    async def progress_of(ctx: Context) -> Callable[[int, int, str], Awaitable[None]]:
        async def report(done: int, total: int, message: str) -> None:
            try:
                await ctx.report_progress(done, total, message)
            except Exception:  # a client that went away does not fail the write
                log.debug("progress notification not delivered")
        return report

    # ---- memory ---------------------------------------------------------------------------------
    @server.tool(description="Store conversation messages in a group's memory, in order; entities and facts are "
                             "extracted from each (one transaction per message). At most 50 messages per call.")
    async def add_messages(
            group_id: GroupId,
            messages: Annotated[list[dict[str, Any]], Field(
                description="Messages: {content, role_type: user|assistant|system, role?: speaker name, name?, "
                            "timestamp?: ISO-8601, source_description?}", max_length=MAX_ITEMS)],
            ctx: Context) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            msgs = [Message.model_validate(x) for x in messages]
            results = await m.add_messages(group_id, msgs)
            return {"episodes": [{"episode_id": r.episode.id, "entities": len(r.entities), "facts": len(r.facts),
                                  "invalidated": len(r.invalidated)} for r in results]}
        return await tools.run("add_messages", headers(ctx), group_id, body)

    @server.tool(description="Hybrid search (keywords, meaning, graph, time) over a group's memory: facts, "
                             "entities and source messages that answer the query, best first.",
                 annotations=read_only)
    async def search_memory(group_id: GroupId, query: Annotated[str, Field(description="A question or keywords")],
                            ctx: Context,
                            limit: Annotated[int, Field(ge=1, le=MAX_ITEMS, description="Results per kind")] = 10,
                            as_of: Annotated[datetime | None, Field(description="Answer as of this time")] = None,
                            min_relevance: Annotated[float | None, Field(
                                ge=0.0, le=1.0, description="Relevance floor (cosine of the query to its closest "
                                                            "match); default: the server's; 0: none")] = None,
                            ) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            res = await m.search(query, [group_id], limit=limit, as_of=as_of, min_relevance=min_relevance)
            found: dict[str, Any] = {"found": not res.is_empty(), "below_floor": res.below_floor,
                                     "relevance": res.relevance}
            if res.below_floor:
                found["message"] = (f"No relevant memory found: nothing cleared the relevance floor "
                                    f"{res.min_relevance:.2f} (closest match {res.relevance:.2f}).")
            elif res.is_empty():
                found["message"] = "No relevant memory found."
            return {**found, "facts": [{**_fact(f.fact, f.source_name, f.target_name), "score": round(f.score, 4)}
                              for f in res.facts[:limit]],
                    "entities": [{**_entity(e.entity), "score": round(e.score, 4)} for e in res.entities[:limit]],
                    "episodes": [{**_episode(e.episode), "score": round(e.score, 4)} for e in res.episodes[:limit]]}
        return await tools.run("search_memory", headers(ctx), group_id, body)

    @server.tool(description="Answer a relationship question from a group's knowledge graph ('What tools do I "
                             "use?'), each relationship with the messages it came from.", annotations=read_only)
    async def query_graph(group_id: GroupId, query: str, ctx: Context,
                          entity_type: Annotated[str | None, Field(description="e.g. tool, person, project")] = None,
                          relationship_type: Annotated[str | None, Field(description="e.g. USES, WORKS_ON")] = None,
                          limit: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 25) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            a = await m.query_graph(query, group_id, entity_type=entity_type, relationship_type=relationship_type,
                                    limit=limit)
            return {"found": a.found, "message": a.message,
                    "relationships": [{**_fact(r.fact, r.source.name, r.target.name),
                                       "sources": [p.message_name or p.episode_id for p in r.provenance[:5]]}
                                      for r in a.relationships[:limit]],
                    "entities": [_entity(e) for e in a.entities[:limit]]}
        return await tools.run("query_graph", headers(ctx), group_id, body)

    @server.tool(description="Where an entity or fact came from: the messages or document chunks that support it.",
                 annotations=read_only)
    async def explain(group_id: GroupId, record_id: Annotated[str, Field(description="An entity or fact id")],
                      ctx: Context) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            x = await m.explain(group_id, record_id)
            rec = _fact(x.record) if isinstance(x.record, Fact) else _entity(x.record)
            return {"kind": x.kind, "record": rec,
                    "sources": [{"episode_id": p.episode_id, "name": p.message_name,
                                 "source_description": p.source_description, "valid_at": _iso(p.valid_at),
                                 "content": _clip(p.content, 500)} for p in x.sources[:20]],
                    "more_sources": max(0, len(x.sources) - 20)}
        return await tools.run("explain", headers(ctx), group_id, body)

    @server.tool(description="The group's most recent episodes (messages and document chunks), oldest first.",
                 annotations=read_only)
    async def get_episodes(group_id: GroupId, ctx: Context,
                           last_n: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 10) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            return {"episodes": [_episode(e) for e in await m.get_episodes(group_id, last_n=last_n)]}
        return await tools.run("get_episodes", headers(ctx), group_id, body)

    @server.tool(description="Delete an episode and the facts and entities only it supported.",
                 annotations=destructive)
    async def delete_episode(group_id: GroupId, episode_id: str, ctx: Context) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            return {"deleted": await m.delete_episode(group_id, episode_id)}
        return await tools.run("delete_episode", headers(ctx), group_id, body)

    # ---- documents ------------------------------------------------------------------------------
    @server.tool(description="Create a document collection in a group. Names are unique per group; the "
                             "description is required. metadata_schema: {\"custom\": {field: type or {type, "
                             "required?, enum?}}, \"system\": [source_url, crawled_at, ...]}; types: string, "
                             "number, integer, boolean, array, object.")
    async def create_collection(group_id: GroupId, name: str,
                                description: Annotated[str, Field(description="What the collection holds")],
                                ctx: Context, domain: str | None = None, domain_scope: str | None = None,
                                metadata_schema: dict[str, Any] | None = None) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            c = await m.create_collection(group_id, name, description, domain=domain, domain_scope=domain_scope,
                                          metadata_schema=metadata_schema)
            return {"collection_id": c.id, "name": c.name, "description": c.description,
                    "metadata_schema": c.metadata_schema}
        return await tools.run("create_collection", headers(ctx), group_id, body)

    @server.tool(description="The group's document collections with their document counts.", annotations=read_only)
    async def list_collections(group_id: GroupId, ctx: Context) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            cols = await m.list_collections(group_id)
            return {"collections": [{"name": c.name, "description": c.description, "domain": c.domain,
                                     "documents": n, "metadata_schema": c.metadata_schema} for c, n in cols[:200]]}
        return await tools.run("list_collections", headers(ctx), group_id, body)

    @server.tool(description="Add a text document to a collection: chunked (~1000 characters), embedded, and "
                             "entities/facts extracted, all in one transaction. A title the collection has already "
                             "is an error in mode 'ingest'; mode 'reingest' replaces that document.")
    async def ingest_text(group_id: GroupId, content: str, collection: CollectionName,
                          title: Annotated[str, Field(description="Unique within the collection")], ctx: Context,
                          metadata: Annotated[dict[str, Any] | None, Field(
                              description="Checked against the collection's metadata_schema")] = None,
                          mode: Literal["ingest", "reingest"] = "ingest") -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            r = await m.ingest_text(group_id, content, collection, title, metadata=metadata, mode=mode,
                                    progress=await progress_of(ctx))
            return {"document_id": r.document_id, "title": r.title, "num_chunks": r.num_chunks,
                    "entities_extracted": r.entities_extracted, "facts_extracted": r.facts_extracted,
                    "replaced": r.replaced}
        return await tools.run("ingest_text", headers(ctx), group_id, body)

    @server.tool(description="Fetch a web page (and, with follow_links, same-site pages it links to) and ingest "
                             "each page's main content as a document titled by its URL. robots.txt is honoured; "
                             "private and loopback addresses are refused; an identical request that is still "
                             "running is refused. Progress is reported per page.")
    async def ingest_url(group_id: GroupId, url: str, collection: CollectionName, ctx: Context,
                         follow_links: bool = False,
                         max_pages: Annotated[int, Field(ge=1, le=200)] = 20,
                         max_depth: Annotated[int | None, Field(ge=0, le=10)] = None,
                         mode: Literal["ingest", "reingest"] = "ingest") -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            out = await m.ingest_url(group_id, url, collection, follow_links=follow_links, max_pages=max_pages,
                                     max_depth=max_depth, mode=mode, progress=await progress_of(ctx))
            return {**out, "documents": out["documents"][:MAX_ITEMS], "skipped": out["skipped"][:MAX_ITEMS]}
        return await tools.run("ingest_url", headers(ctx), group_id, body)

    @server.tool(description="Plan a crawl: the site's sitemap URLs counted and grouped by path pattern, and the "
                             "paths robots.txt disallows. Fetches nothing else.", annotations=read_only)
    async def analyze_website(group_id: GroupId, url: str, ctx: Context) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            a = await m.analyze_website(url)
            return {"url": a.url, "total_urls": a.total_urls, "pattern_stats": a.pattern_stats,
                    "sample_urls": a.sample_urls, "sitemaps": a.sitemap_urls[:10],
                    "robots_disallowed": a.robots_disallowed[:MAX_ITEMS], "notes": a.notes}
        return await tools.run("analyze_website", headers(ctx), group_id, body)

    @server.tool(description="Passages of a collection's documents most similar in meaning to the query (cosine "
                             "similarity at least threshold), highest first, each with its document title, source "
                             "and metadata. hybrid=true also ranks by keywords (BM25).", annotations=read_only)
    async def search_documents(group_id: GroupId, query: str, collection: CollectionName, ctx: Context,
                               limit: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 5,
                               threshold: Annotated[float, Field(ge=-1, le=1)] = 0.35,
                               hybrid: bool = False) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            hits = await m.search_documents(group_id, query, collection, limit=limit, threshold=threshold,
                                            hybrid=hybrid)
            return {"results": [{"content": _clip(h.content), "similarity": h.similarity, "title": h.title,
                                 "source": h.source, "metadata": h.metadata, "document_id": h.document_id,
                                 "chunk_id": h.chunk_id, "chunk_index": h.ordinal} for h in hits]}
        return await tools.run("search_documents", headers(ctx), group_id, body)

    @server.tool(description="Relationships between entities the query names, from one collection's documents, "
                             "ranked by relevance to the query, with validity dates and source document titles.",
                 annotations=read_only)
    async def query_relationships(group_id: GroupId, query: str, collection: CollectionName, ctx: Context,
                                  num_results: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 5,
                                  threshold: Annotated[float, Field(ge=-1, le=1)] = 0.35) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            hits = await m.query_relationships(group_id, query, collection, num_results=num_results,
                                               threshold=threshold)
            return {"relationships": [
                {"relationship_type": h.relationship_type, "fact": h.fact, "source": h.source.name,
                 "target": h.target.name, "valid_from": _iso(h.valid_from), "valid_until": _iso(h.valid_until),
                 "score": h.score, "documents": h.documents[:10], "fact_id": h.fact_id} for h in hits]}
        return await tools.run("query_relationships", headers(ctx), group_id, body)

    @server.tool(description="How knowledge about the query changed over time in one collection: matching facts "
                             "with valid_from/valid_until and status current or superseded, most recent first.",
                 annotations=read_only)
    async def query_temporal(group_id: GroupId, query: str, collection: CollectionName, ctx: Context,
                             valid_from: datetime | None = None, valid_until: datetime | None = None,
                             num_results: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 10) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            hits = await m.query_temporal(group_id, query, collection, valid_from=valid_from,
                                          valid_until=valid_until, num_results=num_results)
            return {"timeline": [
                {"fact": h.fact, "relationship_type": h.relationship_type, "source": h.source.name,
                 "target": h.target.name, "valid_from": _iso(h.valid_from), "valid_until": _iso(h.valid_until),
                 "status": h.status, "documents": h.documents[:10], "fact_id": h.fact_id} for h in hits]}
        return await tools.run("query_temporal", headers(ctx), group_id, body)

    @server.tool(description="Documents of a collection, oldest first (paged).", annotations=read_only)
    async def list_documents(group_id: GroupId, collection: CollectionName, ctx: Context,
                             limit: Annotated[int, Field(ge=1, le=MAX_ITEMS)] = 20,
                             offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            docs = await m.list_documents(group_id, collection, limit=limit, offset=offset)
            return {"documents": [{"document_id": d.id, "title": d.title, "source": d.source,
                                   "chunks": d.chunk_count, "chars": d.chars, "metadata": d.metadata,
                                   "created_at": _iso(d.created_at)} for d in docs]}
        return await tools.run("list_documents", headers(ctx), group_id, body)

    @server.tool(description="Delete a document, its chunks and the facts and entities only it supported.",
                 annotations=destructive)
    async def delete_document(group_id: GroupId, document_id: str, ctx: Context) -> dict[str, Any]:
        async def body(m: Memory) -> dict[str, Any]:
            return {"deleted": await m.delete_document(group_id, document_id)}
        return await tools.run("delete_document", headers(ctx), group_id, body)

    return server


def stdio_server(memory: Memory, settings: Settings) -> MCPServer:
    """The stdio server: the local user on ``settings.mcp_groups`` (every group when empty)."""
    groups = frozenset(settings.mcp_groups)
    local = Principal("local user", not groups, groups)
    return build_server(lambda: memory, local=local)


TOOL_NAMES = ("add_messages", "search_memory", "query_graph", "explain", "get_episodes", "delete_episode",
              "create_collection", "list_collections", "ingest_text", "ingest_url", "analyze_website",
              "search_documents", "query_relationships", "query_temporal", "list_documents", "delete_document")

__all__ = ["TOOL_NAMES", "Tools", "build_server", "stdio_server"]
