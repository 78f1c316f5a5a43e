"""Domain types of the temporal knowledge graph and the GraphDelta that carries every write.

Every record carries ``group_id``: the partition one user or tenant owns. Times are timezone-aware UTC.
Facts are bi-temporal: ``valid_at``/``invalid_at`` say when the fact held in the world,
``created_at``/``expired_at`` when the system learned and retracted it.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loregraph.errors import InvalidInputError

BLOCK_TYPE = "block"
"""The node type blocks have where a schema declares them as nodes (edges such as DESCRIBED_BY point at blocks)."""
GROUP_ID_PATTERN = re.compile(r"^[A-Za-z0-9_\-.:@]{1,128}$")


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def as_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted to UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def validate_group_id(group_id: object, field: str = "group_id") -> str:
    """Return the group id or raise InvalidInputError (a ValueError) naming the field and the rule."""
    # fullmatch: with match, "$" also matches before a final newline, so "alice\n" passed
    if not isinstance(group_id, str) or not GROUP_ID_PATTERN.fullmatch(group_id):
        raise InvalidInputError(
            f"{field}: must be 1-128 characters of letters, digits, '_', '-', '.', ':' or '@' "
            f"(got {group_id!r})"
        )
    return group_id


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    @field_validator("group_id", check_fields=False)
    @classmethod
    def _group(cls, v: str) -> str:
        return validate_group_id(v)

    @field_validator("created_at", "updated_at", "valid_at", "invalid_at", "expired_at", "deleted_at",
                     check_fields=False)
    @classmethod
    def _utc(cls, v: datetime | None) -> datetime | None:
        return as_utc(v) if v is not None else None


EpisodeSource = Literal["message", "text", "json", "document"]


class Episode(Record):
    id: str = Field(default_factory=new_id)
    group_id: str
    name: str = ""
    content: str
    source: EpisodeSource = "message"
    source_description: str = ""
    role: str | None = None
    role_type: str | None = None
    valid_at: datetime
    created_at: datetime = Field(default_factory=utcnow)
    fact_ids: list[str] = Field(default_factory=list)
    entity_ids: list[str] = Field(default_factory=list)
    conversation_id: str | None = None
    embedding: list[float] | None = None


class Entity(Record):
    id: str = Field(default_factory=new_id)
    group_id: str
    name: str
    type: str = "entity"
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    attributes: dict[str, Any] = Field(default_factory=dict)
    embedding: list[float] | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    mention_count: int = Field(default=1, ge=0)
    source_episode_id: str | None = None
    conversation_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    deleted_at: datetime | None = None


class Fact(Record):
    """A relation between two entities: ``source -[type]-> target`` with its text and validity."""

    id: str = Field(default_factory=new_id)
    group_id: str
    source_id: str
    target_id: str
    type: str
    fact: str
    attributes: dict[str, Any] = Field(default_factory=dict)
    embedding: list[float] | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    episodes: list[str] = Field(default_factory=list)
    conversation_id: str | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    expired_at: datetime | None = None

    def is_current(self) -> bool:
        return self.expired_at is None and self.invalid_at is None

    def held_at(self, when: datetime) -> bool:
        """True when the fact was true in the world at ``when`` (and not retracted by then)."""
        when = as_utc(when)
        if self.valid_at is not None and self.valid_at > when:
            return False
        if self.expired_at is not None and self.invalid_at is None:
            return False  # retracted as wrong, not ended in the world
        return self.invalid_at is None or self.invalid_at > when


class Mention(Record):
    group_id: str
    episode_id: str
    entity_id: str
    created_at: datetime = Field(default_factory=utcnow)


class DuplicateLink(Record):
    """``entity_id`` is a duplicate of ``canonical_id``."""

    group_id: str
    entity_id: str
    canonical_id: str
    created_at: datetime = Field(default_factory=utcnow)


class Block(Record):
    """Descriptive text attached to an entity (level 0 = root description); vector-indexed."""

    id: str = Field(default_factory=new_id)
    group_id: str
    entity_id: str
    parent_id: str | None = None
    text: str
    level: int = Field(default=0, ge=0)
    attributes: dict[str, Any] = Field(default_factory=dict)
    embedding: list[float] | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class Community(Record):
    """A cluster of closely related entities of one group, with a name and a summary (searchable)."""

    id: str = Field(default_factory=new_id)
    group_id: str
    name: str
    summary: str = ""
    member_ids: list[str] = Field(default_factory=list)
    embedding: list[float] | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class FactInvalidation(BaseModel):
    """Ends an existing fact: sets ``invalid_at`` (world time) and ``expired_at`` (system time)."""

    model_config = ConfigDict(extra="forbid")
    fact_id: str
    invalid_at: datetime
    expired_at: datetime = Field(default_factory=utcnow)
    reason: str = "superseded"
    episode_id: str | None = None
    """The episode that ended the fact (recorded as ``attributes.ended_by``, so ``explain`` can name it)."""


class GraphDelta(BaseModel):
    """Everything one write changes. Applied by a store in one transaction, after schema validation.

    Entities and facts are upserts by id; ``invalidations`` end existing facts without deleting them.
    """

    model_config = ConfigDict(extra="forbid")
    group_id: str
    episodes: list[Episode] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    invalidations: list[FactInvalidation] = Field(default_factory=list)
    mentions: list[Mention] = Field(default_factory=list)
    duplicates: list[DuplicateLink] = Field(default_factory=list)
    blocks: list[Block] = Field(default_factory=list)
    communities: list[Community] = Field(default_factory=list)
    communities_rebuilt: bool = False
    """The communities listed replace all of the group's (a full rebuild); else they are upserts."""
    community_drift: int = Field(default=0, ge=0)
    """Entities assigned to a community incrementally by this write (counted towards the next rebuild)."""

    @field_validator("group_id")
    @classmethod
    def _group(cls, v: str) -> str:
        return validate_group_id(v)

    def is_empty(self) -> bool:
        return not any((self.episodes, self.entities, self.facts, self.invalidations, self.mentions,
                        self.duplicates, self.blocks, self.communities, self.communities_rebuilt))
