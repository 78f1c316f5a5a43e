"""The Memory facade: the one Python API every interface (CLI, REST, MCP, gRPC) calls.

    async with await Memory.open("sqlite:///memory.db") as m:
        await m.add_messages("alice", [{"content": "I use FastAPI", "role_type": "user"}])
        results = await m.search("what does alice use?", group_ids=["alice"])

All store work runs on one dedicated thread, so the event loop is never blocked and the SQLite
connection is only ever used from that thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loregraph.extract.base import Extractor
from loregraph.graph.types import Entity, Episode, Fact, GraphDelta, as_utc, utcnow, validate_group_id
from loregraph.ingest.pipeline import AddEpisodeResult, EpisodeRequest, IngestPipeline, RateLimits
from loregraph.schema import Schema
from loregraph.search.graph import Explanation, GraphAnswer, GraphQuery
from loregraph.search.hybrid import HybridSearch, SearchFilters, SearchRequest, SearchResults
from loregraph.store import NotFoundError, Store, open_store

log = logging.getLogger("loregraph")
T = TypeVar("T")


class Message(BaseModel):
    """One conversational message (spec 000 message object)."""

    model_config = ConfigDict(extra="forbid")
    content: str
    uuid: str | None = None
    name: str = ""
    role_type: Literal["user", "assistant", "system"]
    role: str | None = None
    timestamp: datetime = Field(default_factory=utcnow)
    source_description: str = ""

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        return as_utc(v)


class Memory:
    def __init__(self, store: Store, schema: Schema, embedder: Any, extractor: Extractor,
                 limits: RateLimits | None = None):
        self.store = store
        self.schema = schema
        self.embedder = embedder
        self.extractor = extractor
        # writes run one at a time on the store thread; reads too, unless the store takes concurrent readers
        # (PostgreSQL: one per pooled connection)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loregraph-store")
        readers = int(getattr(store, "concurrent_readers", 1))
        self._read_executor = (self._executor if readers <= 1 else
                               ThreadPoolExecutor(max_workers=readers, thread_name_prefix="loregraph-read"))
        self.pipeline = IngestPipeline(store, schema, embedder, extractor, limits)
        self.graph = GraphQuery(store, schema, embedder)
        self.searcher = HybridSearch(store, embedder, self.graph)
        self._closed = False
        self._close_hooks: list[Callable[[], Any]] = []

    # ---- lifecycle ------------------------------------------------------------------------------
    @classmethod
    async def open(cls, url: str | Path = "sqlite:///memory.db", *, schema: Schema | str | Path | None = None,
                   embedder: Any = None, extractor: Extractor | None = None,
                   limits: RateLimits | None = None) -> Memory:
        """Open (and migrate) the database at ``url``. Defaults: bundled schema, local ONNX embedder,
        LocalExtractor. A database built with another embedding model is refused."""
        return await asyncio.to_thread(cls.open_sync, url, schema=schema, embedder=embedder, extractor=extractor,
                                       limits=limits)

    @classmethod
    def open_sync(cls, url: str | Path = "sqlite:///memory.db", *, schema: Schema | str | Path | None = None,
                  embedder: Any = None, extractor: Extractor | None = None,
                  limits: RateLimits | None = None) -> Memory:
        if schema is None:
            schema_obj = Schema.default()
        elif isinstance(schema, Schema):
            schema_obj = schema
        else:
            schema_obj = Schema.load(schema)
        if embedder is None:
            from loregraph.models.embedder import get_default_embedder

            embedder = get_default_embedder()
        if extractor is None:
            from loregraph.extract.llm import default_extractor

            extractor = default_extractor()  # LocalExtractor unless an LLM is configured (LOREGRAPH_LLM_MODEL)
        store = open_store(url)
        try:
            store.ensure_embedder(embedder.name, embedder.dim)
        except Exception:
            store.close()
            raise
        return cls(store, schema_obj, embedder, extractor, limits)

    def on_close(self, hook: Callable[[], Any]) -> None:
        """Await ``hook()`` when this Memory closes, before the store does (removed with ``remove_close_hook``)."""
        self._close_hooks.append(hook)

    def remove_close_hook(self, hook: Callable[[], Any]) -> None:
        if hook in self._close_hooks:
            self._close_hooks.remove(hook)

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._closed:
            return
        for hook in list(self._close_hooks):  # e.g. turn indexers flushing their last turn (spec 004)
            try:
                await hook()
            except Exception:  # closing must still close the store
                log.exception("a close hook failed")
        if self._read_executor is not self._executor:
            self._read_executor.shutdown(wait=True)  # reads in flight finish before the store closes
        self.searcher.close()
        await self._run(self.store.close)
        self._closed = True
        self._executor.shutdown(wait=True)

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise RuntimeError("this Memory is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    async def _read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a read-only call: on the store thread, or next to other reads where the store allows it."""
        if self._closed:
            raise RuntimeError("this Memory is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._read_executor, lambda: fn(*args, **kwargs))

    # ---- writes ---------------------------------------------------------------------------------
    async def add_episode(self, request: EpisodeRequest | None = None, /, **fields: Any) -> AddEpisodeResult:
        """Ingest one episode (spec 000 §D). Pass an EpisodeRequest or its fields as keywords."""
        req = request if request is not None else EpisodeRequest(**fields)
        return await self._run(self.pipeline.add_episode, req)

    async def add_messages(self, group_id: str, messages: Sequence[Message | dict[str, Any]], *,
                           conversation_id: str | None = None, **options: Any) -> list[AddEpisodeResult]:
        """Ingest messages in order, one episode each. Everything is validated before the first write."""
        validate_group_id(group_id)
        msgs = [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]
        reqs = [EpisodeRequest(group_id=group_id, content=m.content, name=m.name, role=m.role,
                               role_type=m.role_type, source="message", source_description=m.source_description,
                               reference_time=m.timestamp, uuid=m.uuid, conversation_id=conversation_id, **options)
                for m in msgs]
        results = []
        for req in reqs:
            results.append(await self._run(self.pipeline.add_episode, req))
        return results

    async def upsert_delta(self, delta: Any) -> None:
        """Apply a client GraphDelta (validated against the schema, one transaction)."""
        await self._run(self.store.apply, delta, self.schema)

    async def checkpoint(self) -> None:
        """Compact the store's write-ahead log (call after a bulk import)."""
        await self._run(self.store.checkpoint)

    async def delete_episode(self, group_id: str, episode_id: str) -> dict[str, int]:
        """Delete an episode and whatever only it contributed (facts and entities with no other source)."""
        validate_group_id(group_id)
        counts = await self._run(self.store.delete_episode, group_id, episode_id)
        if not counts["episodes"]:
            raise NotFoundError(f"episode {episode_id} not found in group {group_id}")
        return counts

    async def delete_group(self, group_id: str) -> dict[str, int]:
        validate_group_id(group_id)
        return await self._run(self.store.delete_group, group_id)

    async def delete_fact(self, group_id: str, fact_id: str) -> None:
        """Remove one fact on a client's request (a fact that stops being true is invalidated, not deleted)."""
        validate_group_id(group_id)
        if not await self._run(self.store.delete_fact, group_id, fact_id):
            raise NotFoundError(f"fact {fact_id} not found in group {group_id}")

    async def clear(self) -> dict[str, int]:
        """Delete every group's data."""
        totals: dict[str, int] = {}
        for gid in await self._run(self.store.groups):
            for k, v in (await self._run(self.store.delete_group, gid)).items():
                totals[k] = totals.get(k, 0) + v
        return totals

    async def add_entity(self, group_id: str, name: str, *, summary: str = "", entity_id: str | None = None,
                         entity_type: str = "entity") -> Entity:
        """Create an entity, or rename and re-describe the group's entity with ``entity_id``; the name is
        embedded and the write is schema-checked like any other."""
        validate_group_id(group_id)

        def work() -> Entity:
            now = utcnow()
            found = self.store.get_entities(group_id, [entity_id]) if entity_id else []
            if found:
                ent = found[0]
                ent.name, ent.summary, ent.updated_at = name, summary, now
                if entity_type != "entity":
                    ent.type = entity_type
            else:
                ent = Entity(**({"id": entity_id} if entity_id else {}), group_id=group_id, name=name,
                             type=entity_type, summary=summary, created_at=now, updated_at=now)
            ent.embedding = self.embedder.embed_one(name).tolist()
            self.store.apply(GraphDelta(group_id=group_id, entities=[ent]), self.schema)
            return ent

        return await self._run(work)

    async def run_on_store_thread(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on the store thread (the only one that touches the store): e.g. a queued job's whole
        execution, so that its bookkeeping and its graph write share one transaction (``loregraph.jobs``)."""
        return await self._run(fn, *args, **kwargs)

    # ---- reads ----------------------------------------------------------------------------------
    async def store_call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Run a read-only Store primitive on the store thread (for interfaces and tools)."""
        if method.startswith(("apply", "delete", "_")):
            raise ValueError(f"store_call: {method!r} is not a read primitive")
        return await self._run(getattr(self.store, method), *args, **kwargs)

    async def search(self, query: str, group_ids: Sequence[str] | str, *, limit: int = 10,
                     filters: SearchFilters | dict[str, Any] | None = None, as_of: datetime | None = None,
                     **options: Any) -> SearchResults:
        """Hybrid search over facts, entities and episodes of ``group_ids``; current facts unless ``as_of``."""
        groups = [group_ids] if isinstance(group_ids, str) else list(group_ids)
        flt = filters if isinstance(filters, SearchFilters) else SearchFilters.model_validate(filters or {})
        req = SearchRequest(query=query, group_ids=groups, limit=limit, filters=flt, as_of=as_of, **options)
        return await self._read(self.searcher.search, req)

    async def query_graph(self, query: str, group_id: str, *, entity_type: str | None = None,
                          relationship_type: str | None = None, limit: int = 25) -> GraphAnswer:
        """Relationship question over one group's graph; each relationship carries its source messages.
        ``answer.found`` is False (with a message) when nothing relevant is known."""
        return await self._read(self.graph.query_graph, query, group_id, entity_type, relationship_type, limit)

    async def explain(self, group_id: str, record_id: str) -> Explanation:
        """The messages an entity or fact came from ("How do you know about X?")."""
        return await self._read(self.graph.explain, group_id, record_id)

    async def get_episodes(self, group_id: str, *, last_n: int = 10, ids: Sequence[str] | None = None,
                           before: datetime | None = None) -> list[Episode]:
        validate_group_id(group_id)
        if ids is not None:
            return await self._read(self.store.get_episodes, group_id, list(ids))
        return await self._read(self.store.recent_episodes, group_id, before=before, source=None, limit=last_n)

    async def get_entity(self, group_id: str, entity_id: str) -> Entity:
        validate_group_id(group_id)
        found = await self._read(self.store.get_entities, group_id, [entity_id])
        if not found:
            raise NotFoundError(f"entity {entity_id} not found in group {group_id}")
        return found[0]

    async def get_fact(self, group_id: str, fact_id: str) -> Fact:
        validate_group_id(group_id)
        found = await self._read(self.store.get_facts, group_id, [fact_id])
        if not found:
            raise NotFoundError(f"fact {fact_id} not found in group {group_id}")
        return found[0]

    async def list_entities(self, group_id: str, *, entity_type: str | None = None,
                            limit: int = 1000) -> list[Entity]:
        validate_group_id(group_id)
        return await self._read(self.store.list_entities, group_id, entity_type=entity_type, limit=limit)

    async def list_facts(self, group_id: str, *, current: bool = True, as_of: datetime | None = None,
                         limit: int = 10000) -> list[Fact]:
        """Current facts (default), those true at ``as_of``, or every fact ever (``current=False``)."""
        from loregraph.store.base import TimeFilter

        validate_group_id(group_id)
        tf = TimeFilter(as_of=as_utc(as_of) if as_of else None, include_expired=not current and as_of is None)
        return await self._read(self.store.list_facts, group_id, tf, limit)
