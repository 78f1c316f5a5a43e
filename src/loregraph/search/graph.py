"""Relationship questions over the graph (spec 003): ``query_graph``, ``explain`` and retrieval routing.

``query_graph`` anchors on entities the question names (and on the speaker for "I/my/we"), follows their
current relationships, narrows by relationship and entity type (given, or read off the question's words),
and returns every relationship with the messages it came from. "No relevant entities" is an explicit answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from loregraph.errors import InvalidInputError, NotFoundError
from loregraph.graph.names import normalize_name
from loregraph.graph.types import Community, Entity, Episode, Fact, validate_group_id
from loregraph.models.embedder import Embedder
from loregraph.schema import Schema
from loregraph.store.base import Store, TimeFilter
from loregraph.store.text import terms

Route = Literal["graph", "vector", "combined"]

_WORDS = re.compile(r"[a-z0-9][a-z0-9+#.\-]*")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "our", "ours", "us"})
# question words → relationship types (stems, so "using", "uses" and "used" all match)
RELATION_CUES: dict[str, tuple[str, ...]] = {
    "USES": ("use", "using", "used", "stack", "built", "run", "runs", "technolog"),
    "PREFERS": ("prefer", "favorit", "favourit", "like"),
    "DECIDED": ("decid", "decision", "chose", "choos"),
    "WORKS_WITH": ("colleagu", "coworker", "teammat"),
    "KNOWS": ("know",),
    "DEPENDS_ON": ("depend",),
    "PART_OF": ("member", "belong"),
}
PHRASE_CUES: dict[str, tuple[str, ...]] = {
    "WORKS_ON": ("work on", "working on", "works on", "worked on"),
    "WORKS_WITH": ("work with", "working with", "works with", "worked with"),
    "PART_OF": ("part of",),
}
TYPE_CUES: dict[str, tuple[str, ...]] = {
    "tool": ("tool", "technolog", "librar", "framework", "language", "database", "servic", "softwar"),
    "person": ("people", "person", "who", "colleagu", "coworker", "teammat"),
    "project": ("project",),
    "organization": ("compani", "company", "organi", "team", "employer"),
    "concept": ("concept", "idea", "methodolog", "practic"),
}
NARRATIVE_CUES = ("discuss", "talk", "said", "say", "tell me about", "what happened", "when did", "why",
                  "how did", "remember", "conversation", "story", "describ", "feel", "trip")


@dataclass
class Provenance:
    """One message a record came from."""

    episode_id: str
    message_name: str
    conversation_id: str | None
    valid_at: datetime
    source_description: str
    content: str  # empty when raw content was suppressed

    @classmethod
    def of(cls, ep: Episode) -> Provenance:
        return cls(ep.id, ep.name, ep.conversation_id, ep.valid_at, ep.source_description, ep.content)


@dataclass
class GraphRelationship:
    fact: Fact
    source: Entity
    target: Entity
    provenance: list[Provenance] = field(default_factory=list)


@dataclass
class GraphAnswer:
    query: str
    route: Route
    entities: list[Entity] = field(default_factory=list)
    relationships: list[GraphRelationship] = field(default_factory=list)
    relationship_type: str | None = None
    entity_type: str | None = None
    communities: list[Community] = field(default_factory=list)
    """The communities the anchor entities belong to (clusters of closely related entities)."""

    @property
    def found(self) -> bool:
        return bool(self.entities or self.relationships)

    @property
    def message(self) -> str:
        if not self.found:
            return "No relevant entities or relationships are known yet."
        return f"{len(self.relationships)} relationship(s) about {len(self.entities)} entit(ies)."


@dataclass
class Explanation:
    """Where a record came from: "How do you know about X?"."""

    kind: Literal["entity", "fact"]
    record: Entity | Fact
    sources: list[Provenance]
    ended_by: Provenance | None = None
    """For an ended fact: the message that ended it (when the ending came from a message)."""

    @property
    def conversation_ids(self) -> list[str]:
        return list(dict.fromkeys(s.conversation_id for s in self.sources if s.conversation_id))


def _has(text: str, words: list[str], cues: tuple[str, ...]) -> bool:
    return any(w.startswith(c) for w in words for c in cues if " " not in c) or \
        any(c in text for c in cues if " " in c)


def relation_cue(query: str) -> str | None:
    text = " ".join(_WORDS.findall(query.casefold()))
    for rtype, phrases in PHRASE_CUES.items():
        if any(p in text for p in phrases):
            return rtype
    words = text.split()
    for rtype, cues in RELATION_CUES.items():
        if _has(text, words, cues):
            return rtype
    return None


def entity_type_cue(query: str) -> str | None:
    text = " ".join(_WORDS.findall(query.casefold()))
    words = text.split()
    for etype, cues in TYPE_CUES.items():
        if _has(text, words, cues):
            return etype
    return None


def route(query: str) -> Route:
    """Spec 003 FR-006: relationship questions → graph, narrative ones → vector, both or neither → combined."""
    text = " ".join(_WORDS.findall(query.casefold()))
    graphy = relation_cue(query) is not None or entity_type_cue(query) not in (None, "person")
    narrative = _has(text, text.split(), NARRATIVE_CUES)
    if graphy and not narrative:
        return "graph"
    if narrative and not graphy:
        return "vector"
    return "combined"


class GraphQuery:
    def __init__(self, store: Store, schema: Schema, embedder: Embedder):
        self.store = store
        self.schema = schema
        self.embedder = embedder

    # ---- anchors --------------------------------------------------------------------------------
    def anchors(self, group_id: str, query: str) -> list[Entity]:
        """Entities the question names (by name or alias, whole words) and the speaker for first person."""
        words = _WORDS.findall(query.casefold())
        found: dict[str, Entity] = {}
        if FIRST_PERSON & set(words):
            for e in self.store.speakers(group_id):
                found[e.id] = e
        hits = self.store.fulltext("entity", [group_id], query, 20)
        text = " " + " ".join(words) + " "
        for e in self.store.get_entities(group_id, [h.id for h in hits]):
            names = [normalize_name(n) for n in [e.name, *e.aliases]]
            if any(n and f" {' '.join(_WORDS.findall(n))} " in text for n in names):
                found.setdefault(e.id, e)
        if not found and terms(query):
            # no name matched: accept a very close semantic match only
            vec = self.embedder.embed_one(query)
            for h in self.store.vector("entity", [group_id], vec, 3):
                if h.score >= 0.75:
                    found.update({e.id: e for e in self.store.get_entities(group_id, [h.id])})
        return list(found.values())

    # ---- query_graph ----------------------------------------------------------------------------
    def query_graph(self, query: str, group_id: str, entity_type: str | None = None,
                    relationship_type: str | None = None, limit: int = 25) -> GraphAnswer:
        validate_group_id(group_id)
        if entity_type is not None and entity_type not in self.schema.node_types:
            raise InvalidInputError(f"entity_type: unknown entity type {entity_type!r}")
        if relationship_type is not None and relationship_type not in self.schema.edge_types:
            raise InvalidInputError(f"relationship_type: unknown relationship type {relationship_type!r}")
        answer = GraphAnswer(query=query, route=route(query))
        anchors = self.anchors(group_id, query)
        if not anchors:
            return answer
        rtype = relationship_type or relation_cue(query)
        etype = entity_type or entity_type_cue(query)
        anchor_ids = {e.id for e in anchors}
        facts = self.store.facts_of_entities(group_id, list(anchor_ids), TimeFilter(), limit=500,
                                             newest_first=True)
        ids = {x for f in facts for x in (f.source_id, f.target_id)}
        ents = {e.id: e for e in self.store.get_entities(group_id, list(ids))}

        def other(f: Fact) -> str:
            return f.target_id if f.source_id in anchor_ids else f.source_id

        def keep(f: Fact, rt: str | None, et: str | None) -> bool:
            if f.source_id not in ents or f.target_id not in ents:
                return False
            if rt and f.type != rt:
                return False
            return not et or self.schema.is_a(ents[other(f)].type, et) or other(f) in anchor_ids

        chosen = [f for f in facts if keep(f, rtype, etype)]
        if not chosen and relationship_type is None and entity_type is None and rtype and etype:
            # both cues came from the wording: "what tools do I use?" with no current use still has tools
            chosen = [f for f in facts if keep(f, None, etype)]
        if len(anchors) > 1:
            between = [f for f in chosen if f.source_id in anchor_ids and f.target_id in anchor_ids]
            rest = [f for f in chosen if f not in between]
            chosen = between + rest
        chosen = chosen[:limit]
        provenance = self._provenance(group_id, {e for f in chosen for e in f.episodes})
        answer.relationship_type, answer.entity_type = rtype, etype
        answer.relationships = [
            GraphRelationship(f, ents[f.source_id], ents[f.target_id],
                              [provenance[e] for e in f.episodes if e in provenance]) for f in chosen]
        seen: dict[str, Entity] = {e.id: e for e in anchors}
        for f in chosen:
            for x in (f.source_id, f.target_id):
                seen.setdefault(x, ents[x])
        answer.entities = list(seen.values())
        cids = self.store.community_membership(group_id, [e.id for e in anchors])
        answer.communities = self.store.get_communities(group_id, list(dict.fromkeys(cids[e.id] for e in anchors
                                                                                     if e.id in cids)))
        return answer

    def _provenance(self, group_id: str, episode_ids: set[str]) -> dict[str, Provenance]:
        eps = self.store.get_episodes(group_id, list(episode_ids))
        return {e.id: Provenance.of(e) for e in eps}

    # ---- explain --------------------------------------------------------------------------------
    def explain(self, group_id: str, record_id: str) -> Explanation:
        validate_group_id(group_id)
        ents = self.store.get_entities(group_id, [record_id])
        if ents:
            episode_ids = self.store.mentions_of_entities(group_id, [record_id]).get(record_id, [])
            prov = self._provenance(group_id, set(episode_ids))
            return Explanation("entity", ents[0], [prov[e] for e in episode_ids if e in prov])
        facts = self.store.get_facts(group_id, [record_id])
        if facts:
            ender = facts[0].attributes.get("ended_by")
            prov = self._provenance(group_id, set(facts[0].episodes) | ({ender} if ender else set()))
            sources = sorted((prov[e] for e in facts[0].episodes if e in prov), key=lambda p: p.valid_at)
            return Explanation("fact", facts[0], sources, prov.get(ender) if ender else None)
        raise NotFoundError(f"no entity or fact {record_id} in group {group_id}")
