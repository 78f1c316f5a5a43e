"""Programmatic noise filtering of extraction input (spec 004); never calls a model:

- stack traces become their error type and message;
- large code blocks become a line with their language, size, purpose (first comment or docstring)
  and the names they define;
- verbose tool output becomes its first line, its outcome lines and a count of what was left out;
- repeated status lines (the same line, or the same up to numbers, e.g. progress) are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_CODE_LINES = 12
MAX_TOOL_LINES = 8
OUTCOME_LINES = 4


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


__all__ = ["MAX_CODE_LINES", "MAX_TOOL_LINES", "Filtered", "filter_noise"]
