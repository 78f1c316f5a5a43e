"""Entity candidates (spec 001 ``FindEntityCandidates``): lexical name matching plus block similarity.

``score = 0.55 * name_score + 0.45 * weighted_semantic_score`` where ``name_score`` is the best match of a normalized
requested name against the entity's normalized name and aliases (1.0 when equal, else a similarity ratio) and
``weighted_semantic_score = max over the entity's blocks of cosine(description, block) * 1 / (1 + block_level)``.
Only entities (and blocks) the requester owns or that are SHARED count.
"""

from __future__ import annotations

import logging
import time
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from loregraph.errors import InvalidInputError
from loregraph.graph.names import normalize_name
from loregraph.graph.types import Block, Entity
from loregraph.models.embedder import Embedder
from loregraph.schema import Schema
from loregraph.store import Store
from loregraph.store.projection import BlockProjection

log = logging.getLogger("loregraph.search")

NAME_WEIGHT = 0.55
SEMANTIC_WEIGHT = 0.45
MIN_NAME_SIMILARITY = 0.6  # a fuzzy name match below this does not count
MAX_LIMIT = 100


def normalize(name: str) -> str:
    """Trimmed, NFKC-normalized, case-folded, whitespace-collapsed name."""
    return normalize_name(unicodedata.normalize("NFKC", name).replace("\x00", " "))


def name_similarity(a: str, b: str) -> float:
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    sm = SequenceMatcher(None, a, b)
    if sm.real_quick_ratio() < MIN_NAME_SIMILARITY or sm.quick_ratio() < MIN_NAME_SIMILARITY:
        return 0.0  # upper bounds of ratio(): most names are ruled out without the full comparison
    r = sm.ratio()
    return r if r >= MIN_NAME_SIMILARITY else 0.0


def combined_score(name_score: float, weighted_semantic: float) -> float:
    return NAME_WEIGHT * name_score + SEMANTIC_WEIGHT * weighted_semantic


def weighted_similarity(raw: float, level: int) -> float:
    return raw * (1.0 / (1 + level))


@dataclass
class Candidate:
    entity_id: str
    entity_name: str
    entity_type_id: str
    score: float
    name_score: float = 0.0
    semantic_score: float = 0.0
    matched_name: str = ""
    matched_alias: str = ""
    described_by_text: str = ""


def visible(attributes: dict[str, object], user_id: str) -> bool:
    return attributes.get("user_id") == user_id or attributes.get("visibility") == "SHARED"


class CandidateFinder:
    def __init__(self, store: Store, schema: Schema, embedder: Embedder, projection: BlockProjection | None = None):
        self.store = store
        self.schema = schema
        self.embedder = embedder
        self.projection = projection  # when set, block similarity is searched there (spec 001), else in the store

    def _block_hits(self, group_id: str, vec: Any, k: int, user_id: str) -> list[tuple[str, int, float]]:
        """(root entity id, block level, cosine similarity) of the nearest blocks the user may see."""
        if self.projection is not None:
            return [(str(p.get("root_entity_id", "")), int(p.get("block_level", 0)), score)
                    for p, score in self.projection.search(group_id, [float(x) for x in vec], k, user_id)]
        return [(b.entity_id, b.level, raw) for b, raw in self.store.block_vector(group_id, vec, k, user_id)
                if visible(b.attributes, user_id)]

    def find(self, group_id: str, *, names: list[str], potential_type_ids: list[str], short_description: str,
             user_id: str, limit: int | None) -> list[Candidate]:
        t0 = time.perf_counter()
        wanted = [n for n in dict.fromkeys(normalize(x) for x in names) if n]
        desc = short_description.strip()
        if not wanted and not desc:
            raise InvalidInputError("names / short_description: at least one non-empty name or a non-empty "
                                    "short_description is required")
        if not user_id or not user_id.strip():
            raise InvalidInputError("user_id: required (candidates are scoped to the requester)")
        if limit is not None and limit < 0:
            raise InvalidInputError(f"limit: must not be negative (got {limit})")
        n = min(limit or 10, MAX_LIMIT)
        types: list[str] = []
        for i, tid in enumerate(potential_type_ids):
            t = tid[5:] if tid.startswith("node.") else ""
            if t not in self.schema.doc.node_types or not self.schema.is_a(t, "entity"):
                raise InvalidInputError(f"potential_type_ids[{i}]: unknown entity type {tid!r}")
            types.append(t)

        def type_ok(e: Entity) -> bool:
            return (self.schema.is_a(e.type, "entity") and (not types or any(self.schema.is_a(e.type, t)
                                                                             for t in types)))

        ents: dict[str, Entity] = {}
        if wanted:
            for e in self.store.find_entities_by_names(group_id, wanted):
                ents[e.id] = e
            query = " ".join(wanted)
            hits = self.store.fulltext("entity", [group_id], query, max(4 * n, 40))
            for e in self.store.get_entities(group_id, [h.id for h in hits if h.id not in ents]):
                ents[e.id] = e
        semantic: dict[str, float] = {}
        if desc:
            vec = self.embedder.embed_one(desc)
            for root, level, raw in self._block_hits(group_id, vec, max(10 * n, 100), user_id):
                w = weighted_similarity(max(raw, 0.0), level)
                if w > semantic.get(root, -1.0):
                    semantic[root] = w
            missing = [eid for eid in semantic if eid not in ents]
            for e in self.store.get_entities(group_id, missing):
                ents[e.id] = e

        out: list[Candidate] = []
        for e in ents.values():
            if not type_ok(e) or not visible(e.attributes, user_id):
                continue
            best, matched_name, matched_alias = 0.0, "", ""
            for q in wanted:
                s = name_similarity(q, normalize(e.name))
                if s > best:
                    best, matched_name, matched_alias = s, e.name, ""
                for alias in e.aliases:
                    s = name_similarity(q, normalize(alias))
                    if s > best:
                        best, matched_name, matched_alias = s, "", alias
            sem = semantic.get(e.id, 0.0)
            if best <= 0 and sem <= 0:
                continue
            out.append(Candidate(e.id, e.name, f"node.{e.type}", combined_score(best, sem), best, sem,
                                 matched_name, matched_alias))
        out.sort(key=lambda c: (-c.score, c.entity_name, c.entity_id))
        out = out[:n]
        lowest: dict[str, Block] = {}
        for b in self.store.blocks_of_entities(group_id, [c.entity_id for c in out]):
            if visible(b.attributes, user_id) and (b.entity_id not in lowest or b.level < lowest[b.entity_id].level):
                lowest[b.entity_id] = b
        for c in out:
            c.described_by_text = lowest[c.entity_id].text if c.entity_id in lowest else ""
        log.info("entity candidates: group=%s names=%d description=%s found=%d in %.1f ms", group_id, len(wanted),
                 bool(desc), len(out), (time.perf_counter() - t0) * 1e3)
        return out


__all__ = ["Candidate", "CandidateFinder", "combined_score", "normalize", "weighted_similarity"]
