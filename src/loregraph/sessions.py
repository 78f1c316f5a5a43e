"""Turn-based indexing (spec 004): a session is cut into turns at role transitions, each turn is cleaned
by a programmatic noise filter, then ingested as one episode with one extraction call.

A turn starts with a user message and runs through the assistant's (and its tools') replies. It is
complete when the next user message arrives; the last turn is processed on ``flush()`` or ``close()``
(and when the Memory closes). Consecutive user messages before any reply belong to the same turn.

The noise filter is ``loregraph.extract.noise``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from loregraph.errors import InvalidInputError
from loregraph.extract.noise import MAX_CODE_LINES, MAX_TOOL_LINES, filter_noise
from loregraph.extract.prompts import DEFAULT_TEMPLATE
from loregraph.graph.messages import Message, Text
from loregraph.graph.types import validate_group_id
from loregraph.ingest.pipeline import AddEpisodeResult, EpisodeRequest
from loregraph.memory import Memory

ROLES = ("user", "assistant", "system", "tool")


# ---- messages and turns ---------------------------------------------------------------------------
class TurnMessage(Message):
    """A message of an agent session: the one message model, plus tool output (``role_type="tool"``, ``role`` = the
    tool's name). ``role`` of a user message is the user's name."""

    role_type: Literal["user", "assistant", "system", "tool"]  # type: ignore[assignment]
    content: Text  # a tool may print nothing: an empty session message is kept (the turn still counts)

    @classmethod
    def of(cls, obj: Message | Mapping[str, Any]) -> TurnMessage:
        """From a Message or a dict: ``role_type`` (or ``role`` when it is one of user/assistant/system/tool),
        ``content``, ``timestamp``, and the speaker's or tool's name as ``role`` (when not a role type) or
        ``name``."""
        if isinstance(obj, TurnMessage):
            return obj
        if isinstance(obj, Message):
            return cls.model_validate(obj.model_dump())
        if not isinstance(obj, Mapping):
            raise InvalidInputError("a session message must be a Message or a mapping")
        role = obj.get("role")
        role_type = obj.get("role_type") or (role if role in ROLES else None)
        if role_type not in ROLES:
            raise InvalidInputError(f"role: {role_type or role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(obj.get("content"), str):
            raise InvalidInputError("content: a string is required")
        speaker = (role if role not in (None, *ROLES) else None) or obj.get("name") or None
        fields: dict[str, Any] = {"content": obj["content"], "role_type": role_type, "role": speaker}
        if obj.get("timestamp"):
            fields["timestamp"] = obj["timestamp"]
        return cls.model_validate(fields)


@dataclass
class Turn:
    index: int
    messages: list[TurnMessage]

    @property
    def started_at(self) -> datetime:
        return self.messages[0].timestamp

    @property
    def ended_at(self) -> datetime:
        return self.messages[-1].timestamp

    @property
    def complete(self) -> bool:
        """Has the user's message been answered?"""
        return any(m.role_type in ("assistant", "tool") for m in self.messages)

    @property
    def user_name(self) -> str | None:
        return next((m.role for m in self.messages if m.role_type == "user" and m.role), None)

    def render(self, noise_filter: bool = True, **limits: int) -> tuple[str, dict[str, int]]:
        """The turn as one text (``role: content`` blocks), cleaned; plus what the filter removed."""
        stats: dict[str, int] = {}
        blocks = []
        for m in self.messages:
            text = m.content.strip()
            if noise_filter:
                cleaned = filter_noise(text, tool_output=m.role_type == "tool", **limits)
                text = cleaned.text
                for k, v in cleaned.stats.items():
                    stats[k] = stats.get(k, 0) + v
            label = f"tool ({m.role})" if m.role_type == "tool" and m.role else m.role_type
            if text:
                blocks.append(f"{label}: {text}")
        return "\n\n".join(blocks), stats


class TurnDetector:
    """Incremental turn boundaries from role transitions (user → assistant → next user)."""

    def __init__(self) -> None:
        self._current: list[TurnMessage] = []
        self._next_index = 0

    def push(self, message: TurnMessage) -> Turn | None:
        """Add a message; returns the turn it completed, if any (a user message after a reply)."""
        done = None
        if message.role_type == "user" and any(m.role_type in ("assistant", "tool") for m in self._current):
            done = Turn(self._next_index, self._current)
            self._next_index += 1
            self._current = []
        self._current.append(message)
        return done

    @property
    def pending(self) -> Turn | None:
        return Turn(self._next_index, list(self._current)) if self._current else None

    def take(self) -> Turn | None:
        """The unfinished turn, now (flush / close)."""
        turn = self.pending
        if turn is not None:
            self._next_index += 1
            self._current = []
        return turn


def split_turns(messages: Iterable[TurnMessage | Mapping[str, Any]]) -> list[Turn]:
    """All turns of a finished session, the last one included."""
    det = TurnDetector()
    turns = [t for m in messages if (t := det.push(TurnMessage.of(m))) is not None]
    last = det.take()
    return [*turns, last] if last is not None else turns


# ---- indexing ---------------------------------------------------------------------------------------
class TurnIndexer:
    """Feeds a session to a Memory turn by turn. One episode (one extraction call) per turn.

        async with TurnIndexer(memory, "alice", conversation_id="s1") as turns:
            for msg in session:
                await turns.add(msg)        # returns the results of turns this message completed
        # the last turn is processed on exit (or on flush(), or when the Memory closes)

    ``preprocessing_prompt`` is applied to every turn as the episode's preprocessing override (default:
    the built-in ``default-session-turn.md``; None keeps the extractor's own setting, False disables).
    """

    def __init__(self, memory: Memory, group_id: str, *, conversation_id: str | None = None,
                 user_name: str | None = None, preprocessing_prompt: bool | str | None = DEFAULT_TEMPLATE,
                 noise_filter: bool = True, max_code_lines: int = MAX_CODE_LINES,
                 max_tool_lines: int = MAX_TOOL_LINES, source_description: str = "session turn"):
        self.memory = memory
        self.group_id = validate_group_id(group_id)
        self.conversation_id = conversation_id
        self.user_name = user_name
        self.preprocessing_prompt = preprocessing_prompt
        self.noise_filter = noise_filter
        self.limits = {"max_code_lines": max_code_lines, "max_tool_lines": max_tool_lines}
        self.source_description = source_description
        self._detector = TurnDetector()
        self._lock = asyncio.Lock()
        self._closed = False
        self.turns_processed = 0
        memory.on_close(self.close)

    async def __aenter__(self) -> TurnIndexer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def pending(self) -> Turn | None:
        return self._detector.pending

    async def add(self, message: TurnMessage | Mapping[str, Any] | Any) -> list[AddEpisodeResult]:
        if self._closed:
            raise RuntimeError("this TurnIndexer is closed")
        msg = TurnMessage.of(message)
        async with self._lock:
            turn = self._detector.push(msg)
            return [await self._process(turn)] if turn is not None else []

    async def add_many(self, messages: Iterable[TurnMessage | Mapping[str, Any] | Any]) -> list[AddEpisodeResult]:
        msgs = [TurnMessage.of(m) for m in messages]  # validate all first
        out: list[AddEpisodeResult] = []
        for m in msgs:
            out.extend(await self.add(m))
        return out

    async def flush(self) -> list[AddEpisodeResult]:
        """Process the unfinished turn now (if any)."""
        async with self._lock:
            turn = self._detector.take()
            return [await self._process(turn)] if turn is not None else []

    async def close(self) -> list[AddEpisodeResult]:
        if self._closed:
            return []
        out = await self.flush()
        self._closed = True
        self.memory.remove_close_hook(self.close)
        return out

    async def _process(self, turn: Turn) -> AddEpisodeResult:
        text, stats = turn.render(self.noise_filter, **self.limits)
        req = EpisodeRequest(group_id=self.group_id, content=text or "(empty turn)", name=f"turn-{turn.index}",
                             role=turn.user_name or self.user_name, role_type=None, source="message",
                             source_description=self.source_description, reference_time=turn.started_at,
                             conversation_id=self.conversation_id, preprocessing_prompt=self.preprocessing_prompt,
                             build_body=False)
        result = await self.memory.add_episode(req)
        result.extraction_notes["turn"] = {"index": turn.index, "messages": len(turn.messages),
                                           "complete": turn.complete}
        if stats:
            result.extraction_notes["noise_filtered"] = stats
        self.turns_processed += 1
        return result


__all__ = ["Turn", "TurnDetector", "TurnIndexer", "TurnMessage", "split_turns"]
