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

from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.types import Block, Community, Entity, Episode, Fact, GraphDelta
from loregraph.jobs.base import JobQueue
from loregraph.schema import Schema

SearchKind = Literal["episode", "entity", "fact", "chunk", "community"]
ExportKind = Literal["episode", "entity", "block", "fact", "mention", "duplicate", "community", "collection",
                     "document", "chunk"]
EXPORT_KINDS: tuple[ExportKind, ...] = ("episode", "entity", "block", "fact", "mention", "duplicate", "community",
                                        "collection", "document", "chunk")
"""Every kind of record a group holds, in an order that can be written back (blocks before the facts that may
point at them; documents with their chunks)."""
EXPORT_KEYS: dict[ExportKind, tuple[str, ...]] = {
    "mention": ("episode_id", "entity_id"), "duplicate": ("entity_id", "canonical_id"),
    **{k: ("id",) for k in ("episode", "entity", "block", "fact", "community", "collection", "document", "chunk")},
}
"""The fields a kind's records are ordered (and paged) by within a group."""


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
    def embedding_model(self) -> tuple[str, int] | None:
        """The recorded embedding model and dimension, if any."""
        ...

    # writes
    def apply(self, delta: GraphDelta, schema: Schema) -> None: ...
    def delete_episode(self, group_id: str, episode_id: str) -> dict[str, int]: ...
    def delete_group(self, group_id: str) -> dict[str, int]: ...
    def delete_fact(self, group_id: str, fact_id: str) -> int: ...
    def apply_hook(self, hook: Callable[[Any], None]) -> AbstractContextManager[None]: ...
    def groups_of(self, kind: SearchKind, record_id: str, within: Sequence[str] | None) -> list[str]: ...

    # reads by id
    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]: ...
    def episode_places(self, group_id: str, ids: Sequence[str]) -> dict[str, tuple[str | None, datetime]]: ...
    def episode_texts(self, group_id: str, ids: Sequence[str]) -> dict[str, tuple[str | None, str]]: ...
    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]: ...
    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]: ...
    def entity_types(self, group_id: str, ids: Iterable[str]) -> dict[str, str]: ...
    def entity_names(self, group_id: str, ids: Iterable[str]) -> dict[str, str]:
        """Names of live entities by id (no other column read: cheap labels)."""
        ...

    # lookups
    def recent_episodes(self, group_id: str, *, before: datetime | None, source: str | None,
                        limit: int) -> list[Episode]: ...
    def adjacent_episodes(self, group_id: str, episode_id: str, n: int = 1) -> list[Episode]: ...
    def find_entities_by_names(self, group_id: str, names_norm: Iterable[str]) -> list[Entity]: ...
    def list_entities(self, group_id: str, *, entity_type: str | None = None,
                      limit: int = 1000, offset: int = 0) -> list[Entity]: ...
    def facts_of_entities(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                          types: Sequence[str] | None = None, limit: int = 1000,
                          newest_first: bool = False, other_ends: Sequence[str] | None = None) -> list[Fact]:
        """Facts touching any of ``entity_ids``, valid under ``time``; with ``other_ends``, only those whose
        other end is one of them."""
        ...
    def fact_lines(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str, str, str]]:
        """(id, source id, type, target id, text) of ``facts_of_entities``' facts, in its order: a light read."""
        ...
    def fact_edges(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str]]: ...
    def fact_edges_two_hops(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter, limit: int,
                            width: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """The graph expansion's reads: ``fact_edges`` of ``entity_ids`` (hop 1), and ``fact_edges`` of the
        ``second_hop_starts`` those facts reach (hop 2; none when ``width`` is 0)."""
        ...
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

    # ---- communities (issue 15): clusters of entities, searchable (search kind "community") ----------------
    def current_edges(self, group_id: str, limit: int) -> list[tuple[str, str, str, float]]:
        """(fact id, source id, target id, confidence) of the group's current facts between live entities,
        oldest first, at most ``limit``: what community detection clusters."""
        ...
    def list_communities(self, group_id: str, limit: int, offset: int = 0) -> list[Community]:
        """The group's communities, largest first, each with its member ids (no embedding)."""
        ...
    def get_communities(self, group_id: str, ids: Sequence[str]) -> list[Community]: ...
    def community_membership(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, str]:
        """entity id -> the id of the community it belongs to (entities in none are left out)."""
        ...
    def community_state(self, group_id: str) -> dict[str, int] | None:
        """The last full build of the group's communities: members then, communities, and ``drift`` (entities
        assigned incrementally since); None before the first build."""
        ...
    def conversation_counts(self, group_id: str, conversation_id: str) -> dict[str, int]: ...
    def creation_counts(self, group_id: str, since: datetime) -> dict[str, int]:
        """Entities and relationships the group's conversations created at or after ``since`` (system time)."""
        ...
    def speakers(self, group_id: str) -> list[Entity]: ...
    def count(self, group_id: str) -> dict[str, int]: ...
    def export_records(self, record_kind: ExportKind, group_id: str, after: Sequence[str] | None, limit: int, *,
                       embeddings: bool = True, document_id: str | None = None) -> list[Any]:
        """One page of the group's records of a kind, everything included (soft-deleted entities, ended facts,
        community members), ordered by ``EXPORT_KEYS[record_kind]`` and starting after the key ``after``;
        embeddings when asked; chunks of one document when ``document_id`` is given."""
        ...
    def groups(self) -> list[str]: ...

    # ---- documents (spec 002): collections, documents, chunks (search kind "chunk") ----------------------
    def transaction(self, group_id: str) -> AbstractContextManager[Any]:
        """One write transaction of a group; every write inside it (``apply`` included) commits or rolls back
        with it."""
        ...
    def create_collection(self, collection: Collection) -> None: ...
    def get_collection(self, group_id: str, name: str) -> Collection | None: ...
    def list_collections(self, group_id: str) -> list[tuple[Collection, int]]: ...
    def delete_collection(self, group_id: str, collection_id: str) -> dict[str, int]: ...
    def put_document(self, document: Document, chunks: Sequence[Chunk]) -> None: ...
    def find_document(self, group_id: str, collection_id: str, title: str) -> Document | None: ...
    def get_documents(self, group_id: str, ids: Sequence[str]) -> list[Document]: ...
    def list_documents(self, group_id: str, collection_id: str, limit: int, offset: int = 0) -> list[Document]: ...
    def delete_document(self, group_id: str, document_id: str) -> dict[str, int]: ...
    def get_chunks(self, group_id: str, ids: Sequence[str]) -> list[Chunk]: ...
    def chunk_ids_in(self, group_id: str, collection_id: str, ids: Sequence[str]) -> set[str]: ...
    def search_chunks(self, group_id: str, collection_id: str, embedding: np.ndarray, limit: int) -> list[Hit]:
        """Exact cosine neighbours among one collection's chunks (score = cosine similarity), best first."""
        ...
    def fulltext_chunks(self, group_id: str, collection_id: str, query: str, limit: int) -> list[Hit]: ...
    # blocks (issue 14: the knowledge interface)
    def node_types(self, group_id: str, ids: Iterable[str]) -> dict[str, str]:
        """Types of the group's nodes by id (entities' types; ``block`` for blocks)."""
        ...
    def get_blocks(self, group_id: str, ids: Sequence[str]) -> list[Block]: ...
    def blocks_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> list[Block]: ...
    def block_vector(self, group_id: str, embedding: np.ndarray, limit: int,
                     user_id: str | None = None) -> list[tuple[Block, float]]:
        """The group's blocks nearest to ``embedding`` by cosine similarity, best first; with ``user_id`` only the
        blocks that user owns or that are SHARED (filtered inside the search, not after it)."""
        ...


def second_hop_starts(edges: Sequence[tuple[str, str, str]], entity_ids: Sequence[str], width: int) -> list[str]:
    """Where the graph expansion's second hop starts: the first ``width`` other ends (not among ``entity_ids``) of
    the first hop's ``edges`` (fact id, source id, target id; newest first), ranked by the position in
    ``entity_ids`` of the entity each was first reached from, then by when it was first reached."""
    rank_of = {e: i for i, e in enumerate(entity_ids)}
    reached: dict[str, int] = {}
    for _, src, dst in edges:
        seed = src if src in rank_of else dst
        other = dst if seed == src else src
        if other not in rank_of:
            reached.setdefault(other, rank_of.get(seed, len(rank_of)))
    return sorted(reached, key=lambda x: reached[x])[:width]

