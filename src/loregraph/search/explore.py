"""Pieces of a group's graph for the explorer (``/ui``): a page of entities with the facts among them, one
entity's neighbourhood, one entity's timeline. Always a bounded piece, never the whole graph."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from loregraph.errors import InvalidInputError, NotFoundError
from loregraph.graph.types import Entity, Fact, as_utc, validate_group_id
from loregraph.store.base import Store, TimeFilter

MAX_NODES = 200
MAX_EDGES = 1000
MAX_OFFSET = 1_000_000_000


@dataclass
class GraphPiece:
    """Entities (each with its community id, if any) and the facts among them valid under the time asked."""

    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    communities: dict[str, str] = field(default_factory=dict)
    """entity id -> community id"""
    community_names: dict[str, str] = field(default_factory=dict)
    more: bool = False
    """More entities follow (the next page's offset is offset + limit)."""
    time_min: datetime | None = None
    time_max: datetime | None = None
    """The earliest and latest times (valid_at, invalid_at) of these entities' facts, ended ones included."""


def _time(as_of: datetime | None) -> TimeFilter:
    return TimeFilter(as_of=as_utc(as_of)) if as_of else TimeFilter()


def _check(limit: int, name: str = "limit", most: int = MAX_NODES) -> None:
    if not 1 <= limit <= most:
        raise InvalidInputError(f"{name}: must be between 1 and {most}")


class GraphExplorer:
    def __init__(self, store: Store):
        self.store = store

    def _finish(self, group_id: str, piece: GraphPiece) -> GraphPiece:
        ids = [e.id for e in piece.entities]
        piece.communities = self.store.community_membership(group_id, ids)
        piece.community_names = {c.id: c.name for c in self.store.get_communities(
            group_id, sorted(set(piece.communities.values())))}
        return piece

    def page(self, group_id: str, *, as_of: datetime | None = None, limit: int = 100, offset: int = 0) -> GraphPiece:
        """Entities in order of creation (``limit`` from ``offset``) and the facts among them."""
        validate_group_id(group_id)
        _check(limit)
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidInputError(f"offset: must be between 0 and {MAX_OFFSET}")
        ents = self.store.list_entities(group_id, limit=limit + 1, offset=offset)
        piece = GraphPiece(entities=ents[:limit], more=len(ents) > limit)
        ids = {e.id for e in piece.entities}
        facts = self.store.facts_of_entities(group_id, list(ids), _time(as_of), limit=MAX_EDGES)
        piece.facts = [f for f in facts if f.source_id in ids and f.target_id in ids]
        ever = self.store.facts_of_entities(group_id, list(ids), TimeFilter(include_expired=True), limit=MAX_EDGES)
        times = [t for f in ever for t in (f.valid_at, f.invalid_at) if t is not None]
        if times:
            piece.time_min, piece.time_max = min(times), max(times)
        return self._finish(group_id, piece)

    def facts_of(self, group_id: str, entity_ids: list[str], *, as_of: datetime | None = None) -> list[Fact]:
        """Facts touching any of the entities (at most 50) valid under ``as_of``: a client redraws the edges
        among what it shows as the time changes."""
        validate_group_id(group_id)
        if not 1 <= len(entity_ids) <= 50:
            raise InvalidInputError("entity_ids: give between 1 and 50 entity ids")
        return self.store.facts_of_entities(group_id, entity_ids, _time(as_of), limit=MAX_EDGES)

    def neighbourhood(self, group_id: str, entity_ids: list[str], *, as_of: datetime | None = None,
                      limit: int = 50) -> GraphPiece:
        """The entities and their neighbours by facts valid under ``as_of`` (at most ``limit`` neighbours)."""
        validate_group_id(group_id)
        _check(limit)
        if not 1 <= len(entity_ids) <= 20:
            raise InvalidInputError("entity_ids: give between 1 and 20 entity ids")
        centre = self.store.get_entities(group_id, entity_ids)
        if not centre:
            raise NotFoundError(f"entity {entity_ids[0]} not found in group {group_id}")
        facts = self.store.facts_of_entities(group_id, [e.id for e in centre], _time(as_of), limit=MAX_EDGES,
                                             newest_first=True)
        seen = {e.id for e in centre}
        others: list[str] = []
        for f in facts:
            for x in (f.source_id, f.target_id):
                if x not in seen and len(others) < limit:
                    seen.add(x)
                    others.append(x)
        ents = centre + self.store.get_entities(group_id, others)
        keep = {e.id for e in ents}
        piece = GraphPiece(entities=ents, facts=[f for f in facts if f.source_id in keep and f.target_id in keep],
                           more=len(others) >= limit)
        return self._finish(group_id, piece)

    def timeline(self, group_id: str, entity_id: str, *, limit: int = 200) -> tuple[Entity, list[Fact], dict[str, str]]:
        """Every fact of one entity ever (current and ended), oldest first by when it became true, with the
        names of the entities at their other ends."""
        validate_group_id(group_id)
        _check(limit, most=1000)
        found = self.store.get_entities(group_id, [entity_id])
        if not found:
            raise NotFoundError(f"entity {entity_id} not found in group {group_id}")
        facts = self.store.facts_of_entities(group_id, [entity_id], TimeFilter(include_expired=True), limit=limit)
        facts.sort(key=lambda f: (f.valid_at or f.created_at, f.created_at, f.id))
        others = {x for f in facts for x in (f.source_id, f.target_id)}
        names = {e.id: e.name for e in self.store.get_entities(group_id, list(others))}
        return found[0], facts, names


__all__ = ["MAX_NODES", "MAX_OFFSET", "GraphExplorer", "GraphPiece"]
