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
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from loregraph.assembly.components import Components, build_components
from loregraph.communities import BuildReport
from loregraph.documents.pipeline import ChunkResult, DocumentPipeline, IngestTextResult, Mode
from loregraph.documents.queries import DocumentQueries, RelationshipHit, TimelineEntry
from loregraph.documents.web import CrawlLimits, SiteAnalysis, WebFetcher
from loregraph.errors import ConflictError, InvalidInputError, NotFoundError
from loregraph.extract.base import Extractor
from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.messages import Message
from loregraph.graph.types import Community, Entity, Episode, Fact, GraphDelta, as_utc, utcnow, validate_group_id
from loregraph.ingest.knowledge import KnowledgeDelta, KnowledgeWriter, UpsertResult
from loregraph.ingest.pipeline import AddEpisodeResult, EpisodeRequest, IngestPipeline, RateLimits
from loregraph.models.embedder import Embedder
from loregraph.schema import Schema
from loregraph.search.candidates import Candidate, CandidateFinder
from loregraph.search.explore import MAX_OFFSET, GraphExplorer, GraphPiece
from loregraph.search.graph import Explanation, GraphAnswer, GraphQuery
from loregraph.search.hybrid import HybridSearch, SearchFilters, SearchRequest, SearchResults
from loregraph.store import Store, TimeFilter
from loregraph.store.base import SearchKind
from loregraph.store.projection import BlockProjection

log = logging.getLogger("loregraph")
T = TypeVar("T")


class Memory:
    """The facade over one store: writes run one at a time on a store thread, reads on a pool as wide as the store
    allows. Build it with ``Memory.open(url)`` (the assembly picks the defaults) or from ready parts."""

    def __init__(self, store: Store, schema: Schema, embedder: Embedder, extractor: Extractor,
                 limits: RateLimits | None = None):
        self.store = store
        self.schema = schema
        self.embedder = embedder
        self.extractor = extractor
        # writes run one at a time on the store thread; reads too, unless the store takes concurrent readers
        # (PostgreSQL: one per pooled connection)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loregraph-store")
        readers = store.capabilities.concurrent_readers
        self._read_executor = (self._executor if readers <= 1 else
                               ThreadPoolExecutor(max_workers=readers, thread_name_prefix="loregraph-read"))
        self.pipeline = IngestPipeline(store, schema, embedder, extractor, limits)
        self.graph = GraphQuery(store, schema, embedder)
        self.searcher = HybridSearch(store, embedder, self.graph)
        self.explorer = GraphExplorer(store)
        self.documents = DocumentPipeline(store, embedder)
        self.doc_queries = DocumentQueries(store, embedder)
        self.crawl_limits = CrawlLimits()  # budgets and SSRF allow-list of ingest_url (a service sets its own)
        self._closed = False
        self._close_hooks: list[Callable[[], Any]] = []
        self._knowledge: KnowledgeWriter | None = None
        self._candidates: CandidateFinder | None = None

    # ---- lifecycle ------------------------------------------------------------------------------
    @classmethod
    async def open(cls, url: str | Path = "sqlite:///memory.db", *, schema: Schema | str | Path | None = None,
                   embedder: Embedder | None = None, extractor: Extractor | str | None = None,
                   limits: RateLimits | None = None) -> Memory:
        """Open (and migrate) the database at ``url``; parts not given are picked by ``assembly.components``
        (bundled schema, local ONNX embedder, LocalExtractor unless an LLM is configured). A database built with
        another embedding model is refused."""
        return await asyncio.to_thread(cls.open_sync, url, schema=schema, embedder=embedder, extractor=extractor,
                                       limits=limits)

    @classmethod
    def open_sync(cls, url: str | Path = "sqlite:///memory.db", *, schema: Schema | str | Path | None = None,
                  embedder: Embedder | None = None, extractor: Extractor | str | None = None,
                  limits: RateLimits | None = None) -> Memory:
        return cls.from_components(build_components(url, schema=schema, embedder=embedder, extractor=extractor,
                                                    limits=limits))

    @classmethod
    def from_components(cls, parts: Components) -> Memory:
        return cls(parts.store, parts.schema, parts.embedder, parts.extractor, parts.limits)

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
        msgs = [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]  # all, before writing
        reqs = [EpisodeRequest(group_id=group_id, content=m.content, name=m.name, role=m.role,
                               role_type=m.role_type, source="message", source_description=m.source_description,
                               reference_time=m.timestamp, uuid=m.uuid, conversation_id=conversation_id, **options)
                for m in msgs]
        results = []
        for req in reqs:
            results.append(await self._run(self.pipeline.add_episode, req))
        return results

    async def add_message_job(self, group_id: str, message: Message, *, episode_id: str | None,
                              in_write: Callable[[Any], None], **options: Any) -> AddEpisodeResult | None:
        """Ingest one queued message exactly once: ``in_write(conn)`` runs inside the graph write's transaction
        (a job queue marks the job done there). A new episode gets ``episode_id``; when that episode exists
        already, nothing is processed and None is returned."""
        validate_group_id(group_id)
        req = EpisodeRequest(group_id=group_id, content=message.content, name=message.name, role=message.role,
                             role_type=message.role_type, source="message",
                             source_description=message.source_description, reference_time=message.timestamp,
                             uuid=message.uuid, episode_id=None if message.uuid else episode_id, **options)

        def work() -> AddEpisodeResult | None:
            if req.episode_id and self.store.get_episodes(group_id, [req.episode_id]):
                return None
            with self.store.apply_hook(in_write):
                return self.pipeline.add_episode(req)

        return await self._run(work)

    async def upsert_delta(self, delta: GraphDelta) -> None:
        """Apply a client GraphDelta (validated against the schema, one transaction)."""
        await self._run(self.store.apply, delta, self.schema)

    async def checkpoint(self) -> None:
        """Compact the store's write-ahead log and build vector indexes that are due (call after a bulk import)."""
        await self._run(self.store.checkpoint)

    @asynccontextmanager
    async def bulk_import(self) -> AsyncIterator[Memory]:
        """Defer per-write index maintenance while importing many messages; ``checkpoint()`` on exit builds what
        is due once."""
        self.store.build_vector_indexes = False
        try:
            yield self
        finally:
            self.store.build_vector_indexes = True
            await self.checkpoint()

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

    # ---- reads ----------------------------------------------------------------------------------
    async def ping(self) -> None:
        """Raise unless the store answers a read (health checks)."""
        await self._read(self.store.count, "__health__")

    async def schema_version(self) -> int:
        """The store's migration version."""
        return await self._read(lambda: self.store.schema_version)

    async def groups(self) -> list[str]:
        """Every group with data in the store (admin use)."""
        return await self._read(self.store.groups)

    async def count(self, group_id: str) -> dict[str, int]:
        """How many episodes, entities and facts the group holds."""
        validate_group_id(group_id)
        return await self._read(self.store.count, group_id)

    async def record_groups(self, kind: SearchKind, record_id: str, within: Sequence[str] | None) -> list[str]:
        """The groups (among ``within``; None: all) holding an episode, entity or fact with this id. Ids are per
        group, so there may be several."""
        return await self._read(self.store.groups_of, kind, record_id, within)

    async def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        """The group's facts with these ids (missing ids are left out)."""
        validate_group_id(group_id)
        return await self._read(self.store.get_facts, group_id, list(ids))

    async def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        """The group's entities with these ids (missing ids are left out)."""
        validate_group_id(group_id)
        return await self._read(self.store.get_entities, group_id, list(ids))

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

    # ---- communities (issue 15) and the graph explorer's pieces -----------------------------------------------
    async def communities(self, group_id: str, *, limit: int = 100, offset: int = 0) -> list[Community]:
        """The group's communities, largest first, each with its member ids."""
        validate_group_id(group_id)
        if not 1 <= limit <= 1000:
            raise InvalidInputError("limit: must be between 1 and 1000")
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidInputError(f"offset: must be between 0 and {MAX_OFFSET}")
        return await self._read(self.store.list_communities, group_id, limit, offset)

    async def build_communities(self, group_id: str) -> BuildReport:
        """Recluster the group's entities from its current facts and replace its communities (one transaction)."""
        validate_group_id(group_id)
        return await self._run(self.pipeline.communities.build, group_id)

    async def graph_page(self, group_id: str, *, as_of: datetime | None = None, limit: int = 100,
                         offset: int = 0) -> GraphPiece:
        """A page of the group's entities with the facts among them (current, or true at ``as_of``)."""
        return await self._read(self.explorer.page, group_id, as_of=as_of, limit=limit, offset=offset)

    async def graph_neighbourhood(self, group_id: str, entity_ids: Sequence[str], *, as_of: datetime | None = None,
                                  limit: int = 50) -> GraphPiece:
        """Entities and their neighbours (by facts current, or true at ``as_of``)."""
        return await self._read(self.explorer.neighbourhood, group_id, list(entity_ids), as_of=as_of, limit=limit)

    async def graph_facts(self, group_id: str, entity_ids: Sequence[str], *,
                          as_of: datetime | None = None) -> list[Fact]:
        """Facts touching any of the entities (current, or true at ``as_of``)."""
        return await self._read(self.explorer.facts_of, group_id, list(entity_ids), as_of=as_of)

    async def entity_timeline(self, group_id: str, entity_id: str,
                              limit: int = 200) -> tuple[Entity, list[Fact], dict[str, str]]:
        """Every fact of one entity, current and ended, in the order they became true."""
        return await self._read(self.explorer.timeline, group_id, entity_id, limit=limit)

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
        validate_group_id(group_id)
        tf = TimeFilter(as_of=as_utc(as_of) if as_of else None, include_expired=not current and as_of is None)
        return await self._read(self.store.list_facts, group_id, tf, limit)

    # ---- documents (spec 002): collections, ingest text/URL, document search, collection-scoped graph ------------
    # Every document write is one transaction of the group: document, chunks (text, full text, vectors) and the
    # facts extracted from the chunks (each chunk is the episode its facts cite, so explain names the document).
    async def create_collection(self, group_id: str, name: str, description: str, *, domain: str | None = None,
                                domain_scope: str | None = None,
                                metadata_schema: dict[str, Any] | None = None) -> Collection:
        """A collection in the group: name unique per group, description required, ``metadata_schema`` of the
        shape ``{"custom": {...}, "system": [...]}``."""
        return await self._run(self.documents.create_collection, group_id, name, description, domain, domain_scope,
                               metadata_schema)

    async def list_collections(self, group_id: str) -> list[tuple[Collection, int]]:
        """The group's collections with their document counts."""
        validate_group_id(group_id)
        return await self._read(self.store.list_collections, group_id)

    async def get_collection(self, group_id: str, name: str) -> Collection:
        return await self._read(self.documents.collection, group_id, name)

    async def delete_collection(self, group_id: str, name: str) -> dict[str, int]:
        """Delete a collection, its documents and chunks and the graph facts only they supported."""
        return await self._run(self.documents.delete_collection, group_id, name)

    def _chunk_extractor(self, group_id: str) -> Callable[[Chunk, Document, datetime], tuple[int, int]]:
        def extract(chunk: Chunk, doc: Document, when: datetime) -> tuple[int, int]:
            req = EpisodeRequest(group_id=group_id, content=chunk.content, name=doc.title, source="document",
                                 source_description=f"document {doc.title!r} ({doc.id}) chunk {chunk.ordinal + 1}"
                                                    f"/{doc.chunk_count}",
                                 episode_id=chunk.id, reference_time=when)
            res = self.pipeline.add_episode(req)
            return len(res.entities), len(res.facts)
        return extract

    def _progress(self, progress: Callable[[int, int, str], Any] | None) -> Callable[[int, int, str], None] | None:
        """A thread-side progress callback that runs an async ``progress`` on the event loop and waits for it, so
        every report is delivered, in order, before the work returns (an MCP notification still in flight when the
        tool returns would follow the result, or be dropped). A report that fails does not fail the work."""
        if progress is None:
            return None
        loop = asyncio.get_running_loop()

        def report(done: int, total: int, message: str) -> None:
            res = progress(done, total, message)
            if asyncio.iscoroutine(res):
                try:
                    asyncio.run_coroutine_threadsafe(res, loop).result()
                except Exception as exc:
                    log.warning("progress report not delivered: %s", type(exc).__name__)
        return report

    async def ingest_text(self, group_id: str, content: str, collection: str, title: str, *,
                          metadata: dict[str, Any] | None = None, mode: Mode = "ingest", source: str = "",
                          reference_time: datetime | None = None,
                          progress: Callable[[int, int, str], Any] | None = None,
                          _system_metadata: dict[str, Any] | None = None) -> IngestTextResult:
        """Chunk, embed and extract a document into a collection in one transaction (``reingest`` replaces the
        document with this title and what only it contributed)."""
        validate_group_id(group_id)
        return await self._run(self.documents.ingest_text, group_id, collection, content, title,
                               self._chunk_extractor(group_id), metadata=metadata, mode=mode, source=source,
                               system_metadata=_system_metadata,
                               reference_time=as_utc(reference_time) if reference_time else None,
                               progress=self._progress(progress))

    async def search_documents(self, group_id: str, query: str, collection: str, *, limit: int = 5,
                               threshold: float = 0.35, hybrid: bool = False) -> list[ChunkResult]:
        """Chunks of a collection by cosine similarity (at least ``threshold``), highest first; ``hybrid`` adds
        BM25."""
        return await self._read(self.documents.search_documents, group_id, query, collection, limit, threshold,
                                hybrid)

    async def list_documents(self, group_id: str, collection: str, *, limit: int = 50,
                             offset: int = 0) -> list[Document]:
        return await self._read(self.documents.list_documents, group_id, collection, limit, offset)

    async def delete_document(self, group_id: str, document_id: str) -> dict[str, int]:
        """Delete a document, its chunks and the facts and entities only it supported."""
        return await self._run(self.documents.delete_document, group_id, document_id)

    async def query_relationships(self, group_id: str, query: str, collection: str, *, num_results: int = 5,
                                  threshold: float = 0.35) -> list[RelationshipHit]:
        """Relationships of entities the query names (name, alias, embedding), reranked by relevance to the
        query, limited to facts whose provenance lies in the collection."""
        return await self._read(self.doc_queries.query_relationships, group_id, query, collection, num_results,
                                threshold)

    async def query_temporal(self, group_id: str, query: str, collection: str, *, valid_from: datetime | None = None,
                             valid_until: datetime | None = None, num_results: int = 10) -> list[TimelineEntry]:
        """The timeline of matching facts in the collection, each ``current`` or ``superseded``, newest first."""
        return await self._read(self.doc_queries.query_temporal, group_id, query, collection, valid_from,
                                valid_until, num_results)

    async def ingest_url(self, group_id: str, url: str, collection: str, *, follow_links: bool = False,
                         max_pages: int = 20, max_depth: int | None = None, mode: Mode = "ingest",
                         limits: CrawlLimits | None = None,
                         progress: Callable[[int, int, str], Any] | None = None) -> dict[str, Any]:
        """Fetch a page (and same-site pages it links to, with ``follow_links``), keep the main content and ingest
        each page as a document titled by its URL. Guarded: robots.txt, SSRF checks, page/byte/time budgets;
        an identical request running already is refused."""
        await self.get_collection(group_id, collection)  # fails before any fetching
        fetcher = WebFetcher(limits or self.crawl_limits)
        # one rising count over both phases (MCP progress must increase): pages fetched, then pages ingested
        fetched = 0

        async def crawl_progress(done: int, total: int, message: str) -> None:
            nonlocal fetched
            fetched = done
            if progress is not None:
                out = progress(done, 2 * max_pages, message)
                if asyncio.iscoroutine(out):
                    await out

        pages = await fetcher.crawl(url, follow_links=follow_links, max_pages=max_pages, max_depth=max_depth,
                                    key=(group_id, collection), progress=crawl_progress)
        docs, chunks, errors = [], 0, []
        for i, page in enumerate(pages.pages):
            try:
                res = await self.ingest_text(group_id, page.text, collection, page.url, mode=mode, source=page.url,
                                             _system_metadata={"source_url": page.url, "crawled_at": page.fetched_at,
                                                               "crawl_root": pages.root, "depth": page.depth,
                                                               "content_type": page.content_type})
            except (InvalidInputError, ConflictError) as exc:  # a duplicate title, an empty page: reported
                errors.append({"url": page.url, "error": str(exc)})
                continue
            docs.append({"url": page.url, "document_id": res.document_id, "num_chunks": res.num_chunks})
            chunks += res.num_chunks
            if progress is not None:
                out = progress(fetched + i + 1, fetched + len(pages.pages),
                               f"ingested page {i + 1}/{len(pages.pages)}")
                if asyncio.iscoroutine(out):
                    await out
        return {"pages_crawled": len(pages.pages), "pages_ingested": len(docs), "total_chunks": chunks,
                "documents": docs, "skipped": pages.skipped, "errors": errors}

    async def analyze_website(self, url: str, *, limits: CrawlLimits | None = None) -> SiteAnalysis:
        """What a site holds before crawling it: sitemap.xml URLs and their path patterns."""
        return await WebFetcher(limits or self.crawl_limits).analyze(url)

    # ---- knowledge interface (spec 001, issue 14): graph deltas, user graphs, entity candidates ------------------
    def knowledge_writer(self) -> KnowledgeWriter:
        """The writer of knowledge deltas (knowledge schema, blocks embedded here, optional block projection)."""
        if self._knowledge is None:
            self._knowledge = KnowledgeWriter(self.store, Schema.knowledge(), self.embedder)
        return self._knowledge

    def candidate_finder(self) -> CandidateFinder:
        if self._candidates is None:
            self._candidates = CandidateFinder(self.store, self.knowledge_writer().schema, self.embedder)
        return self._candidates

    def set_block_projection(self, projection: BlockProjection | None) -> None:
        """Project blocks into an external vector index (e.g. ``QdrantProjection``) on every knowledge write."""
        self.knowledge_writer().projection = projection
        self.candidate_finder().projection = projection

    async def upsert_graph_delta(self, group_id: str, delta: KnowledgeDelta) -> UpsertResult:
        """Validate a knowledge delta completely (every violation at once) and write it in one transaction."""
        validate_group_id(group_id)
        writer = self.knowledge_writer()
        return await self._run(writer.upsert, group_id, delta)

    async def initialize_user_graph(self, group_id: str, user_id: str, name: str = "") -> tuple[str, bool]:
        """Create the user's person node in the Real World universe (idempotent); (person id, created)."""
        validate_group_id(group_id)
        if not user_id.strip():
            raise InvalidInputError("user_id: required")
        writer = self.knowledge_writer()
        return await self._run(writer.initialize_user, group_id, user_id, name)

    async def find_entity_candidates(self, group_id: str, *, names: Sequence[str] = (),
                                     potential_type_ids: Sequence[str] = (), short_description: str = "",
                                     user_id: str, limit: int | None = None) -> list[Candidate]:
        """Entities matching names/aliases and block similarity, scored 0.55 * name + 0.45 * weighted semantic.

        Spec 001's visibility applies: only entities owned by ``user_id`` or marked ``visibility: SHARED`` (as the
        knowledge API writes them) are candidates. Entities extracted from messages carry neither, so they are
        never returned here; find those with ``search``."""
        validate_group_id(group_id)
        return await self._read(self.candidate_finder().find, group_id, names=list(names),
                                potential_type_ids=list(potential_type_ids), short_description=short_description,
                                user_id=user_id, limit=limit)


__all__ = ["Memory", "Message"]
