"""Request and response bodies of the REST service (Graphiti-compatible where Graphiti has the route).

Validation happens here, at the boundary: a bad field is a 422 that names it, before anything is queued
or written. loregraph's own bodies refuse unknown fields; the bodies of Graphiti's routes ignore them, as
Graphiti's models do (each unknown name is logged once, never its value).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StringConstraints, model_validator

from loregraph.graph.messages import Message, RecordId, Text, Timestamp, valid_text
from loregraph.graph.types import GROUP_ID_PATTERN, validate_group_id


def _group(v: str) -> str:
    return validate_group_id(v, "group_id")


Query = Annotated[str, StringConstraints(min_length=1, max_length=4096), AfterValidator(valid_text)]
EntityName = Annotated[str, StringConstraints(min_length=1, max_length=512), AfterValidator(valid_text)]
Summary = Annotated[str, StringConstraints(max_length=8192), AfterValidator(valid_text)]
TypeName = Annotated[str, StringConstraints(max_length=64), AfterValidator(valid_text)]
MAX_LIST_ITEMS = 256  # group ids or filter values in one request: bounded, so one request cannot stall others
GroupId = Annotated[str, Field(min_length=1, max_length=128, pattern=GROUP_ID_PATTERN.pattern, examples=["alice"]),
                    AfterValidator(_group)]


class _Body(BaseModel):
    """A body of loregraph's own routes: unknown fields are refused (422 naming them)."""

    model_config = ConfigDict(extra="forbid")


# ---- lenient bodies of Graphiti's routes ----------------------------------------------------------
log = logging.getLogger("loregraph.api")
UNKNOWN_NAMES_LOGGED = 256  # distinct unknown names logged per process; later new names are not
UNKNOWN_NAME_CHARS = 64
_unknown_seen: set[str] = set()


def note_unknown_fields(model: type[BaseModel], data: Any) -> None:
    """Log each unknown field name of a Graphiti-route body once per process: the name only (shortened and
    quoted), never the value."""
    if not isinstance(data, dict):
        return
    for key in data:
        if not isinstance(key, str) or key in model.model_fields:
            continue
        name = key[:UNKNOWN_NAME_CHARS]
        if name in _unknown_seen or len(_unknown_seen) > UNKNOWN_NAMES_LOGGED:
            continue
        _unknown_seen.add(name)
        if len(_unknown_seen) > UNKNOWN_NAMES_LOGGED:
            log.info("more unknown field names ignored; they are no longer logged")
        else:
            log.info("ignored unknown field %r (first seen in %s; logged once per name)", name, model.__name__)


class _Lenient(BaseModel):
    """A body of one of Graphiti's routes: unknown fields are ignored, as by Graphiti's own models."""

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _unknown(cls, data: Any) -> Any:
        note_unknown_fields(cls, data)
        return data


# ---- spec 000: add messages ---------------------------------------------------------------------
class MessageIn(_Lenient, Message):
    """The one message model (loregraph.graph.messages) as Graphiti's routes read it: unknown fields ignored.
    Only the declared fields reach the queue (``to_payload``)."""

    model_config = ConfigDict(extra="ignore")


class ContextMessage(MessageIn):
    """A message that only shapes a query (``/get-memory``): nothing is stored, so it may be empty."""

    content: Text


class AddMessagesRequest(_Lenient):
    group_id: GroupId
    messages: list[MessageIn]


class Result(BaseModel):
    message: str
    success: bool


# ---- Graphiti-compatible routes -----------------------------------------------------------------
MAX_FACTS = 200
QUERY_CHARS = 4096


def _fact_count(v: int) -> int:
    return min(max(v, 0), MAX_FACTS)


FactCount = Annotated[StrictInt, Field(description=f"0 or less: no facts; above {MAX_FACTS}: {MAX_FACTS}"),
                      AfterValidator(_fact_count)]


class SearchQuery(_Lenient):
    group_ids: list[GroupId] | None = Field(None, max_length=MAX_LIST_ITEMS,
                                            description="Default: every group the key may read")
    query: Annotated[Text, Field(description=f"Blank: no facts; only the first {QUERY_CHARS} characters are used"),
                     AfterValidator(lambda v: v[:QUERY_CHARS])]
    max_facts: FactCount = 10
    as_of: Timestamp | None = Field(None, description="Facts true at this time (world time), ended ones included")
    include_ended: bool = Field(False, description="Current and ended facts, each with its validity interval")
    min_relevance: float | None = Field(None, ge=0.0, le=1.0,
                                        description="Relevance floor (cosine of the query to its closest fact or "
                                                    "entity); default: the server's min_relevance; 0: none")


class FactResult(BaseModel):
    uuid: str
    name: str
    fact: str
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    source_node_uuid: str
    target_node_uuid: str
    episodes: list[str]


class SearchResults(BaseModel):
    facts: list[FactResult]
    below_floor: bool = Field(False, description="True when the groups hold memory but nothing cleared the "
                                                 "relevance floor: no facts, on purpose")
    relevance: float | None = Field(None, description="Cosine of the query to its closest fact or entity")


class GetMemoryRequest(_Lenient):
    group_id: GroupId
    max_facts: FactCount = 10
    center_node_uuid: RecordId | None = None
    messages: list[ContextMessage] = Field(description="No messages: no facts")


class GetMemoryResponse(BaseModel):
    facts: list[FactResult]


class AddEntityNodeRequest(_Lenient):
    uuid: RecordId
    group_id: GroupId
    name: EntityName
    summary: Summary = ""


class EntityNode(BaseModel):
    uuid: str
    name: str
    group_id: str
    labels: list[str]
    created_at: datetime
    summary: str
    attributes: dict[str, Any]
    name_embedding: list[float] | None = Field(None, description="Always null: loregraph does not return vectors")


class EpisodicNode(BaseModel):
    uuid: str
    name: str
    group_id: str
    labels: list[str]
    created_at: datetime
    source: str
    source_description: str
    content: str
    valid_at: datetime
    entity_edges: list[str]
    episode_metadata: dict[str, Any] | None = Field(None, description="Always null: loregraph keeps none")


# ---- loregraph's own routes ---------------------------------------------------------------------
class Entity(BaseModel):
    uuid: str
    group_id: str
    name: str
    type: str
    aliases: list[str]
    summary: str
    attributes: dict[str, Any]
    confidence: float
    mention_count: int
    created_at: datetime
    updated_at: datetime


class Fact(FactResult):
    group_id: str
    type: str
    confidence: float
    attributes: dict[str, Any]


class QueryGraphRequest(_Body):
    query: Query
    entity_type: TypeName | None = None
    relationship_type: TypeName | None = None
    limit: StrictInt = Field(25, ge=1, le=200)


class Provenance(BaseModel):
    episode_uuid: str
    message_name: str
    conversation_id: str | None
    valid_at: datetime
    source_description: str
    content: str


class Relationship(BaseModel):
    fact: Fact
    source: Entity
    target: Entity
    provenance: list[Provenance]


class GraphAnswer(BaseModel):
    query: str
    route: str
    found: bool
    message: str
    entity_type: str | None
    relationship_type: str | None
    entities: list[Entity]
    relationships: list[Relationship]


class Explanation(BaseModel):
    kind: Literal["entity", "fact"]
    entity: Entity | None = None
    fact: Fact | None = None
    sources: list[Provenance]
    conversation_ids: list[str]
    ended_by: Provenance | None = Field(None, description="For an ended fact: the message that ended it")


class FailedJob(BaseModel):
    id: str
    attempts: int
    error: str | None
    created_at: str
    finished_at: str | None


class QueueStatus(BaseModel):
    group_id: str
    pending: int
    running: int
    done: int
    failed: int
    failed_jobs: list[FailedJob]


class RetryResult(BaseModel):
    group_id: str
    retried: int


class Health(BaseModel):
    status: str
    detail: str | None = None
    schema_version: int | None = None
    worker: bool | None = None
    pending: int | None = None


class ErrorBody(BaseModel):
    detail: Any


# ---- communities and the graph explorer (issue 15) ------------------------------------------------------------
class Community(BaseModel):
    uuid: str
    group_id: str
    name: str
    summary: str
    member_ids: list[str]
    created_at: datetime
    updated_at: datetime


class CommunityBuild(BaseModel):
    group_id: str
    entities: int
    edges: int
    communities: int
    members: int
    levels: int
    llm_calls: int
    unchanged: int
    timings_ms: dict[str, float]


class GraphNode(BaseModel):
    id: str
    name: str
    type: str
    summary: str
    aliases: list[str]
    community_id: str | None
    community: str | None


class GraphEdge(BaseModel):
    id: str
    source: str
    target: str
    type: str
    fact: str
    valid_at: datetime | None
    invalid_at: datetime | None
    current: bool


class GraphPiece(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    more: bool = Field(description="More entities follow: ask again with offset + limit")
    time_min: datetime | None = Field(None, description="Earliest time of these entities' facts (ended included)")
    time_max: datetime | None = Field(None, description="Latest time of these entities' facts (ended included)")


class TimelineFact(GraphEdge):
    other_id: str
    other_name: str
    created_at: datetime
    expired_at: datetime | None


class Timeline(BaseModel):
    entity: GraphNode
    facts: list[TimelineFact]


class ExploreHits(BaseModel):
    entity_ids: list[str] = Field(description="Entities matching the query, best first (hybrid search)")
    fact_ids: list[str]
    piece: GraphPiece = Field(description="The hits and their neighbourhood")
