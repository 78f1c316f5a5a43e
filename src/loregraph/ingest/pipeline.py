"""The add-episode pipeline (spec 000, section D, steps 9-30).

validate → previous context → load/create episode → candidates → extract → resolve entities →
resolve relations (reinforce, contradict, end) → attributes → mentions → embeddings → one GraphDelta
applied in one transaction → structured result. Nothing is written until the final ``store.apply``.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loregraph.extract.base import (
    SPEAKER,
    CandidateEntity,
    CandidateFact,
    Extraction,
    ExtractionContext,
    Extractor,
    PreviousEpisode,
)
from loregraph.graph.names import normalize_name
from loregraph.graph.types import (
    Community,
    DuplicateLink,
    Entity,
    Episode,
    Fact,
    FactInvalidation,
    GraphDelta,
    Mention,
    as_utc,
    utcnow,
    validate_group_id,
)
from loregraph.schema import Schema, SchemaViolationError
from loregraph.search.hybrid import rrf
from loregraph.store.base import NotFoundError, Store, TimeFilter

log = logging.getLogger("loregraph.ingest")

_SPEAKER_NS = uuid.UUID("6f1c1f1e-6a43-4c1b-9d0e-6c6f72656772")
_BODY_PREFIX = re.compile(r"^[^()\n]{0,200}\((user|assistant|system)\): ", re.S)

CREATE_THRESHOLD = 0.7
SKIP_THRESHOLD = 0.5
EMBEDDING_MATCH_THRESHOLD = 0.93
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


def _reason_code(reason: str) -> str:
    """Reasons are short codes ("ended", "superseded"); model output could smuggle message text in."""
    return re.sub(r"[^a-z_]", "", reason.split(":", 1)[0].strip().lower().replace(" ", "_"))[:32] or "ended"


def strip_body_prefix(body: str) -> str:
    return _BODY_PREFIX.sub("", body, count=1)


class EpisodeRequest(BaseModel):
    """One unit to ingest. Validated before anything is written."""

    model_config = ConfigDict(extra="forbid")
    group_id: str
    content: str
    name: str = ""
    role: str | None = None
    role_type: Literal["user", "assistant", "system"] | None = None
    source: Literal["message", "text", "json", "document"] = "message"
    source_description: str = ""
    reference_time: datetime = Field(default_factory=utcnow)
    uuid: str | None = None
    episode_id: str | None = None  # id for a new episode (a queued job's own, so a retry can't duplicate it)
    conversation_id: str | None = None
    previous_episode_ids: list[str] | None = None
    entity_types: list[str] | None = None
    excluded_entity_types: list[str] | None = None
    suppress_content: bool = False
    preprocessing_prompt: bool | str | None = None
    """Per-episode preprocessing prompt (spec 004): None keeps the extractor's, False disables, True /
    'NAME.md' / inline text overrides. Extractors that cannot apply it record it in ``extraction_notes``."""
    update_communities: bool = False
    build_body: bool = True

    @field_validator("group_id")
    @classmethod
    def _group(cls, v: str) -> str:
        return validate_group_id(v)

    @field_validator("reference_time")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        return as_utc(v)


@dataclass(frozen=True)
class RateLimits:
    """Spec 003 SC-003: at most this many new entities / relationships per conversation (None = unlimited).

    Reinforcing what exists is never limited. Episodes without a conversation id are not counted."""

    entities_per_conversation: int | None = 20
    relationships_per_conversation: int | None = 50


@dataclass
class AddEpisodeResult:
    episode: Episode
    mentions: list[Mention]
    entities: list[Entity]
    facts: list[Fact]
    invalidated: list[Fact]
    duplicates: list[DuplicateLink]
    communities: list[Community] = field(default_factory=list)
    speaker_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    rate_limited: dict[str, int] = field(default_factory=dict)
    """New entities/relationships not created because the conversation reached its limit."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    """Model usage of this episode (calls, prompt/completion tokens, retries, ...); empty without an LLM."""
    extraction_notes: dict[str, Any] = field(default_factory=dict)


class _Timer:
    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.out: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.out[name] = round((now - self.t) * 1e3, 3)
        self.t = now


class IngestPipeline:
    def __init__(self, store: Store, schema: Schema, embedder: Any, extractor: Extractor,
                 limits: RateLimits | None = None):
        self.store = store
        self.schema = schema
        self.embedder = embedder
        self.extractor = extractor
        self.limits = limits or RateLimits()

    # ---- public ---------------------------------------------------------------------------------
    def add_episode(self, req: EpisodeRequest) -> AddEpisodeResult:
        t0 = time.perf_counter()
        timer = _Timer()
        gid = req.group_id
        # step 10: type settings
        problems = self.schema.validate_entity_types(req.entity_types, req.excluded_entity_types)
        if problems:
            raise SchemaViolationError(problems)
        now = utcnow()

        # steps 12-13: load or create the episode
        if req.uuid:
            found = self.store.get_episodes(gid, [req.uuid])
            if not found:
                raise NotFoundError(f"episode {req.uuid} not found in group {gid}")
            episode = found[0]
            reference_time = episode.valid_at
            text = strip_body_prefix(episode.content)
        else:
            reference_time = req.reference_time
            body = episode_body(req.content, req.role_type, req.role) \
                if req.build_body and req.source == "message" and req.role_type else req.content
            episode = Episode(**({"id": req.episode_id} if req.episode_id else {}),
                              group_id=gid, name=req.name, content=body, source=req.source,
                              source_description=req.source_description, role=req.role,
                              role_type=req.role_type, valid_at=reference_time, created_at=now,
                              conversation_id=req.conversation_id)
            text = req.content

        # step 11: previous episodes
        if req.previous_episode_ids:
            previous = self.store.get_episodes(gid, req.previous_episode_ids)
        else:
            previous = self.store.recent_episodes(gid, before=reference_time, source=episode.source,
                                                  limit=PREVIOUS_EPISODES)
        previous = [p for p in previous if p.id != episode.id]
        timer.lap("context")

        # candidates offered to the extractor: bounded, so the prompt never grows with the graph
        candidates = self._candidates(gid, text, episode)
        cand_facts = self._candidate_facts(gid, candidates)
        timer.lap("candidates")

        context = ExtractionContext(
            group_id=gid, reference_time=reference_time, role_type=req.role_type or episode.role_type,
            role=req.role or episode.role,
            previous_episodes=[PreviousEpisode(p.id, strip_body_prefix(p.content), p.valid_at, p.role_type)
                               for p in previous],
            candidates=candidates, candidate_facts=cand_facts,
            entity_types=req.entity_types or self.schema.node_types,
            relation_types=self.schema.edge_types,
            excluded_entity_types=req.excluded_entity_types or [],
            preprocessing_prompt=req.preprocessing_prompt,
        )
        extraction = self.extractor.extract(text, context)
        timer.lap("extract")

        state = _DeltaBuilder(self, req, episode, context, now)
        state.resolve_entities(extraction)
        timer.lap("resolve_entities")
        state.resolve_relations(extraction)
        state.apply_endings(extraction)
        timer.lap("resolve_relations")
        delta = state.finish()
        timer.lap("assemble")
        self._embed_missing(delta)
        timer.lap("embed")
        if req.update_communities:
            state.communities = self._communities(delta)
            delta.communities = state.communities
        self.store.apply(delta, self.schema)
        timer.lap("persist")

        result = state.result(delta)
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
            log.warning("episode %s group=%s hit the conversation rate limit: %s", episode.id, gid,
                        result.rate_limited)
        log.info(
            "episode %s group=%s processed in %.1f ms: entities=%d facts=%d invalidated=%d duplicates=%d "
            "skipped=%d", episode.id, gid, (time.perf_counter() - t0) * 1e3, len(result.entities),
            len(result.facts), len(result.invalidated), len(result.duplicates), result.counts.get("skipped", 0))
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
        facts = self.store.facts_of_entities(gid, [c.id for c in candidates], TimeFilter(), limit=CANDIDATE_FACTS)
        ids = {x for f in facts for x in (f.source_id, f.target_id)}
        names = {e.id: e.name for e in self.store.get_entities(gid, list(ids))}
        return [CandidateFact(f.id, f.source_id, names.get(f.source_id, "?"), f.type, f.target_id,
                              names.get(f.target_id, "?"), f.fact) for f in facts]

    def _embed_missing(self, delta: GraphDelta) -> None:
        """Steps 27-29: embeddings for entity names, fact text and episode content, when missing."""
        todo: list[tuple[Any, str]] = []
        for e in delta.entities:
            if e.embedding is None and e.attributes.get("_needs_embedding", True):
                todo.append((e, e.name))
        for f in delta.facts:
            if f.embedding is None and f.attributes.get("_needs_embedding", True):
                todo.append((f, f.fact))
        for ep in delta.episodes:
            if ep.embedding is None and ep.content:
                todo.append((ep, _episode_embedding_text(ep, strip_body_prefix(ep.content))))
        for rec in delta.entities + delta.facts:
            rec.attributes.pop("_needs_embedding", None)
        if not todo:
            return
        vectors = self.embedder.embed([t for _, t in todo])
        for (rec, _), vec in zip(todo, vectors, strict=True):
            rec.embedding = vec.tolist()

    def _communities(self, delta: GraphDelta) -> list[Community]:
        """Step 28 (optional): each touched entity's connected component becomes or updates a community."""
        gid = delta.group_id
        ids = [e.id for e in delta.entities]
        adjacency: dict[str, set[str]] = {}
        for f in delta.facts:
            if f.is_current():
                adjacency.setdefault(f.source_id, set()).add(f.target_id)
                adjacency.setdefault(f.target_id, set()).add(f.source_id)
        communities: list[Community] = []
        assigned: set[str] = set()
        names = {e.id: e for e in delta.entities}
        for eid in ids:
            if eid in assigned:
                continue
            reach = set(self.store.traverse(gid, [eid], 3, TimeFilter()))
            frontier = [eid]
            while frontier:  # include edges created by this very delta
                cur = frontier.pop()
                for nb in adjacency.get(cur, ()):
                    if nb not in reach:
                        reach.add(nb)
                        frontier.append(nb)
            reach.add(eid)
            assigned |= reach
            if len(reach) < 2:
                continue
            existing = self.store.communities_of(gid, list(reach))
            lead = max(reach, key=lambda x: (names[x].mention_count if x in names else 0, x))
            label = names[lead].name if lead in names else "community"
            cid = existing[0] if existing else str(uuid.uuid4())
            communities.append(Community(id=cid, group_id=gid, name=f"{label} and related",
                                         summary=f"{len(reach)} connected entities", member_ids=sorted(reach)))
        return communities


class _DeltaBuilder:
    """Accumulates the resolved entities, facts and invalidations of one episode."""

    def __init__(self, pipe: IngestPipeline, req: EpisodeRequest, episode: Episode, context: ExtractionContext,
                 now: datetime):
        self.pipe = pipe
        self.store = pipe.store
        self.schema = pipe.schema
        self.req = req
        self.gid = req.group_id
        self.episode = episode
        self.context = context
        self.now = now
        self.reference_time = episode.valid_at
        self.entities: dict[str, Entity] = {}  # id -> entity to write
        self.ref_to_id: dict[str, str] = {}
        self.facts: dict[str, Fact] = {}
        self.invalidations: dict[str, FactInvalidation] = {}
        self.invalidated_facts: dict[str, Fact] = {}
        self.duplicates: list[DuplicateLink] = []
        self.communities: list[Community] = []
        self.speaker_id: str | None = None
        self.counts: dict[str, int] = {"skipped": 0, "low_confidence": 0, "reinforced": 0, "rejected_types": 0}
        self.new_fact_ids: set[str] = set()
        self.rate_limited: dict[str, int] = {}
        self.room = self._room(pipe.limits)

    def _room(self, limits: RateLimits) -> dict[str, float]:
        """How many more entities / relationships the conversation may create."""
        conv = self.req.conversation_id
        if conv is None:
            return {"entities": float("inf"), "relationships": float("inf")}
        used = self.store.conversation_counts(self.gid, conv)
        out: dict[str, float] = {}
        for key, limit in (("entities", limits.entities_per_conversation),
                           ("relationships", limits.relationships_per_conversation)):
            out[key] = float("inf") if limit is None else max(0, limit - used[key])
        return out

    def _take(self, key: str) -> bool:
        if self.room[key] <= 0:
            self.rate_limited[key] = self.rate_limited.get(key, 0) + 1
            return False
        self.room[key] -= 1
        return True

    # ---- entities -------------------------------------------------------------------------------
    def _speaker(self) -> str | None:
        role_type = self.context.role_type
        if role_type not in (None, "user"):
            return None
        if self.speaker_id:
            return self.speaker_id
        name = self.context.role or "User"
        sid = str(uuid.uuid5(_SPEAKER_NS, f"{self.gid}\x00{normalize_name(name)}"))
        found = self.store.get_entities(self.gid, [sid])
        if found:
            ent = found[0]
            self._touch(ent, confidence=1.0)
        else:
            ent = Entity(id=sid, group_id=self.gid, name=name, type="person", attributes={"is_speaker": True},
                         confidence=1.0, source_episode_id=self.episode.id, created_at=self.now, updated_at=self.now,
                         conversation_id=self.req.conversation_id)
            self.entities[sid] = ent
        self.speaker_id = sid
        return sid

    def _touch(self, ent: Entity, confidence: float) -> None:
        """Re-mention: count it and let confidence rise toward 1."""
        if ent.id in self.entities:
            return
        ent.mention_count += 1
        ent.confidence = round(min(1.0, max(ent.confidence, confidence) + (1 - ent.confidence) * 0.2), 4)
        ent.updated_at = self.now
        ent.attributes["_needs_embedding"] = False
        if ent.confidence >= CREATE_THRESHOLD:
            ent.attributes.pop("low_confidence", None)
        self.entities[ent.id] = ent
        self.counts["reinforced_entities"] = self.counts.get("reinforced_entities", 0) + 1

    def _clean_attributes(self, etype: str, attrs: dict[str, Any]) -> dict[str, Any]:
        allowed = self.schema.node_properties(etype)
        out = {}
        for k, v in attrs.items():
            pdef = allowed.get(k)
            if pdef is None or k == "is_speaker":
                self.counts["dropped_attributes"] = self.counts.get("dropped_attributes", 0) + 1
                continue
            out[k] = v
        return out

    def resolve_entities(self, extraction: Extraction) -> None:
        allowed_types = set(self.req.entity_types or self.schema.node_types)
        excluded = set(self.req.excluded_entity_types or ())
        offered = {c.id for c in self.context.candidates}
        pending = []
        for x in extraction.entities:
            if not x.name.strip() or x.confidence < SKIP_THRESHOLD:
                self.counts["skipped"] += 1
                continue
            etype = x.type if x.type in self.schema.doc.node_types else "entity"
            if etype != x.type:
                self.counts["rejected_types"] += 1
            if etype in excluded or etype not in allowed_types:
                self.counts["skipped"] += 1
                continue
            pending.append((x, etype))

        # exact names and aliases first, in one lookup
        keys = {normalize_name(n) for x, _ in pending for n in [x.name, *x.aliases]}
        by_name: dict[str, list[Entity]] = {}
        for ent in self.store.find_entities_by_names(self.gid, keys):
            for n in [ent.name, *ent.aliases]:
                by_name.setdefault(normalize_name(n), []).append(ent)

        unresolved = []
        for x, etype in pending:
            if x.existing_id and x.existing_id in offered:
                ent = self.entities.get(x.existing_id) or next(iter(self.store.get_entities(self.gid,
                                                                                             [x.existing_id])), None)
                if ent is not None:
                    self._merge_into(ent, x, etype)
                    continue
            elif x.existing_id:
                self.counts["rejected_ids"] = self.counts.get("rejected_ids", 0) + 1
            # same extraction naming the same thing twice
            local = next((e for e in self.entities.values()
                          if normalize_name(x.name) in {normalize_name(n) for n in [e.name, *e.aliases]}), None)
            if local is not None:
                self._merge_into(local, x, etype)
                continue
            matches: list[Entity] = []
            for n in [x.name, *x.aliases]:
                for e in by_name.get(normalize_name(n), []):
                    if e not in matches:
                        matches.append(e)
            if matches:
                best = self._pick(matches, etype)
                self._merge_into(best, x, etype)
                for other in matches:
                    if other.id != best.id and self._compatible(other.type, best.type):
                        self.duplicates.append(DuplicateLink(group_id=self.gid, entity_id=other.id,
                                                             canonical_id=best.id, created_at=self.now))
                continue
            unresolved.append((x, etype))

        # then embedding similarity, typed
        if unresolved:
            vecs = self.pipe.embedder.embed([x.name for x, _ in unresolved])
            for (x, etype), vec in zip(unresolved, vecs, strict=True):
                hit = None
                for h in self.store.vector("entity", [self.gid], vec, 3):
                    if h.score < EMBEDDING_MATCH_THRESHOLD:
                        break
                    cand = next(iter(self.store.get_entities(self.gid, [h.id])), None)
                    if cand is not None and cand.type == etype and not cand.attributes.get("is_speaker"):
                        hit = cand
                        break
                if hit is not None:
                    self._merge_into(hit, x, etype, alias=x.name)
                    continue
                if not self._take("entities"):
                    continue
                attrs = self._clean_attributes(etype, x.attributes)
                if x.confidence < CREATE_THRESHOLD:
                    attrs["low_confidence"] = True
                    self.counts["low_confidence"] += 1
                ent = Entity(group_id=self.gid, name=x.name.strip(), type=etype,
                             aliases=[a for a in dict.fromkeys(x.aliases)
                                      if normalize_name(a) != normalize_name(x.name)],
                             attributes=attrs, confidence=round(x.confidence, 4), embedding=vec.tolist(),
                             source_episode_id=self.episode.id, created_at=self.now, updated_at=self.now,
                             summary=str(attrs.get("description") or attrs.get("role") or ""),
                             conversation_id=self.req.conversation_id)
                self.entities[ent.id] = ent
                self.ref_to_id[x.ref] = ent.id

    @staticmethod
    def _compatible(a: str, b: str) -> bool:
        return a == b or "entity" in (a, b)

    def _pick(self, matches: list[Entity], etype: str) -> Entity:
        same = [e for e in matches if e.type == etype]
        pool = same or [e for e in matches if self._compatible(e.type, etype)] or matches
        return min(pool, key=lambda e: (e.created_at, e.id))

    def _merge_into(self, ent: Entity, x: Any, etype: str, alias: str | None = None) -> None:
        ent = self.entities.get(ent.id, ent)
        self._touch(ent, x.confidence)
        if ent.type == "entity" and etype != "entity":
            ent.type = etype  # a specific type beats the generic one
        names = {normalize_name(n) for n in [ent.name, *ent.aliases]}
        for a in [alias, *x.aliases, x.name]:
            if a and normalize_name(a) not in names:
                ent.aliases.append(a.strip())
                names.add(normalize_name(a))
        # attributes: conservative — never overwrite a stable value
        for k, v in self._clean_attributes(ent.type, x.attributes).items():
            if k not in ent.attributes or ent.attributes.get("low_confidence"):
                ent.attributes[k] = v
        if not ent.summary:
            ent.summary = str(ent.attributes.get("description") or ent.attributes.get("role") or "")
        self.ref_to_id[x.ref] = ent.id

    def _resolve_ref(self, ref: str | None) -> str | None:
        if ref is None:
            return None
        if ref == SPEAKER:
            return self._speaker()
        return self.ref_to_id.get(ref)

    # ---- relations ------------------------------------------------------------------------------
    def _existing(self, source_id: str, ftype: str | None, target_id: str | None) -> list[Fact]:
        facts = self.store.facts_of_entities(self.gid, [source_id], TimeFilter(), [ftype] if ftype else None)
        out = []
        for f in facts:
            fwd = f.source_id == source_id and (target_id is None or f.target_id == target_id)
            rev = (ftype is None or self.schema.is_symmetric(f.type)) and f.target_id == source_id and \
                (target_id is None or f.source_id == target_id)
            if fwd or rev:
                out.append(self.facts.get(f.id, f))
        return out

    def resolve_relations(self, extraction: Extraction) -> None:
        for r in extraction.relations:
            if r.confidence < SKIP_THRESHOLD:
                self.counts["skipped"] += 1
                continue
            if r.type not in self.schema.doc.edge_types:
                self.counts["rejected_types"] += 1
                continue
            # the speaker becomes an entity only when the other end of the relation exists
            if any(ref != SPEAKER and ref not in self.ref_to_id for ref in (r.source, r.target)):
                self.counts["skipped"] += 1
                continue
            src, dst = self._resolve_ref(r.source), self._resolve_ref(r.target)
            if src is None or dst is None or src == dst:
                self.counts["skipped"] += 1
                continue
            valid_at = as_utc(r.valid_at) if r.valid_at else self.reference_time
            same = [f for f in self._existing(src, r.type, dst) if f.type == r.type]
            if same:
                f = same[0]
                if self.episode.id not in f.episodes:
                    f.episodes.append(self.episode.id)
                f.confidence = round(min(1.0, max(f.confidence, r.confidence) + (1 - f.confidence) * 0.2), 4)
                if f.confidence >= CREATE_THRESHOLD:
                    f.attributes.pop("low_confidence", None)
                f.attributes["_needs_embedding"] = False
                self.facts[f.id] = f
                self.counts["reinforced"] += 1
                continue
            if not self._take("relationships"):
                continue
            attrs: dict[str, Any] = {}
            if r.confidence < CREATE_THRESHOLD:
                attrs["low_confidence"] = True
                self.counts["low_confidence"] += 1
            fact = Fact(group_id=self.gid, source_id=src, target_id=dst, type=r.type, fact=r.fact.strip() or
                        f"{r.source} {r.type} {r.target}", attributes=attrs, confidence=round(r.confidence, 4),
                        episodes=[self.episode.id], valid_at=valid_at, conversation_id=self.req.conversation_id,
                        invalid_at=as_utc(r.invalid_at) if r.invalid_at else None, created_at=self.now)
            if fact.invalid_at is not None:
                fact.expired_at = self.now
            self.facts[fact.id] = fact
            self.new_fact_ids.add(fact.id)
            # contradiction: a single-valued type allows one current target per source
            src_type = self._type_of(src)
            if fact.is_current() and src_type and self.schema.single_valued(r.type, src_type):
                for old in self.store.facts_of_entities(self.gid, [src], TimeFilter(), [r.type]):
                    if old.source_id == src and old.target_id != dst:
                        self._invalidate(old, valid_at, "contradicted")

    def _type_of(self, entity_id: str) -> str | None:
        if entity_id in self.entities:
            return self.entities[entity_id].type
        return self.store.entity_types(self.gid, [entity_id]).get(entity_id)

    def _invalidate(self, old: Fact, when: datetime, reason: str) -> None:
        if old.id in self.new_fact_ids or old.id in self.invalidations:
            return
        if old.valid_at is not None and old.valid_at > when:
            return  # the message is older than the fact it would end: keep the newer fact
        self.invalidations[old.id] = FactInvalidation(fact_id=old.id, invalid_at=when, expired_at=self.now,
                                                      reason=reason)
        old.invalid_at, old.expired_at = when, self.now
        self.invalidated_facts[old.id] = old
        self.facts.pop(old.id, None)

    def apply_endings(self, extraction: Extraction) -> None:
        offered = {f.id for f in self.context.candidate_facts}
        for end in extraction.endings:
            if end.fact_id is not None:
                if end.fact_id not in offered:
                    self.counts["rejected_ids"] = self.counts.get("rejected_ids", 0) + 1
                    continue
                for f in self.store.get_facts(self.gid, [end.fact_id]):
                    if f.is_current():
                        self._invalidate(f, self.reference_time, _reason_code(end.reason))
                continue
            if any(ref is not None and ref != SPEAKER and ref not in self.ref_to_id
                   for ref in (end.source, end.target)):
                self.counts["skipped_endings"] = self.counts.get("skipped_endings", 0) + 1
                continue
            src = self._resolve_ref(end.source)
            dst = self._resolve_ref(end.target) if end.target is not None else None
            if src is None or (end.target is not None and dst is None):
                self.counts["skipped_endings"] = self.counts.get("skipped_endings", 0) + 1
                continue
            for f in self._existing(src, end.type, dst):
                if f.source_id != src and not (f.target_id == src and (dst is None or f.source_id == dst)):
                    continue
                self._invalidate(f, self.reference_time, _reason_code(end.reason))

    # ---- output ---------------------------------------------------------------------------------
    def finish(self) -> GraphDelta:
        ep = self.episode
        entity_ids = list(self.entities)
        mentions = [Mention(group_id=self.gid, episode_id=ep.id, entity_id=e, created_at=self.now)
                    for e in entity_ids]
        fact_ids = list(dict.fromkeys([*ep.fact_ids, *self.facts]))
        ep.fact_ids = fact_ids
        ep.entity_ids = list(dict.fromkeys([*ep.entity_ids, *entity_ids]))
        if self.req.suppress_content:
            ep.content = ""
        self.mentions = mentions
        return GraphDelta(
            group_id=self.gid, episodes=[ep], entities=list(self.entities.values()),
            facts=list(self.facts.values()),
            invalidations=list(self.invalidations.values()), mentions=mentions, duplicates=self.duplicates,
        )

    def result(self, delta: GraphDelta) -> AddEpisodeResult:
        return AddEpisodeResult(
            episode=self.episode, mentions=self.mentions, entities=list(self.entities.values()),
            facts=list(self.facts.values()), invalidated=list(self.invalidated_facts.values()),
            duplicates=self.duplicates, communities=self.communities, speaker_id=self.speaker_id,
            counts=dict(self.counts), rate_limited=dict(self.rate_limited),
        )
