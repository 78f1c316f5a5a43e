"""What an episode ingestion takes (``EpisodeRequest``, ``RateLimits``) and gives back (``AddEpisodeResult``)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loregraph.graph.types import (
    Community,
    DuplicateLink,
    Entity,
    Episode,
    Fact,
    Mention,
    as_utc,
    utcnow,
    validate_group_id,
)


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


_MESSAGE_KEY_NS = uuid.UUID("2f4c9d0e-1b7a-4f55-8a3e-6c6f72656b65")


def message_episode_id(group_id: str, role_type: str | None, role: str | None, when: datetime, content: str) -> str:
    """The id of the episode a message without ``uuid`` creates: derived from what identifies it (group, role,
    time, content), so the same message sent twice is recognised and ingested once."""
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    key = "\x00".join([group_id, role_type or "", role or "", as_utc(when).isoformat(), digest])
    return str(uuid.uuid5(_MESSAGE_KEY_NS, key))


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
    already_ingested: bool = False
    """The same message was ingested before (same group, role, time and content): nothing was written."""


__all__ = ["AddEpisodeResult", "EpisodeRequest", "RateLimits", "message_episode_id"]
