"""The Extractor protocol: one episode (plus context) in, entities + relations + endings out.

Extractors never touch the store. They name entities by ``ref`` (a temporary id local to one
extraction); the pipeline resolves refs to stored entities. The speaking user is the reserved ref
``SPEAKER``; an extractor may also point at an offered candidate entity with ``existing_id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

SPEAKER = "SPEAKER"


@dataclass(slots=True)
class CandidateEntity:
    """An existing entity offered to the extractor as context (found by search before extraction)."""

    id: str
    name: str
    type: str
    aliases: list[str] = field(default_factory=list)
    summary: str = ""


@dataclass(slots=True)
class CandidateFact:
    """A current fact of the graph offered as context, so the extractor can say which ones end."""

    id: str
    source_id: str
    source_name: str
    type: str
    target_id: str
    target_name: str
    fact: str


@dataclass(slots=True)
class PreviousEpisode:
    id: str
    content: str
    valid_at: datetime
    role_type: str | None = None


@dataclass(slots=True)
class ExtractionContext:
    group_id: str
    reference_time: datetime
    role_type: str | None = None
    role: str | None = None
    previous_episodes: list[PreviousEpisode] = field(default_factory=list)
    candidates: list[CandidateEntity] = field(default_factory=list)
    candidate_facts: list[CandidateFact] = field(default_factory=list)
    entity_types: list[str] = field(default_factory=list)
    relation_types: list[str] = field(default_factory=list)
    excluded_entity_types: list[str] = field(default_factory=list)
    custom_instructions: str | None = None
    preprocessing_prompt: bool | str | None = None
    """Per-episode override of the extractor's preprocessing prompt (spec 004): None keeps the extractor's
    setting, False turns it off, True/'NAME.md'/inline text replaces it (``loregraph.extract.prompts``)."""


@dataclass(slots=True)
class ExtractedEntity:
    ref: str
    name: str
    type: str
    confidence: float = 0.8
    aliases: list[str] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)
    existing_id: str | None = None


@dataclass(slots=True)
class ExtractedRelation:
    """``source`` and ``target`` are entity refs (or SPEAKER)."""

    source: str
    type: str
    target: str
    fact: str
    confidence: float = 0.8
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    trace: str = ""
    """Optional: the stage and rule or example phrase that produced it (``loregraph extract --explain``)."""
    attributes: dict[str, Any] = field(default_factory=dict)
    """Optional fact attributes (schema edge properties), e.g. ``time_phrase``: the words that set ``valid_at``."""


@dataclass(slots=True)
class ExtractedEnding:
    """A relationship the message says has ended.

    Either ``fact_id`` names an offered candidate fact, or ``source``/``type``/``target`` describe it
    by refs; ``target`` or ``type`` may be None to mean "any" (e.g. "I'm not working on X any more"
    names the target and type; "Ana left Umbrella Corp" names source, type and target).
    """

    fact_id: str | None = None
    source: str | None = None
    type: str | None = None
    target: str | None = None
    reason: str = "ended"
    at: datetime | None = None
    """When it ended, if the message says ("finished it last week"); else the message time."""


@dataclass(slots=True)
class Extraction:
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    endings: list[ExtractedEnding] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Extractor(Protocol):
    name: str

    def extract(self, content: str, context: ExtractionContext) -> Extraction: ...
