"""The one message model: the Python API, REST, the CLI's JSON lines, sessions and the job queue map a message the
same way and refuse the same inputs, naming the same field."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from loregraph.api.rest.models import AddMessagesRequest
from loregraph.errors import InvalidInputError
from loregraph.graph.messages import Message
from loregraph.sessions import TurnMessage


def test_json_line_spellings_map_to_one_message():
    group, msg = Message.from_record({"user_id": "u1", "message_id": "m7", "role": "Ana", "content": "hi",
                                      "timestamp": "2025-03-01T10:00:00Z"})
    assert (group, msg.name, msg.role_type, msg.role, msg.content) == ("u1", "m7", "user", "Ana", "hi")
    assert msg.timestamp == datetime(2025, 3, 1, 10, tzinfo=UTC)
    group, msg = Message.from_record({"content": "ok", "role": "assistant"}, default_group="g")
    assert (group, msg.role_type, msg.role) == ("g", "assistant", None)
    with pytest.raises(InvalidInputError, match="group_id"):
        Message.from_record({"content": "no group"})
    with pytest.raises(InvalidInputError, match="content"):
        Message.from_record({"group_id": "g", "content": 5})


@pytest.mark.parametrize("field, value", [("content", "a\x00b"), ("content", "\ud800"), ("role", "x" * 257),
                                          ("timestamp", "0001-01-01T00:00:00Z")])
def test_every_entry_point_refuses_the_same_input_naming_the_field(field, value):
    fields = {"content": "hello", "role_type": "user", field: value}
    with pytest.raises(ValidationError) as direct:
        Message.model_validate(fields)
    with pytest.raises(ValidationError) as rest:
        AddMessagesRequest.model_validate({"group_id": "g", "messages": [fields]})
    with pytest.raises(ValidationError) as line:
        Message.from_record({"group_id": "g", **fields})
    assert direct.value.errors()[0]["loc"] == (field,)
    assert rest.value.errors()[0]["loc"] == ("messages", 0, field)
    assert line.value.errors()[0]["loc"] == (field,)


def test_a_job_payload_is_the_message_and_old_payloads_still_read():
    msg = Message(content="I use Rust", role_type="user", role="Kai", name="m1",
                  timestamp=datetime(2025, 1, 2, tzinfo=UTC))
    assert Message.from_payload(msg.to_payload()) == msg
    legacy = {"group_id": "g", "content": "I use Rust", "name": "m1", "role_type": "user", "source": "message",
              "source_description": "", "reference_time": "2025-01-02T00:00:00+00:00", "role": "Kai"}
    assert Message.from_payload(legacy) == msg


def test_session_messages_are_messages_with_tool_output():
    tool = TurnMessage.of({"role": "tool", "name": "pytest", "content": "3 passed"})
    assert isinstance(tool, Message) and (tool.role_type, tool.role) == ("tool", "pytest")
    assert TurnMessage.of(Message(content="hi", role_type="user", role="Kai")).role == "Kai"


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_an_empty_message_is_refused_naming_content(content):
    with pytest.raises(ValidationError) as direct:
        Message.model_validate({"content": content, "role_type": "user"})
    assert direct.value.errors()[0]["loc"] == ("content",) and "empty" in direct.value.errors()[0]["msg"]
    with pytest.raises(ValidationError) as rest:
        AddMessagesRequest.model_validate({"group_id": "g", "messages": [{"content": content, "role_type": "user"}]})
    assert rest.value.errors()[0]["loc"] == ("messages", 0, "content")
    assert AddMessagesRequest.model_validate({"group_id": "g", "messages": []}).messages == []  # spec 000: valid
