"""Document records (spec 002): a collection inside a group, a document in a collection, and its chunks.

A chunk shares its ``(group_id, id)`` with the episode its extracted facts cite, so a document is a unit of
provenance like a conversation: ``explain`` names it and deleting it removes what only it supported.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from loregraph.graph.types import Record, new_id, utcnow

DEFAULT_METADATA_SCHEMA: dict[str, Any] = {"custom": {}, "system": []}


class Collection(Record):
    id: str = Field(default_factory=new_id)
    group_id: str
    name: str
    description: str
    domain: str | None = None
    domain_scope: str | None = None
    metadata_schema: dict[str, Any] = Field(default_factory=lambda: {"custom": {}, "system": []})
    created_at: datetime = Field(default_factory=utcnow)


class Document(Record):
    id: str = Field(default_factory=new_id)
    group_id: str
    collection_id: str
    title: str
    source: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    chars: int = 0
    chunk_count: int = 0
    content_hash: str = ""
    created_at: datetime = Field(default_factory=utcnow)


class Chunk(Record):
    id: str = Field(default_factory=new_id)
    group_id: str
    collection_id: str
    document_id: str
    ordinal: int
    content: str
    embedding: list[float] | None = None
    created_at: datetime = Field(default_factory=utcnow)


__all__ = ["DEFAULT_METADATA_SCHEMA", "Chunk", "Collection", "Document"]
