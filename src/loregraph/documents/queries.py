"""Graph questions scoped to a collection (spec 002), no LLM: entities matched by name, alias and embedding,
their relationships reranked by the cosine similarity of each fact to the query; and the timeline of matching
facts with their status. Only facts whose provenance (chunk episodes) lies in the collection are answered."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from loregraph.documents.collections import text
from loregraph.errors import InvalidInputError, NotFoundError
from loregraph.graph.documents import Collection
from loregraph.graph.names import normalize_name
from loregraph.graph.types import Entity, Fact, as_utc, utcnow, validate_group_id
from loregraph.models.embedder import Embedder
from loregraph.store.base import Store, TimeFilter

MAX_RESULTS = 50
ENTITY_CANDIDATES = 10
ENTITY_MIN_SIMILARITY = 0.45
FACT_MIN_SIMILARITY = 0.3  # facts found by meaning alone (not through a named entity) must be at least this close
_WORD = re.compile(r"[\w][\w.+#\-]*")


@dataclass
class EntityRef:
    id: str
    name: str
    type: str


@dataclass
class RelationshipHit:
    fact_id: str
    relationship_type: str
    fact: str
    source: EntityRef
    target: EntityRef
    valid_from: datetime | None
    valid_until: datetime | None
    score: float
    documents: list[str] = field(default_factory=list)


@dataclass
class TimelineEntry(RelationshipHit):
    status: str = "current"
    recorded_at: datetime | None = None


class DocumentQueries:
    def __init__(self, store: Store, embedder: Embedder):
        self.store = store
        self.embedder = embedder

    def _collection(self, group_id: str, name: str) -> Collection:
        validate_group_id(group_id)
        col = self.store.get_collection(group_id, name) if isinstance(name, str) else None
        if col is None:
            raise NotFoundError(f"collection: no collection named {name!r} in group {group_id}")
        return col

    def _entities(self, group_id: str, query: str, qvec: np.ndarray) -> list[Entity]:
        """Entities the query names: word n-grams matched on normalized names and aliases, then BM25 and vector
        hits on entity names."""
        words = _WORD.findall(query)
        grams = {normalize_name(" ".join(words[i:i + n])) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
        exact = self.store.find_entities_by_names(group_id, grams)
        ids = [e.id for e in exact]
        ids += [h.id for h in self.store.fulltext("entity", [group_id], query, ENTITY_CANDIDATES)]
        ids += [h.id for h in self.store.vector("entity", [group_id], qvec, ENTITY_CANDIDATES)
                if h.score >= ENTITY_MIN_SIMILARITY]
        return self.store.get_entities(group_id, list(dict.fromkeys(ids)))

    def _candidate_facts(self, group_id: str, query: str, time: TimeFilter) -> tuple[list[Fact], np.ndarray]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query: must not be empty")
        text("query", query, max_chars=4096)
        qvec = self.embedder.embed_one(query)
        ents = self._entities(group_id, query, qvec)
        facts = self.store.facts_of_entities(group_id, [e.id for e in ents], time, limit=500)
        seen = {f.id for f in facts}
        direct = [h.id for h in self.store.vector("fact", [group_id], qvec, 30, time)
                  if h.id not in seen and h.score >= FACT_MIN_SIMILARITY]
        facts += self.store.get_facts(group_id, direct)
        return facts, qvec

    def _in_collection(self, group_id: str, col: Collection, facts: list[Fact]) -> tuple[list[Fact], dict[str, str]]:
        """Facts with provenance in the collection, and the titles of the documents of their chunks."""
        chunk_ids = self.store.chunk_ids_in(group_id, col.id, [e for f in facts for e in f.episodes])
        kept = [f for f in facts if chunk_ids.intersection(f.episodes)]
        chunks = self.store.get_chunks(group_id, list(chunk_ids))
        docs = {d.id: d.title for d in self.store.get_documents(group_id, list({c.document_id for c in chunks}))}
        titles = {c.id: docs.get(c.document_id, "") for c in chunks}
        return kept, titles

    def _score(self, group_id: str, facts: list[Fact], qvec: np.ndarray) -> dict[str, float]:
        vecs = self.store.embeddings("fact", group_id, [f.id for f in facts])
        q = qvec / (np.linalg.norm(qvec) or 1.0)
        return {fid: float(np.dot(q, v / (np.linalg.norm(v) or 1.0))) for fid, v in vecs.items()}

    def _hits(self, group_id: str, facts: list[Fact], scores: dict[str, float],
              titles: dict[str, str]) -> list[tuple[Fact, EntityRef, EntityRef, float, list[str]]]:
        ents = {e.id: e for e in self.store.get_entities(group_id, list({x for f in facts
                                                                          for x in (f.source_id, f.target_id)}))}
        out = []
        for f in facts:
            s, t = ents.get(f.source_id), ents.get(f.target_id)
            if s is None or t is None:
                continue
            docs = list(dict.fromkeys(titles[e] for e in f.episodes if e in titles))
            out.append((f, EntityRef(s.id, s.name, s.type), EntityRef(t.id, t.name, t.type),
                        round(scores.get(f.id, 0.0), 4), docs))
        return out

    def query_relationships(self, group_id: str, query: str, collection: str, num_results: int = 5,
                            threshold: float = 0.35) -> list[RelationshipHit]:
        col = self._collection(group_id, collection)
        if not 1 <= num_results <= MAX_RESULTS:
            raise InvalidInputError(f"num_results: must be 1-{MAX_RESULTS} (got {num_results})")
        facts, qvec = self._candidate_facts(group_id, query, TimeFilter())
        facts, titles = self._in_collection(group_id, col, facts)
        scores = self._score(group_id, facts, qvec)
        hits = [RelationshipHit(f.id, f.type, f.fact, s, t, f.valid_at, f.invalid_at, sc, docs)
                for f, s, t, sc, docs in self._hits(group_id, facts, scores, titles) if sc >= threshold]
        hits.sort(key=lambda h: -h.score)
        return hits[:num_results]

    def query_temporal(self, group_id: str, query: str, collection: str, valid_from: datetime | None = None,
                       valid_until: datetime | None = None, num_results: int = 10) -> list[TimelineEntry]:
        col = self._collection(group_id, collection)
        if not 1 <= num_results <= MAX_RESULTS:
            raise InvalidInputError(f"num_results: must be 1-{MAX_RESULTS} (got {num_results})")
        lo = as_utc(valid_from) if valid_from else None
        hi = as_utc(valid_until) if valid_until else None
        if lo and hi and lo > hi:
            raise InvalidInputError("valid_from: must not be after valid_until")
        facts, qvec = self._candidate_facts(group_id, query, TimeFilter(include_expired=True))
        facts, titles = self._in_collection(group_id, col, facts)
        scores = self._score(group_id, facts, qvec)
        now = utcnow()
        out: list[TimelineEntry] = []
        for f, s, t, sc, docs in self._hits(group_id, facts, scores, titles):
            start = f.valid_at or f.created_at
            end = f.invalid_at
            if (hi and start > hi) or (lo and end is not None and end < lo):
                continue  # its validity does not overlap the asked range
            current = f.expired_at is None and (end is None or end > now)
            out.append(TimelineEntry(f.id, f.type, f.fact, s, t, f.valid_at, f.invalid_at, sc, docs,
                                     status="current" if current else "superseded", recorded_at=f.created_at))
        out.sort(key=lambda e: (e.valid_from or e.recorded_at or now, e.score), reverse=True)
        return out[:num_results]


__all__ = ["DocumentQueries", "EntityRef", "RelationshipHit", "TimelineEntry"]
