"""The add-episode pipeline (spec 000, section D, steps 9-30).

validate → previous context → load/create episode → candidates → extract → resolve entities →
resolve relations (reinforce, contradict, end) → attributes → mentions → embeddings → one GraphDelta
applied in one transaction → structured result. Nothing is written until the final ``store.apply``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from loregraph.communities import CommunityBuilder
from loregraph.communities import embedding_text as community_embedding_text
from loregraph.errors import NotFoundError, SchemaViolationError
from loregraph.extract.base import (
    CandidateEntity,
    CandidateFact,
    Extraction,
    ExtractionContext,
    Extractor,
    PreviousEpisode,
)
from loregraph.graph.names import normalize_name
from loregraph.graph.types import Community, Entity, Episode, Fact, GraphDelta, utcnow
from loregraph.ingest.request import AddEpisodeResult, EpisodeRequest, RateLimits, message_episode_id
from loregraph.ingest.resolve import DeltaBuilder
from loregraph.models.embedder import Embedder
from loregraph.models.llm import LLMClient
from loregraph.schema import Schema
from loregraph.search.hybrid import rrf
from loregraph.store.base import Store, TimeFilter

log = logging.getLogger("loregraph.ingest")

_BODY_PREFIX = re.compile(r"^[^()\n]{0,200}\((user|assistant|system)\): ", re.S)

PREVIOUS_EPISODES = 5
CANDIDATE_ENTITIES = 10
CANDIDATE_FACTS = 30


def episode_body(content: str, role_type: str | None, role: str | None) -> str:
    """Spec 000: ``"{role or empty}({role_type}): {content}"``."""
    return f"{role or ''}({role_type}): {content}"


# capitalised words and runs of them ("Orion", "Pixel Forge") and CamelCase/digit tokens ("k8s", "GPT4")
_MENTION = re.compile(r"\b[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*|\b\w*\d\w*\b")


def _episode_embedding_text(ep: Episode, text: str) -> str:
    """Who said it matters for retrieval ("what did Ana say about ..."): keep the speaker's name."""
    return f"{ep.role}: {text}" if ep.role else text


def strip_body_prefix(body: str) -> str:
    return _BODY_PREFIX.sub("", body, count=1)


def embedding_input(record: Entity | Fact | Episode | Community) -> str:
    """The text whose embedding a record gets: an entity's name, a fact's text, an episode's content with its
    speaker, a community's name and summary (used by ingestion and by importing records that come without
    vectors)."""
    if isinstance(record, Community):
        return community_embedding_text(record)
    if isinstance(record, Entity):
        return record.name
    if isinstance(record, Fact):
        return record.fact
    return _episode_embedding_text(record, strip_body_prefix(record.content))


class _Timer:
    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.out: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.out[name] = round((now - self.t) * 1e3, 3)
        self.t = now


@dataclass
class _Loaded:
    """The episode being processed, the text to extract from, and its reference time."""

    episode: Episode
    text: str
    reference_time: datetime


class IngestPipeline:
    def __init__(self, store: Store, schema: Schema, embedder: Embedder, extractor: Extractor,
                 limits: RateLimits | None = None, clock: Callable[[], datetime] = utcnow):
        """``clock`` gives the system time of each ingestion (``created_at``, rate-limit windows)."""
        self.store = store
        self.schema = schema
        self.embedder = embedder
        self.extractor = extractor
        self.limits = limits or RateLimits()
        self.clock = clock
        llm = getattr(extractor, "llm", None)
        self.communities = CommunityBuilder(store, schema, embedder, llm if isinstance(llm, LLMClient) else None)

    # ---- public ---------------------------------------------------------------------------------
    def add_episode(self, req: EpisodeRequest) -> AddEpisodeResult:
        t0, timer = time.perf_counter(), _Timer()
        problems = self.schema.validate_entity_types(req.entity_types, req.excluded_entity_types)  # step 10
        if problems:
            raise SchemaViolationError(problems)
        now = self.clock()
        if not req.uuid and not req.episode_id:
            key_id = message_episode_id(req.group_id, req.role_type, req.role, req.reference_time, req.content)
            req = req.model_copy(update={"episode_id": key_id})
            found = self.store.get_episodes(req.group_id, [key_id])
            if found:  # the same message again: ingested once
                log.info("episode %s group=%s: already ingested, skipped", found[0].id, req.group_id)
                return AddEpisodeResult(episode=found[0], mentions=[], entities=[], facts=[], invalidated=[],
                                        duplicates=[], already_ingested=True)
        loaded = self._load_episode(req, now)  # steps 12-13
        context = self._context(req, loaded, timer)  # step 11 + candidates
        extraction = self.extractor.extract(loaded.text, context)
        timer.lap("extract")
        builder = DeltaBuilder(self.store, self.schema, self.embedder, self.limits, req, loaded.episode, context, now)
        builder.resolve_entities(extraction)
        timer.lap("resolve_entities")
        builder.resolve_relations(extraction)
        builder.apply_endings(extraction)
        timer.lap("resolve_relations")
        delta = builder.finish()
        timer.lap("assemble")
        self._embed_missing(delta, builder.keep_embedding)
        timer.lap("embed")
        if req.update_communities:  # step 28: new entities join their neighbours' communities
            self.communities.assign(delta)
            builder.communities = delta.communities
        self.store.apply(delta, self.schema)
        timer.lap("persist")
        if req.update_communities and self.communities.rebuild_due(req.group_id):
            self.communities.build(req.group_id)  # first build, or drift past the threshold
            touched = set(self.store.community_membership(req.group_id, [e.id for e in delta.entities]).values())
            builder.communities = self.store.get_communities(req.group_id, sorted(touched))
            timer.lap("communities")
        result = self._result(req, builder, delta, extraction, timer)
        log.info(
            "episode %s group=%s processed in %.1f ms: entities=%d facts=%d invalidated=%d duplicates=%d "
            "skipped=%d", loaded.episode.id, req.group_id, (time.perf_counter() - t0) * 1e3, len(result.entities),
            len(result.facts), len(result.invalidated), len(result.duplicates), result.counts.get("skipped", 0))
        return result

    # ---- steps ----------------------------------------------------------------------------------
    def _load_episode(self, req: EpisodeRequest, now: datetime) -> _Loaded:
        """An existing episode to reprocess (``req.uuid``), or a new one from the request."""
        gid = req.group_id
        if req.uuid:
            found = self.store.get_episodes(gid, [req.uuid])
            if not found:
                raise NotFoundError(f"episode {req.uuid} not found in group {gid}")
            return _Loaded(found[0], strip_body_prefix(found[0].content), found[0].valid_at)
        body = episode_body(req.content, req.role_type, req.role) \
            if req.build_body and req.source == "message" and req.role_type else req.content
        episode = Episode(**({"id": req.episode_id} if req.episode_id else {}),
                          group_id=gid, name=req.name, content=body, source=req.source,
                          source_description=req.source_description, role=req.role,
                          role_type=req.role_type, valid_at=req.reference_time, created_at=now,
                          conversation_id=req.conversation_id)
        return _Loaded(episode, req.content, req.reference_time)

    def _context(self, req: EpisodeRequest, loaded: _Loaded, timer: _Timer) -> ExtractionContext:
        """What the extractor sees besides the text: previous episodes and bounded candidates."""
        gid, episode = req.group_id, loaded.episode
        if req.previous_episode_ids:
            previous = self.store.get_episodes(gid, req.previous_episode_ids)
        else:
            previous = self.store.recent_episodes(gid, before=loaded.reference_time, source=episode.source,
                                                  limit=PREVIOUS_EPISODES)
        previous = [p for p in previous if p.id != episode.id]
        timer.lap("context")
        # candidates offered to the extractor: bounded, so the prompt never grows with the graph
        candidates = self._candidates(gid, loaded.text, episode)
        cand_facts = self._candidate_facts(gid, candidates)
        timer.lap("candidates")
        return ExtractionContext(
            group_id=gid, reference_time=loaded.reference_time, role_type=req.role_type or episode.role_type,
            role=req.role or episode.role,
            previous_episodes=[PreviousEpisode(p.id, strip_body_prefix(p.content), p.valid_at, p.role_type)
                               for p in previous],
            candidates=candidates, candidate_facts=cand_facts,
            entity_types=req.entity_types or self.schema.node_types,
            relation_types=self.schema.edge_types,
            excluded_entity_types=req.excluded_entity_types or [],
            preprocessing_prompt=req.preprocessing_prompt,
        )

    def _result(self, req: EpisodeRequest, builder: DeltaBuilder, delta: GraphDelta, extraction: Extraction,
                timer: _Timer) -> AddEpisodeResult:
        result = builder.result(delta)
        result.timings_ms = timer.out
        result.counts.update({
            "entities_extracted": len(extraction.entities), "relations_extracted": len(extraction.relations),
            "endings_extracted": len(extraction.endings),
        })
        result.usage = {k: int(v) for k, v in (extraction.notes.get("usage") or {}).items()}
        if req.preprocessing_prompt is not None and "preprocessing" not in extraction.notes:
            from loregraph.extract.prompts import preprocessing_label

            extraction.notes["preprocessing"] = {"requested": preprocessing_label(req.preprocessing_prompt),
                                                 "applied": False}
        result.extraction_notes = dict(extraction.notes)
        if result.rate_limited:
            log.warning("episode %s group=%s hit a rate limit: skipped %s (%s)", result.episode.id, req.group_id,
                        result.rate_limited, result.rate_limit_reasons)
        return result

    # ---- helpers --------------------------------------------------------------------------------
    def _candidates(self, gid: str, text: str, episode: Episode) -> list[CandidateEntity]:
        """Existing entities the message may be about, at most CANDIDATE_ENTITIES: names it mentions (exact,
        aliases included) first, then BM25 and vector hits on the message fused by rank."""
        # the message's embedding doubles as the episode's own (embedded once)
        vec = self.embedder.embed_one(_episode_embedding_text(episode, text))
        episode.embedding = vec.tolist()
        mentioned = [normalize_name(m) for m in _MENTION.findall(text)]
        exact = [e.id for e in self.store.find_entities_by_names(gid, mentioned)]
        bm25 = [h.id for h in self.store.fulltext("entity", [gid], text, CANDIDATE_ENTITIES)]
        near = [h.id for h in self.store.vector("entity", [gid], vec, CANDIDATE_ENTITIES)]
        fused = rrf([bm25, near])
        ranked = list(dict.fromkeys([*exact, *sorted(fused, key=lambda i: -fused[i])]))[:CANDIDATE_ENTITIES]
        ents = self.store.get_entities(gid, ranked)
        return [CandidateEntity(e.id, e.name, e.type, list(e.aliases), e.summary) for e in ents]

    def _candidate_facts(self, gid: str, candidates: list[CandidateEntity]) -> list[CandidateFact]:
        if not candidates:
            return []
        facts = self.store.fact_lines(gid, [c.id for c in candidates], TimeFilter(), limit=CANDIDATE_FACTS)
        names = {c.id: c.name for c in candidates}  # one end of each fact is a candidate: read the others' names
        names.update(self.store.entity_names(gid, {x for f in facts for x in (f[1], f[3])} - set(names)))
        return [CandidateFact(fid, src, names.get(src, "?"), ftype, dst, names.get(dst, "?"), text)
                for fid, src, ftype, dst, text in facts]

    def _embed_missing(self, delta: GraphDelta, keep: set[str]) -> None:
        """Steps 27-29: embeddings for entity names, fact text and episode content, when missing (records in
        ``keep`` were loaded from the store and keep their stored vector)."""
        todo: list[tuple[Any, str]] = []
        for e in delta.entities:
            if e.embedding is None and e.id not in keep:
                todo.append((e, embedding_input(e)))
        for f in delta.facts:
            if f.embedding is None and f.id not in keep:
                todo.append((f, embedding_input(f)))
        for ep in delta.episodes:
            if ep.embedding is None and ep.content:
                todo.append((ep, embedding_input(ep)))
        if not todo:
            return
        vectors = self.embedder.embed([t for _, t in todo])
        for (rec, _), vec in zip(todo, vectors, strict=True):
            rec.embedding = vec.tolist()


__all__ = ["AddEpisodeResult", "EpisodeRequest", "IngestPipeline", "RateLimits", "episode_body",
           "strip_body_prefix"]
