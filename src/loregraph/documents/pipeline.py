"""Document ingestion and search over one store: a document, its chunks (text, full-text rows, vectors) and the
facts extracted from them are written in ONE transaction of the group. Extraction runs chunk by chunk through a
callable the facade supplies (the add-episode pipeline), each chunk being the episode its facts cite."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np

from loregraph.documents.chunking import DEFAULT_CHUNK_CHARS, DEFAULT_OVERLAP_CHARS, chunk_text
from loregraph.documents.collections import (
    text,
    validate_description,
    validate_metadata,
    validate_metadata_schema,
    validate_name,
)
from loregraph.errors import ConflictError, InvalidInputError, NotFoundError
from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.types import utcnow, validate_group_id
from loregraph.models.embedder import Embedder
from loregraph.search.explore import MAX_OFFSET
from loregraph.store.base import Store

log = logging.getLogger("loregraph.documents")

MAX_TITLE_CHARS = 2048  # a crawled page's title is its URL
MAX_DOCUMENTS_PAGE = 500  # documents per page of a collection's listing
MAX_CONTENT_CHARS = 5_000_000
MAX_RESULTS = 50
Mode = Literal["ingest", "reingest"]
ChunkExtractor = Callable[[Chunk, Document, datetime], tuple[int, int]]
"""``extract(chunk, document, reference_time) -> (entities, facts)``: extracts and applies one chunk's facts inside
the open transaction (the chunk's id is its episode's id)."""
Progress = Callable[[int, int, str], None]


@dataclass
class IngestTextResult:
    document_id: str
    collection: str
    title: str
    num_chunks: int
    entities_extracted: int
    facts_extracted: int
    replaced: bool
    duration_ms: float


@dataclass
class ChunkResult:
    chunk_id: str
    document_id: str
    title: str
    source: str
    ordinal: int
    content: str
    similarity: float
    metadata: dict[str, Any] = field(default_factory=dict)
    score: float = 0.0


class DocumentPipeline:
    def __init__(self, store: Store, embedder: Embedder, *, chunk_chars: int = DEFAULT_CHUNK_CHARS,
                 overlap_chars: int = DEFAULT_OVERLAP_CHARS):
        self.store = store
        self.embedder = embedder
        self.chunk_chars = chunk_chars
        self.overlap_chars = overlap_chars

    # ---- collections ----------------------------------------------------------------------------
    def create_collection(self, group_id: str, name: str, description: str, domain: str | None = None,
                          domain_scope: str | None = None, metadata_schema: Any = None) -> Collection:
        for label, value in (("domain", domain), ("domain_scope", domain_scope)):
            if value is not None:
                text(label, value, max_chars=500)
        col = Collection(group_id=validate_group_id(group_id), name=validate_name(name, "name"),
                         description=validate_description(description), domain=domain, domain_scope=domain_scope,
                         metadata_schema=validate_metadata_schema(metadata_schema))
        self.store.create_collection(col)
        log.info("collection %s created in group %s", col.id, group_id)
        return col

    def collection(self, group_id: str, name: str) -> Collection:
        validate_group_id(group_id)
        found = self.store.get_collection(group_id, validate_name(name))
        if found is None:
            raise NotFoundError(f"collection: no collection named {name!r} in group {group_id} "
                                "(create_collection first, or list_collections)")
        return found

    # ---- ingestion ------------------------------------------------------------------------------
    def ingest_text(self, group_id: str, collection: str, content: str, title: str, extract: ChunkExtractor, *,
                    metadata: dict[str, Any] | None = None, mode: Mode = "ingest", source: str = "",
                    system_metadata: dict[str, Any] | None = None, reference_time: datetime | None = None,
                    progress: Progress | None = None) -> IngestTextResult:
        """Chunk, embed and store a document with the facts extracted from it, all in one transaction. In
        ``ingest`` mode a title the collection has is an error; ``reingest`` replaces that document and what only
        it contributed, in the same transaction."""
        t0 = time.perf_counter()
        col = self.collection(group_id, collection)
        if mode not in ("ingest", "reingest"):
            raise InvalidInputError(f"mode: must be 'ingest' or 'reingest' (got {mode!r})")
        if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE_CHARS:
            raise InvalidInputError(f"title: must be 1-{MAX_TITLE_CHARS} characters")
        if not isinstance(content, str) or not content.strip():
            raise InvalidInputError("content: must not be empty")
        text("content", content)
        text("title", title)
        text("source", source, max_chars=4096)
        if len(content) > MAX_CONTENT_CHARS:
            raise InvalidInputError(f"content: at most {MAX_CONTENT_CHARS} characters per document (got "
                                    f"{len(content)}); split it into several documents")
        meta = validate_metadata(metadata, col.metadata_schema, system=system_metadata)
        title = title.strip()
        existing = self.store.find_document(group_id, col.id, title)
        if existing is not None and mode == "ingest":
            raise ConflictError(f"title: collection {collection!r} already has a document titled {title!r}; "
                                "use mode='reingest' to replace it")
        pieces = chunk_text(content, self.chunk_chars, self.overlap_chars)
        doc = Document(group_id=group_id, collection_id=col.id, title=title, source=source, metadata=meta,
                       chars=len(content), chunk_count=len(pieces),
                       content_hash=hashlib.sha256(content.encode()).hexdigest())
        vectors = self.embedder.embed(pieces)
        chunks = [Chunk(group_id=group_id, collection_id=col.id, document_id=doc.id, ordinal=i, content=p,
                        embedding=np.asarray(v, dtype=np.float32).tolist())
                  for i, (p, v) in enumerate(zip(pieces, vectors, strict=True))]
        when = reference_time or utcnow()
        n_ent = n_fact = 0
        with self.store.transaction(group_id):
            if existing is not None:
                self.store.delete_document(group_id, existing.id)
            self.store.put_document(doc, chunks)
            for i, ch in enumerate(chunks):
                e, f = extract(ch, doc, when)
                n_ent, n_fact = n_ent + e, n_fact + f
                if progress is not None:
                    progress(i + 1, len(chunks), f"chunk {i + 1}/{len(chunks)} of document {doc.id}")
        ms = (time.perf_counter() - t0) * 1e3
        log.info("document %s group=%s collection=%s: chunks=%d entities=%d facts=%d replaced=%s in %.1f ms",
                 doc.id, group_id, col.id, len(chunks), n_ent, n_fact, existing is not None, ms)
        return IngestTextResult(doc.id, collection, title, len(chunks), n_ent, n_fact, existing is not None,
                                round(ms, 1))

    # ---- search ---------------------------------------------------------------------------------
    def search_documents(self, group_id: str, query: str, collection: str, limit: int = 5, threshold: float = 0.35,
                         hybrid: bool = False) -> list[ChunkResult]:
        """Chunks of the collection by cosine similarity to ``query`` (at least ``threshold``), highest first;
        ``hybrid`` fuses BM25 in (reciprocal rank), keeping keyword hits below the threshold too."""
        col = self.collection(group_id, collection)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query: must not be empty")
        text("query", query, max_chars=4096)
        if not 1 <= limit <= MAX_RESULTS:
            raise InvalidInputError(f"limit: must be 1-{MAX_RESULTS} (got {limit})")
        if not -1.0 <= threshold <= 1.0:
            raise InvalidInputError(f"threshold: must be a cosine similarity between -1 and 1 (got {threshold})")
        qvec = self.embedder.embed_one(query)
        near = [h for h in self.store.search_chunks(group_id, col.id, qvec, limit * 4 if hybrid else limit)
                if h.score >= threshold]
        scores: dict[str, float] = {h.id: h.score for h in near}
        if not hybrid:
            ranked: list[tuple[str, float]] = [(h.id, h.score) for h in near]
        else:
            bm25 = self.store.fulltext_chunks(group_id, col.id, query, limit * 4)
            missing = [h.id for h in bm25 if h.id not in scores]
            if missing:
                vecs = self.store.embeddings("chunk", group_id, missing)
                q = qvec / (np.linalg.norm(qvec) or 1.0)
                for cid, v in vecs.items():
                    scores[cid] = float(np.dot(q, v / (np.linalg.norm(v) or 1.0)))
            fused: dict[str, float] = {}
            for hits in (near, bm25):
                for rank, h in enumerate(hits):
                    fused[h.id] = fused.get(h.id, 0.0) + 1.0 / (60 + rank + 1)
            ranked = sorted(fused.items(), key=lambda kv: -kv[1])
        return self._chunk_results(group_id, ranked[:limit], scores)

    def _chunk_results(self, group_id: str, ranked: list[tuple[str, float]],
                       sims: dict[str, float]) -> list[ChunkResult]:
        chunks = {c.id: c for c in self.store.get_chunks(group_id, [cid for cid, _ in ranked])}
        docs = {d.id: d for d in self.store.get_documents(group_id, list({c.document_id for c in chunks.values()}))}
        out = []
        for cid, score in ranked:
            ch = chunks.get(cid)
            doc = docs.get(ch.document_id) if ch else None
            if ch is None or doc is None:
                continue
            out.append(ChunkResult(cid, doc.id, doc.title, doc.source, ch.ordinal, ch.content,
                                   round(sims.get(cid, 0.0), 4), dict(doc.metadata), round(score, 4)))
        return out

    # ---- documents --------------------------------------------------------------------------------
    def list_documents(self, group_id: str, collection: str, limit: int = 50, offset: int = 0) -> list[Document]:
        if not 1 <= limit <= MAX_DOCUMENTS_PAGE:
            raise InvalidInputError(f"limit: must be between 1 and {MAX_DOCUMENTS_PAGE}")
        if not 0 <= offset <= MAX_OFFSET:  # a larger one would not fit the database's integers
            raise InvalidInputError(f"offset: must be between 0 and {MAX_OFFSET}")
        col = self.collection(group_id, collection)
        return self.store.list_documents(group_id, col.id, limit, offset)

    def delete_document(self, group_id: str, document_id: str) -> dict[str, int]:
        validate_group_id(group_id)
        text("document_id", document_id, max_chars=128)
        counts = self.store.delete_document(group_id, document_id)
        if not counts["documents"]:
            raise NotFoundError(f"document {document_id} not found in group {group_id}")
        return counts

    def delete_collection(self, group_id: str, name: str) -> dict[str, int]:
        col = self.collection(group_id, name)
        return self.store.delete_collection(group_id, col.id)


__all__ = ["ChunkExtractor", "ChunkResult", "DocumentPipeline", "IngestTextResult", "Mode"]
