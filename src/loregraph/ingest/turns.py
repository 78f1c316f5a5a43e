"""Turn-based indexing (spec 004): a session is cut into turns at role transitions, each turn is cleaned
by a programmatic noise filter, then ingested as one episode with one extraction call.

A turn starts with a user message and runs through the assistant's (and its tools') replies. It is
complete when the next user message arrives; the last turn is processed on ``flush()`` or ``close()``
(and when the Memory closes). Consecutive user messages before any reply belong to the same turn.

The noise filter never calls a model:

- stack traces become their error type and message;
- large code blocks become a line with their language, size, purpose (first comment or docstring)
  and the names they define;
- verbose tool output becomes its first line, its outcome lines and a count of what was left out;
- repeated status lines (the same line, or the same up to numbers, e.g. progress) are dropped.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from loregraph.extract.prompts import DEFAULT_TEMPLATE
from loregraph.graph.types import as_utc, utcnow

if TYPE_CHECKING:
    from loregraph.ingest.pipeline import AddEpisodeResult
    from loregraph.memory import Memory

ROLES = ("user", "assistant", "system", "tool")
MAX_CODE_LINES = 12
MAX_TOOL_LINES = 8
OUTCOME_LINES = 4


# ---- messages and turns ---------------------------------------------------------------------------
@dataclass
class TurnMessage:
    role: str
    content: str
    timestamp: datetime = field(default_factory=utcnow)
    name: str | None = None
    """The user's name (user messages) or the tool's name (tool messages)."""

    @classmethod
    def of(cls, obj: TurnMessage | Mapping[str, Any] | Any) -> TurnMessage:
        """From a dict (``role`` or ``role_type``, ``content``, ``timestamp``, ``name``) or a Message."""
        if isinstance(obj, TurnMessage):
            return obj
        get = obj.get if isinstance(obj, Mapping) else (lambda k, d=None: getattr(obj, k, d))
        role = get("role_type") or get("role") or ""
        if role not in ROLES:
            raise ValueError(f"role: {role!r} is not one of {', '.join(ROLES)}")
        content = get("content")
        if not isinstance(content, str):
            raise ValueError("content: a string is required")
        ts = get("timestamp") or utcnow()
        if isinstance(ts, str):
            ts = datetime.fromisoformat(ts.replace("Z", "+00:00"))
        name = get("name") or (get("role") if get("role") not in (None, *ROLES) else None)
        return cls(role=role, content=content, timestamp=as_utc(ts), name=name or None)


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
        return any(m.role in ("assistant", "tool") for m in self.messages)

    @property
    def user_name(self) -> str | None:
        return next((m.name for m in self.messages if m.role == "user" and m.name), None)

    def render(self, noise_filter: bool = True, **limits: int) -> tuple[str, dict[str, int]]:
        """The turn as one text (``role: content`` blocks), cleaned; plus what the filter removed."""
        stats: dict[str, int] = {}
        blocks = []
        for m in self.messages:
            text = m.content.strip()
            if noise_filter:
                cleaned = filter_noise(text, tool_output=m.role == "tool", **limits)
                text = cleaned.text
                for k, v in cleaned.stats.items():
                    stats[k] = stats.get(k, 0) + v
            label = f"tool ({m.name})" if m.role == "tool" and m.name else m.role
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
        if message.role == "user" and any(m.role in ("assistant", "tool") for m in self._current):
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


# ---- noise filter -----------------------------------------------------------------------------------
@dataclass
class Filtered:
    text: str
    stats: dict[str, int] = field(default_factory=dict)


_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+#.-]*)")
_PY_TRACE = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_PY_ERROR = re.compile(r"^\s*([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|Fault)|[A-Z]\w*Error)\b(:.*)?$")
_FRAME = re.compile(r"^\s+(at\s+\S.*|File \".*\", line \d+.*|\.\.\. \d+ more)$")
_OUTCOME = re.compile(
    r"(?i)\b(error|errors|failed|failure|fail|passed|pass|success|successful|succeeded|ok|warning|warnings|"
    r"exit(ed)?( with)?( code| status)?|returned|done|finished|completed|skipped|\d+ (tests?|files?|errors?))\b")
_DEFINES = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?(?:def|class|function|fn|func|interface|struct|enum|trait|"
    r"impl|type|const|let|var|public\s+\w+|private\s+\w+|protected\s+\w+)\s+([A-Za-z_][\w]*)")
_COMMENT = re.compile(r'^\s*(?:#+|//+|/\*+|\*|--|"""|\'\'\'|<!--)\s*(.*?)\s*(?:\*/|"""|\'\'\'|-->)?\s*$')
_DIGITS = re.compile(r"\d+([.,:]\d+)*")


def _bump(stats: dict[str, int], key: str, n: int = 1) -> None:
    if n:
        stats[key] = stats.get(key, 0) + n


def _collapse_traces(lines: list[str], stats: dict[str, int]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _PY_TRACE.match(line):
            j = i + 1
            while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
                j += 1
            err = lines[j].strip() if j < len(lines) and _PY_ERROR.match(lines[j]) else ""
            _bump(stats, "stack_traces")
            _bump(stats, "stack_lines_dropped", j - i - 1)
            out.append(f"[stack trace] {err}" if err else "[stack trace]")
            i = j + 1 if err else j
            continue
        if _FRAME.match(line):
            j = i
            while j < len(lines) and _FRAME.match(lines[j]):
                j += 1
            if j - i >= 2:  # a run of frames: keep the error line above it, drop the frames
                _bump(stats, "stack_traces")
                _bump(stats, "stack_lines_dropped", j - i)
                i = j
                continue
        out.append(line)
        i += 1
    return out


def _summarize_code(lang: str, body: list[str]) -> str:
    names: list[str] = []
    purpose = ""
    for line in body:
        m = _DEFINES.match(line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
        if not purpose:
            c = _COMMENT.match(line)
            if c and c.group(1) and len(c.group(1)) > 3 and not c.group(1).startswith(("!", "-*-")):
                purpose = c.group(1)[:100]
    parts = [f"[code block: {lang or 'text'}, {len(body)} lines"]
    if purpose:
        parts.append(f"purpose: {purpose}")
    if names:
        parts.append("defines: " + ", ".join(names[:10]) + (" …" if len(names) > 10 else ""))
    return "; ".join(parts) + "]"


def _summarize_tool(lines: list[str], stats: dict[str, int], keep: int) -> list[str]:
    body = [ln for ln in lines if ln.strip()]
    if len(body) <= keep:
        return lines
    head = body[0]
    outcomes = [ln for ln in body[1:] if _OUTCOME.search(ln)][-OUTCOME_LINES:]
    tail = body[-1] if body[-1] not in outcomes and body[-1] != head else None
    kept = [head, *outcomes, *([tail] if tail else [])]
    _bump(stats, "tool_lines_dropped", len(body) - len(kept))
    return [head, f"[tool output: {len(body) - len(kept)} of {len(body)} lines left out]", *kept[1:]]


def _drop_repeats(lines: list[str], stats: dict[str, int]) -> list[str]:
    out: list[str] = []
    prev_key = None
    for line in lines:
        key = _DIGITS.sub("#", line.strip())
        if key and key == prev_key:
            out[-1] = line  # keep the latest status
            _bump(stats, "status_lines_dropped")
            continue
        out.append(line)
        prev_key = key
    return out


def filter_noise(text: str, *, tool_output: bool = False, max_code_lines: int = MAX_CODE_LINES,
                 max_tool_lines: int = MAX_TOOL_LINES) -> Filtered:
    """Shrink what a model does not need to read (see the module docstring). Deterministic; no model."""
    stats: dict[str, int] = {}
    lines = _collapse_traces(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), stats)
    # split into prose and fenced code
    segments: list[tuple[str, str, list[str]]] = []  # (kind, lang, lines)
    cur: list[str] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m:
            fence = m.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            if j < len(lines):  # a closed block
                if cur:
                    segments.append(("text", "", cur))
                    cur = []
                segments.append(("code", m.group(2), lines[i:j + 1]))
                i = j + 1
                continue
        cur.append(lines[i])
        i += 1
    if cur:
        segments.append(("text", "", cur))

    out: list[str] = []
    for kind, lang, seg in segments:
        if kind == "code":
            body = seg[1:-1]
            if len(body) > max_code_lines:
                _bump(stats, "code_blocks_summarized")
                _bump(stats, "code_lines_dropped", len(body))
                out.append(_summarize_code(lang, body))
            else:
                out.extend(seg)
            continue
        seg = _drop_repeats(seg, stats)
        if tool_output:
            seg = _summarize_tool(seg, stats, max_tool_lines)
        out.extend(seg)
    cleaned = "\n".join(out)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    return Filtered(cleaned, stats)


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
        from loregraph.graph.types import validate_group_id

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
        from loregraph.ingest.pipeline import EpisodeRequest

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


__all__ = ["Filtered", "Turn", "TurnDetector", "TurnIndexer", "TurnMessage", "filter_noise", "split_turns"]
