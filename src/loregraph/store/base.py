"""The Store protocol: the narrow set of primitives the pipelines and search compose.

Every method takes the group (or groups) it works in; no method returns rows of another group.
All writes go through ``apply(delta)``, one transaction per call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import numpy as np

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from loregraph.jobs.base import JobQueue
from loregraph.schema import Schema

SearchKind = Literal["episode", "entity", "fact"]


@dataclass(frozen=True, slots=True)
class TimeFilter:
    """Which facts count: current ones (default) or those true at ``as_of``."""

    as_of: datetime | None = None
    include_expired: bool = False


@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """What a backend allows, so callers never branch on its class."""

    concurrent_readers: int = 1
    """How many threads may read at once (``Memory`` sizes its read pool by it)."""
    shared_queue: bool = False
    """Any number of worker processes may share its job queue (else one per database)."""


@dataclass(slots=True)
class Hit:
    id: str
    score: float


class Store(Protocol):
    url: str
    label: str  # how messages name the database (a path, or a URL without its password)
    capabilities: StoreCapabilities
    build_vector_indexes: bool  # False during a bulk import; checkpoint() then builds what is due

    @property
    def schema_version(self) -> int: ...
    def open_queue(self, *, max_attempts: int = 3) -> JobQueue:
        """The durable job queue kept in this store's database."""
        ...

    def close(self) -> None: ...
    def checkpoint(self) -> None: ...

    # metadata
    def ensure_embedder(self, name: str, dim: int) -> None: ...

    # writes
    def apply(self, delta: GraphDelta, schema: Schema) -> None: ...
    def delete_episode(self, group_id: str, episode_id: str) -> dict[str, int]: ...
    def delete_group(self, group_id: str) -> dict[str, int]: ...
    def delete_fact(self, group_id: str, fact_id: str) -> int: ...
    def apply_hook(self, hook: Callable[[Any], None]) -> AbstractContextManager[None]: ...
    def groups_of(self, kind: SearchKind, record_id: str, within: Sequence[str] | None) -> list[str]: ...

    # reads by id
    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]: ...
    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]: ...
    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]: ...
    def entity_types(self, group_id: str, ids: Iterable[str]) -> dict[str, str]: ...

    # lookups
    def recent_episodes(self, group_id: str, *, before: datetime | None, source: str | None,
                        limit: int) -> list[Episode]: ...
    def adjacent_episodes(self, group_id: str, episode_id: str, n: int = 1) -> list[Episode]: ...
    def find_entities_by_names(self, group_id: str, names_norm: Iterable[str]) -> list[Entity]: ...
    def list_entities(self, group_id: str, *, entity_type: str | None = None,
                      limit: int = 1000) -> list[Entity]: ...
    def facts_of_entities(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                          types: Sequence[str] | None = None, limit: int = 1000,
                          newest_first: bool = False) -> list[Fact]: ...
    def fact_edges(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str]]: ...
    def list_facts(self, group_id: str, time: TimeFilter, limit: int = 10000) -> list[Fact]: ...
    def facts_of_episodes(self, group_id: str, episode_ids: Sequence[str]) -> dict[str, list[str]]: ...
    def mentions_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, list[str]]: ...

    # retrieval primitives
    def fulltext(self, kind: SearchKind, group_ids: Sequence[str], query: str, limit: int,
                 time: TimeFilter | None = None) -> list[Hit]:
        """BM25 hits; facts filtered by ``time`` when given."""
        ...
    def vector(self, kind: SearchKind, group_ids: Sequence[str], embedding: np.ndarray, limit: int,
               time: TimeFilter | None = None) -> list[Hit]:
        """Nearest neighbours by cosine; facts filtered by ``time`` when given."""
        ...
    def traverse(self, group_id: str, start_ids: Sequence[str], depth: int,
                 time: TimeFilter) -> dict[str, int]: ...
    def neighbours_among(self, group_id: str, center: str, candidates: Sequence[str],
                         time: TimeFilter) -> set[str]: ...
    def embeddings(self, kind: SearchKind, group_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...
    def communities_of(self, group_id: str, entity_ids: Sequence[str]) -> list[str]: ...
    def conversation_counts(self, group_id: str, conversation_id: str) -> dict[str, int]: ...
    def speakers(self, group_id: str) -> list[Entity]: ...
    def count(self, group_id: str) -> dict[str, int]: ...
    def groups(self) -> list[str]: ...
