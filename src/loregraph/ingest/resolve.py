"""Resolution of one episode's extraction against the graph: entities (offered candidates, names and aliases,
embeddings), relations (reinforce, create, contradict single-valued ones) and endings, gathered into one
``GraphDelta``. Reads the store; never writes it."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from typing import Any

from loregraph.extract.base import SPEAKER, ExtractedEntity, Extraction, ExtractionContext
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
)
from loregraph.ingest.kinds import reaches_a_pet, settle_type
from loregraph.ingest.request import AddEpisodeResult, EpisodeRequest, RateLimits
from loregraph.models.embedder import Embedder
from loregraph.schema import Schema
from loregraph.store.base import Store, TimeFilter

_SPEAKER_NS = uuid.UUID("6f1c1f1e-6a43-4c1b-9d0e-6c6f72656772")

CREATE_THRESHOLD = 0.7
SKIP_THRESHOLD = 0.5
EMBEDDING_MATCH_THRESHOLD = 0.93
REINFORCE_STEP = 0.2
# the default ontology's membership edge: ending "X PART_OF Org" also ends "X PART_OF <a unit that is PART_OF Org>"
MEMBERSHIP_TYPE = "PART_OF"
# an ended use ends a dependence on the same thing too ("we stopped using Finca Rosa": "we depend on Finca Rosa")
ENDS_WITH_IT = {"USES": ("USES", "DEPENDS_ON")}
WORK_TYPE = "WORKS_ON"


def reinforced(confidence: float, seen: float) -> float:
    """Confidence after one more mention seen with confidence ``seen``: rises toward 1, never falls."""
    return round(min(1.0, max(confidence, seen) + (1 - confidence) * REINFORCE_STEP), 4)


def _reason_code(reason: str) -> str:
    """Reasons are short codes ("ended", "superseded"); model output could smuggle message text in."""
    return re.sub(r"[^a-z_]", "", reason.split(":", 1)[0].strip().lower().replace(" ", "_"))[:32] or "ended"


class DeltaBuilder:
    """Accumulates the resolved entities, facts and invalidations of one episode (nothing is written here)."""

    def __init__(self, store: Store, schema: Schema, embedder: Embedder, limits: RateLimits, req: EpisodeRequest,
                 episode: Episode, context: ExtractionContext, now: datetime):
        self.store = store
        self.schema = schema
        self.embedder = embedder
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
        self._speakers: list[Entity] | None = None
        self.counts: dict[str, int] = {"skipped": 0, "low_confidence": 0, "reinforced": 0, "rejected_types": 0}
        self.new_fact_ids: set[str] = set()
        self.rate_limited: dict[str, int] = {}
        self.keep_embedding: set[str] = set()  # loaded records whose stored vector stays (re-mentioned, reinforced)
        self.mentions: list[Mention] = []
        self.room = self._room(limits)

    def _room(self, limits: RateLimits) -> dict[str, float]:
        """How many more entities / relationships the conversation may create: the least any limit leaves.
        ``limit_reason`` keeps, per kind, the name of the setting that leaves the least."""
        self.limit_reason: dict[str, str] = {}
        out = {"entities": float("inf"), "relationships": float("inf")}
        conv = self.req.conversation_id
        if conv is None:
            return out
        for window, seconds, *limit_pair in limits.windows():
            if all(limit is None for limit in limit_pair):
                continue
            used = (self.store.conversation_counts(self.gid, conv) if seconds is None else
                    self.store.creation_counts(self.gid, self.now - timedelta(seconds=seconds)))
            for key, limit in zip(("entities", "relationships"), limit_pair, strict=True):
                if limit is not None and max(0, limit - used[key]) < out[key]:
                    out[key] = max(0, limit - used[key])
                    self.limit_reason[key] = f"{key}_per_{window}"
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
        sid = self._speaker_node_id()
        found = self.store.get_entities(self.gid, [sid]) or [
            e for e in self.store.find_entities_by_names(self.gid, [normalize_name(name)])
            if e.type == "person" and e.attributes.get("is_speaker")]
        if not found:  # named by others before they spoke ("Melanie", or "Mel"): that node is the speaker's own
            full = normalize_name(name)
            first = full.split(" ")[0]
            names = [full, *[first[:k] for k in range(len(first), 1, -1)]]
            earlier = [e for e in self.store.find_entities_by_names(self.gid, names)
                       if e.type == "person" and not e.attributes.get("is_speaker")]
            earlier.sort(key=lambda e: names.index(normalize_name(e.name)) if normalize_name(e.name) in names else 99)
            if earlier and normalize_name(earlier[0].name) in names:
                found = earlier[:1]
                found[0].attributes["is_speaker"] = True
                if normalize_name(found[0].name) != full:  # "Mel" becomes Melanie, with "Mel" as an alias
                    found[0].aliases = [*found[0].aliases, found[0].name]
                    found[0].name = name
        if found:
            ent = found[0]
            self._touch(ent, confidence=1.0)
        else:
            ent = Entity(id=sid, group_id=self.gid, name=name, type="person", attributes={"is_speaker": True},
                         confidence=1.0, source_episode_id=self.episode.id, created_at=self.now, updated_at=self.now,
                         conversation_id=self.req.conversation_id)
            self.entities[sid] = ent
        self.speaker_id = ent.id
        return ent.id

    def _touch(self, ent: Entity, confidence: float) -> None:
        """Re-mention: count it and let confidence rise toward 1."""
        if ent.id in self.entities:
            return
        ent.mention_count += 1
        ent.confidence = reinforced(ent.confidence, confidence)
        ent.updated_at = self.now
        self.keep_embedding.add(ent.id)
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
        """Each extracted entity → an offered candidate, an existing entity (name or alias, then embedding), or a
        new one (within the conversation's limit)."""
        unresolved = [(x, etype) for x, etype in self._admissible(extraction) if not self._resolve_by_name(x, etype)]
        if unresolved:
            self._resolve_by_embedding(unresolved)

    def _admissible(self, extraction: Extraction) -> list[tuple[ExtractedEntity, str]]:
        """Entities with a name, enough confidence and an allowed type (unknown types become ``entity``)."""
        allowed_types = set(self.req.entity_types or self.schema.node_types)
        excluded = set(self.req.excluded_entity_types or ())
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
        # exact names and aliases of all of them, in one lookup
        keys = {normalize_name(n) for x, _ in pending for n in [x.name, *x.aliases]}
        self._by_name: dict[str, list[Entity]] = {}
        for ent in self.store.find_entities_by_names(self.gid, keys):
            for n in [ent.name, *ent.aliases]:
                self._by_name.setdefault(normalize_name(n), []).append(ent)
        return pending

    def _speaker_by_nickname(self, name: str) -> Entity | None:
        """The one speaker of the group whose first name starts with ``name`` ("Mel" → Melanie, "Jo" → Joanna)."""
        nick = normalize_name(name)
        if len(nick) < 2 or " " in nick:
            return None
        if self._speakers is None:
            self._speakers = self.store.speakers(self.gid)
        hits = [e for e in self._speakers
                if e.type == "person" and normalize_name(e.name).split(" ")[0].startswith(nick)]
        return hits[0] if len(hits) == 1 else None

    def _resolve_by_name(self, x: ExtractedEntity, etype: str) -> bool:
        """An offered candidate id, the same name earlier in this extraction, or a stored name/alias; False when
        none matches."""
        if x.existing_id and x.existing_id in {c.id for c in self.context.candidates}:
            offered = self.entities.get(x.existing_id) or next(
                iter(self.store.get_entities(self.gid, [x.existing_id])), None)
            if offered is not None:
                self._merge_into(offered, x, etype)
                return True
        elif x.existing_id:
            self.counts["rejected_ids"] = self.counts.get("rejected_ids", 0) + 1
        local = next((e for e in self.entities.values()
                      if normalize_name(x.name) in {normalize_name(n) for n in [e.name, *e.aliases]}), None)
        if local is not None:
            self._merge_into(local, x, etype)
            return True
        matches: list[Entity] = []
        for n in [x.name, *x.aliases]:
            for e in self._by_name.get(normalize_name(n), []):
                if e not in matches:
                    matches.append(e)
        if not matches:
            speaker = self._speaker_by_nickname(x.name) if etype == "person" else None
            if speaker is None:
                return False
            matches = [speaker]  # "Mel" for the speaker Melanie: one node per person
        best = self._pick(matches, etype)
        self._merge_into(best, x, etype)
        for other in matches:
            if other.id != best.id and self._compatible(other.type, best.type):
                self.duplicates.append(DuplicateLink(group_id=self.gid, entity_id=other.id, canonical_id=best.id,
                                                     created_at=self.now))
        return True

    def _resolve_by_embedding(self, unresolved: list[tuple[ExtractedEntity, str]]) -> None:
        """A near-identical name of the same type (an alias), else a new entity."""
        vecs = self.embedder.embed([x.name for x, _ in unresolved])
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
            elif self._take("entities"):
                self._create(x, etype, vec.tolist())

    def _create(self, x: ExtractedEntity, etype: str, embedding: list[float]) -> None:
        attrs = self._clean_attributes(etype, x.attributes)
        if x.confidence < CREATE_THRESHOLD:
            attrs["low_confidence"] = True
            self.counts["low_confidence"] += 1
        ent = Entity(group_id=self.gid, name=x.name.strip(), type=etype,
                     aliases=[a for a in dict.fromkeys(x.aliases) if normalize_name(a) != normalize_name(x.name)],
                     attributes=attrs, confidence=round(x.confidence, 4), embedding=embedding,
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

    def _merge_into(self, ent: Entity, x: ExtractedEntity, etype: str, alias: str | None = None) -> None:
        ent = self.entities.get(ent.id, ent)
        self._touch(ent, x.confidence)
        settle_type(ent, x, etype)  # a specific type beats the generic one; a pet stays a pet
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
        # with a target, only the facts between the two are read (not every fact of a busy speaker)
        facts = self.store.facts_of_entities(self.gid, [source_id], TimeFilter(), [ftype] if ftype else None,
                                             other_ends=None if target_id is None else [target_id])
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
            if src is None or dst is None or src == dst or reaches_a_pet(r.type, [self.entities.get(src),
                                                                                self.entities.get(dst)]):
                self.counts["skipped"] += 1
                continue
            valid_at = as_utc(r.valid_at) if r.valid_at else self.reference_time
            same = [f for f in self._existing(src, r.type, dst) if f.type == r.type]
            if same:
                f = same[0]
                if self.episode.id not in f.episodes:
                    f.episodes.append(self.episode.id)
                f.confidence = reinforced(f.confidence, r.confidence)
                if f.confidence >= CREATE_THRESHOLD:
                    f.attributes.pop("low_confidence", None)
                self.keep_embedding.add(f.id)
                self.facts[f.id] = f
                self.counts["reinforced"] += 1
                continue
            if not self._take("relationships"):
                continue
            allowed = self.schema.edge_properties(r.type)
            attrs: dict[str, Any] = {k: v for k, v in r.attributes.items() if k in allowed and k != "low_confidence"}
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
                                                      reason=reason, episode_id=self.episode.id)
        old.invalid_at, old.expired_at = when, self.now
        old.attributes.update({"ended_by": self.episode.id, "end_reason": reason})
        self.invalidated_facts[old.id] = old
        self.facts.pop(old.id, None)

    def _end_units(self, member: str, org: str, when: datetime, reason: str) -> None:
        """"I left Hartwell" also ends "User is part of data team" when the data team is part of Hartwell (one
        level: a member's place on the organisation's units)."""
        units = {f.source_id for f in self.store.facts_of_entities(self.gid, [org], TimeFilter(), [MEMBERSHIP_TYPE])
                 if f.target_id == org and f.source_id != member and f.is_current()}
        if not units:
            return
        for f in self._existing(member, MEMBERSHIP_TYPE, None):
            if f.source_id == member and f.target_id in units and f.is_current():
                self._invalidate(f, when, reason)

    def _end_work_there(self, member: str, org: str, when: datetime, reason: str) -> None:
        """"Ravi left Northwind" also ends "Ravi works on Orion" when Orion is Northwind's: a project that is part
        of it, or (for someone else than the speaker) one the speaker works on while still a member of it."""
        projects = {f.source_id for f in self.store.facts_of_entities(self.gid, [org], TimeFilter(),
                                                                      [MEMBERSHIP_TYPE])
                    if f.target_id == org and f.is_current()}
        speaker = self._known_speaker()
        if speaker is not None and speaker != member and any(
                f.source_id == speaker and f.is_current() for f in self._existing(speaker, MEMBERSHIP_TYPE, org)):
            projects |= {f.target_id for f in self._existing(speaker, WORK_TYPE, None)
                         if f.source_id == speaker and f.is_current()}
        for f in self._existing(member, WORK_TYPE, None):
            if f.source_id == member and f.target_id in projects and f.is_current():
                self._invalidate(f, when, reason)

    def _known_speaker(self) -> str | None:
        """The speaker's node if it exists already (never creates it)."""
        if self.speaker_id or self.context.role_type not in (None, "user"):
            return self.speaker_id
        sid = self._speaker_node_id()
        return sid if self.store.get_entities(self.gid, [sid]) else None

    def _speaker_node_id(self) -> str:
        """The id a new speaker node gets in this group (one per group and speaker name)."""
        return str(uuid.uuid5(_SPEAKER_NS, f"{self.gid}\x00{normalize_name(self.context.role or 'User')}"))

    def apply_endings(self, extraction: Extraction) -> None:
        offered = {f.id for f in self.context.candidate_facts}
        for end in extraction.endings:
            if end.fact_id is not None:
                if end.fact_id not in offered:
                    self.counts["rejected_ids"] = self.counts.get("rejected_ids", 0) + 1
                    continue
                for f in self.store.get_facts(self.gid, [end.fact_id]):
                    if f.is_current():
                        self._invalidate(f, as_utc(end.at) if end.at is not None else self.reference_time,
                                         _reason_code(end.reason))
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
            when = as_utc(end.at) if end.at is not None else self.reference_time
            types = ENDS_WITH_IT.get(end.type, (end.type,)) if end.type is not None and dst is not None \
                else (end.type,)
            for f in [f for t in types for f in self._existing(src, t, dst)]:
                if f.source_id != src and not (f.target_id == src and (dst is None or f.source_id == dst)):
                    continue
                self._invalidate(f, when, _reason_code(end.reason))
            if dst is not None and end.type in (MEMBERSHIP_TYPE, None):
                self._end_units(src, dst, when, _reason_code(end.reason))
                self._end_work_there(src, dst, when, _reason_code(end.reason))

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
            rate_limit_reasons={k: self.limit_reason[k] for k in self.rate_limited},
        )


__all__ = ["CREATE_THRESHOLD", "SKIP_THRESHOLD", "DeltaBuilder", "reinforced"]
