"""What an episode ingestion takes (``EpisodeRequest``, ``RateLimits``) and gives back (``AddEpisodeResult``)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field, fields
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
    """Spec 003 SC-003: how many new entities / relationships conversations may create (None = unlimited).

    Three limits, each on its own count, the tightest one applying:
    - per conversation: at most ``entities_per_conversation`` / ``relationships_per_conversation`` in one
      conversation, ever;
    - burst: at most ``entities_per_burst`` / ``relationships_per_burst`` in all of a group's conversations within
      any ``burst_seconds`` (system time);
    - daily: at most ``entities_per_day`` / ``relationships_per_day`` in all of a group's conversations within any
      24 hours (system time).

    What a limit stops is skipped, not failed: the message is stored with everything else it says, and the result
    tells how many records were skipped (``AddEpisodeResult.rate_limited``) and which limit stopped them
    (``rate_limit_reasons``, the name of the setting). Reinforcing what exists is never limited. Episodes without a
    conversation id are neither counted nor limited. The defaults of the burst and daily limits are far above what
    one person's conversations create (a LoCoMo conversation replayed at full speed stays under them) and stop a
    runaway client or extractor."""

    entities_per_conversation: int | None = 20
    relationships_per_conversation: int | None = 50
    entities_per_burst: int | None = 500
    relationships_per_burst: int | None = 1000
    burst_seconds: float = 60.0
    entities_per_day: int | None = 5000
    relationships_per_day: int | None = 10000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "burst_seconds":
                if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                    raise ValueError(f"burst_seconds: must be a number of seconds above 0, not {value!r}")
            elif value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"{f.name}: must be a whole number of 0 or more, or None (no limit), not {value!r}")

    def windows(self) -> list[tuple[str, float | None, int | None, int | None]]:
        """(name, seconds back from now or None for the whole conversation, entity limit, relationship limit)."""
        return [("conversation", None, self.entities_per_conversation, self.relationships_per_conversation),
                ("burst", self.burst_seconds, self.entities_per_burst, self.relationships_per_burst),
                ("day", 86400.0, self.entities_per_day, self.relationships_per_day)]


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
    """New entities/relationships not created because a rate limit was reached ("entities" / "relationships")."""
    rate_limit_reasons: dict[str, str] = field(default_factory=dict)
    """Which limit stopped them, by the name of its ``RateLimits`` setting ("entities": "entities_per_burst")."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    """Model usage of this episode (calls, prompt/completion tokens, retries, ...); empty without an LLM."""
    extraction_notes: dict[str, Any] = field(default_factory=dict)
    already_ingested: bool = False
    """The same message was ingested before (same group, role, time and content): nothing was written."""


__all__ = ["AddEpisodeResult", "EpisodeRequest", "RateLimits", "message_episode_id"]
