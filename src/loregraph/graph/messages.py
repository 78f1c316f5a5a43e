"""The one message model (spec 000's message object): what the Python API, REST, the CLI's JSON lines, sessions
and the durable job queue all carry. Validation lives here, so every interface refuses the same inputs with the
same field names."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from loregraph.errors import InvalidInputError
from loregraph.graph.types import as_utc, utcnow, validate_group_id

MIN_TIME = datetime(1000, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(9999, 1, 1, tzinfo=UTC)
ROLE_TYPES = ("user", "assistant", "system")


def valid_text(v: str) -> str:
    """Text a store can keep on every backend: valid Unicode (no unpaired surrogates), no NUL character."""
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (no unpaired surrogates)") from None
    if "\x00" in v:
        raise ValueError("must not contain NUL characters")
    return v


def valid_time(v: datetime) -> datetime:
    """A timezone-aware UTC time between the years 1000 and 9998 (naive times are taken as UTC)."""
    try:
        v = as_utc(v)
    except OverflowError:
        raise ValueError("out of range") from None
    if not MIN_TIME <= v < MAX_TIME:
        raise ValueError("must be between the years 1000 and 9998")
    return v


def not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("must not be empty (a message needs some text)")
    return v


Text = Annotated[str, AfterValidator(valid_text)]
MessageText = Annotated[str, AfterValidator(valid_text), AfterValidator(not_blank)]
Timestamp = Annotated[datetime, AfterValidator(valid_time)]
RecordId = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(valid_text)]
# storable text of bounded length: the limit is checked (and reported in characters) before the content
MessageName = Annotated[str, StringConstraints(max_length=512), AfterValidator(valid_text)]
SpeakerName = Annotated[str, StringConstraints(max_length=256), AfterValidator(valid_text)]
SourceDescription = Annotated[str, StringConstraints(max_length=1024), AfterValidator(valid_text)]


class Message(BaseModel):
    """One conversational message (spec 000 message object)."""

    model_config = ConfigDict(extra="forbid")
    content: MessageText
    uuid: RecordId | None = Field(None, description="Reprocess this existing episode instead of creating one")
    name: MessageName = ""
    role_type: Literal["user", "assistant", "system"]
    role: SpeakerName | None = Field(None, description="The speaker's name")
    timestamp: Timestamp = Field(default_factory=utcnow, description="Defaults to the time the message is parsed")
    source_description: SourceDescription = ""

    @classmethod
    def from_record(cls, obj: Mapping[str, Any], default_group: str | None = None) -> tuple[str, Message]:
        """Map one JSON line of a message file to its group and a Message. Accepted spellings: ``group_id`` or
        ``user_id`` (else ``default_group``); ``role_type``, or ``role`` when it is a role type (any other ``role``,
        or ``speaker``, names the speaker); ``name`` or ``message_id``; ``timestamp``; ``uuid``;
        ``source_description``. Raises InvalidInputError naming the field."""
        if not isinstance(obj, Mapping):
            raise InvalidInputError("a message must be a JSON object")
        group = obj.get("group_id") or obj.get("user_id") or default_group
        if not group:
            raise InvalidInputError("group_id: missing (give it per line, as user_id, or with --group)")
        if not isinstance(obj.get("content"), str):
            raise InvalidInputError("content: required, and must be a string")
        role = obj.get("role")
        role_type = obj.get("role_type") or (role if role in ROLE_TYPES else None) or "user"
        if role_type not in ROLE_TYPES:
            role_type = "user"
        fields: dict[str, Any] = {"content": obj["content"], "role_type": role_type,
                                  "name": str(obj.get("name") or obj.get("message_id") or "")}
        speaker = obj.get("speaker") or (role if role and role not in ROLE_TYPES else None)
        if speaker:
            fields["role"] = speaker
        for key in ("timestamp", "uuid", "source_description"):
            if obj.get(key):
                fields[key] = obj[key]
        return validate_group_id(group), cls.model_validate(fields)

    def to_payload(self) -> dict[str, Any]:
        """The message as a durable job's payload (JSON-ready)."""
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> Message:
        """A job payload back to the message. Payloads queued by loregraph 0.1 (an episode request: ``group_id``,
        ``source``, ``reference_time``) are still read."""
        data = dict(payload)
        if "reference_time" in data:
            data["timestamp"] = data.pop("reference_time")
        data.pop("group_id", None)
        data.pop("source", None)
        return cls.model_validate(data)


__all__ = ["MAX_TIME", "MIN_TIME", "ROLE_TYPES", "Message", "RecordId", "Text", "Timestamp", "valid_text",
           "valid_time"]
