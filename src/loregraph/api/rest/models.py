"""Request and response bodies of the REST service (Graphiti-compatible where Graphiti has the route).

Validation happens here, at the boundary: a bad field is a 422 that names it, before anything is queued
or written.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StringConstraints

from loregraph.graph.messages import Message, RecordId, valid_text
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
    model_config = ConfigDict(extra="forbid")


# ---- spec 000: add messages ---------------------------------------------------------------------
MessageIn = Message  # the one message model (loregraph.graph.messages)


class AddMessagesRequest(_Body):
    group_id: GroupId
    messages: list[MessageIn]


class Result(BaseModel):
    message: str
    success: bool


# ---- Graphiti-compatible routes -----------------------------------------------------------------
class SearchQuery(_Body):
    group_ids: list[GroupId] | None = Field(None, max_length=MAX_LIST_ITEMS,
                                            description="Default: every group the key may read")
    query: Query
    max_facts: StrictInt = Field(10, ge=1, le=200)


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


class GetMemoryRequest(_Body):
    group_id: GroupId
    max_facts: StrictInt = Field(10, ge=1, le=200)
    center_node_uuid: RecordId | None = None
    messages: list[MessageIn] = Field(min_length=1)


class GetMemoryResponse(BaseModel):
    facts: list[FactResult]


class AddEntityNodeRequest(_Body):
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
