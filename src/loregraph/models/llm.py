"""OpenAI-compatible chat client for JSON answers (OpenAI, Azure, Ollama, vLLM, llama.cpp, LM Studio).

What it adds to the ``openai`` SDK (whose own retries are switched off):

- structured output negotiated per endpoint: JSON schema, falling back to JSON mode, then to plain text
  read by a tolerant parser (``<think>`` blocks, code fences and chatter around the object are stripped).
  A server refuses a mode with a 400, 422 or 500 whose body names ``response_format``, ``json_schema`` or
  ``schema``; the mode that works is remembered process-wide per endpoint (base URL + model).
  ``LOREGRAPH_LLM_STRUCTURED_OUTPUT`` / :attr:`LLMConfig.structured_output` force a mode. In JSON mode the
  schema still travels in the forms local servers understand (llama.cpp / llama-cpp-python
  ``response_format.schema``, vLLM ``guided_json``, Ollama ``format``); a server that refuses those is
  asked again without them (also remembered), one that ignores them is not affected;
- transient errors (429, 5xx, timeouts, connection errors, invalid JSON) are retried once, after a
  backoff (``Retry-After`` honoured up to a cap); a second failure raises :class:`LLMUnavailable` or
  :class:`LLMResponseError` so the caller can degrade (spec 000 AC 35 and 37);
- one process-wide :class:`LLMGovernor`: a concurrency limit plus token buckets for requests and
  tokens per minute, shared by every client in the process (not a semaphore per call site);
- truncated output (``finish_reason == "length"``) is re-asked with a doubled output limit up to a
  ceiling; at the ceiling, the complete items of the cut-off JSON are salvaged;
- token accounting per call (:class:`Usage`) and process-wide counters (:data:`METRICS`).

Token counts come from the server's ``usage``; when a server sends none, they are estimated with
:func:`approx_tokens` (characters / 4), the same rule the cost benchmark applies everywhere.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from loregraph.errors import ConfigError

log = logging.getLogger("loregraph.llm")

CHARS_PER_TOKEN = 4
Mode = Literal["json_schema", "json_object", "none"]
_MODES: tuple[Mode, ...] = ("json_schema", "json_object", "none")
SchemaForm = Literal["response_format", "guided_json", "format"]
SCHEMA_FORMS: tuple[SchemaForm, ...] = ("response_format", "guided_json", "format")
"""Where a schema goes in JSON mode: ``response_format.schema`` (llama.cpp, llama-cpp-python), ``guided_json``
(vLLM) and ``format`` (Ollama), all in the request body."""
STRUCTURED_OUTPUT_ENV = "LOREGRAPH_LLM_STRUCTURED_OUTPUT"
SCHEMA_FORMS_ENV = "LOREGRAPH_LLM_SCHEMA_FORMS"


def approx_tokens(text: str) -> int:
    """Token estimate used when a server reports no usage, and by the cost benchmark for every side."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def approx_prompt_tokens(messages: list[dict[str, Any]], response_format: Mapping[str, Any] | None = None) -> int:
    """Prompt tokens of a chat request: every message's text, plus the JSON schema sent as response format
    (providers count that schema as prompt input)."""
    n = sum(approx_tokens(str(m.get("content") or "")) for m in messages)
    if response_format and response_format.get("type") == "json_schema":
        n += approx_tokens(json.dumps(response_format, separators=(",", ":")))
    return n


# ---- errors ---------------------------------------------------------------------------------------
class LLMError(Exception):
    """A model call failed for good. ``kind`` is a short code safe to log (never message text)."""

    def __init__(self, kind: str, detail: str = "", usage: Usage | None = None):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.usage = usage or Usage()


class LLMUnavailable(LLMError):
    """Transient failures (429, 5xx, timeout, connection) persisted after the retry."""


class LLMResponseError(LLMError):
    """The model answered, but not with usable JSON (after the retry / at the output ceiling)."""


# ---- configuration ------------------------------------------------------------------------------
@dataclass
class LLMConfig:
    """Where and how to call the model. ``base_url`` None means the SDK default (api.openai.com)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    """Seconds per request before it counts as a (transient) timeout."""
    max_tokens: int = 2048
    """Output limit of the first attempt."""
    max_tokens_ceiling: int = 8192
    """Truncated answers are re-asked with a doubled limit up to this."""
    temperature: float = 0.0
    structured_output: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    """``auto`` starts with a JSON schema and falls back when the server refuses it (remembered per endpoint);
    another value forces that mode. With ``auto``, ``LOREGRAPH_LLM_STRUCTURED_OUTPUT`` forces one too."""
    schema_forms: tuple[SchemaForm, ...] | None = None
    """Forms the schema is sent in when in JSON mode (default: all of :data:`SCHEMA_FORMS`, dropped for the
    endpoint if the server refuses them; ``()``: send none)."""
    retry_backoff: float = 1.0
    """Seconds before the single retry of a transient error (jittered up to +50%)."""
    max_backoff: float = 30.0
    """Cap on a server's Retry-After."""
    token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    extra_body: dict[str, Any] | None = None
    default_headers: dict[str, str] | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LLMConfig | None:
        """``LOREGRAPH_LLM_MODEL`` (required), ``LOREGRAPH_LLM_BASE_URL``, ``LOREGRAPH_LLM_API_KEY`` (or
        ``OPENAI_API_KEY``), ``LOREGRAPH_LLM_TIMEOUT``, ``LOREGRAPH_LLM_MAX_TOKENS``,
        ``LOREGRAPH_LLM_STRUCTURED_OUTPUT`` (``json_schema|json_object|none``, default negotiated),
        ``LOREGRAPH_LLM_SCHEMA_FORMS`` (comma-separated :data:`SCHEMA_FORMS`, or ``none``). None when no model
        is set. Raises ValueError naming the variable on a bad value."""
        env = os.environ if env is None else env
        model = env.get("LOREGRAPH_LLM_MODEL")
        if not model:
            return None
        cfg = cls(model=model, base_url=env.get("LOREGRAPH_LLM_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
                  api_key=env.get("LOREGRAPH_LLM_API_KEY") or env.get("OPENAI_API_KEY") or None)
        if env.get("LOREGRAPH_LLM_TIMEOUT"):
            cfg.timeout = float(env["LOREGRAPH_LLM_TIMEOUT"])
        if env.get("LOREGRAPH_LLM_MAX_TOKENS"):
            cfg.max_tokens = int(env["LOREGRAPH_LLM_MAX_TOKENS"])
        forced = structured_output_from_env(env)
        if forced is not None:
            cfg.structured_output = forced
        cfg.schema_forms = schema_forms_from_env(env)
        return cfg


def structured_output_from_env(env: Mapping[str, str] | None = None) -> Mode | None:
    """The mode ``LOREGRAPH_LLM_STRUCTURED_OUTPUT`` forces, None when unset or ``auto``."""
    raw = ((os.environ if env is None else env).get(STRUCTURED_OUTPUT_ENV) or "").strip().lower()
    if raw in ("", "auto"):
        return None
    if raw not in _MODES:
        raise ConfigError(f"{STRUCTURED_OUTPUT_ENV}={raw!r}: expected one of auto, {', '.join(_MODES)}")
    return raw


def schema_forms_from_env(env: Mapping[str, str] | None = None) -> tuple[SchemaForm, ...] | None:
    """The schema forms ``LOREGRAPH_LLM_SCHEMA_FORMS`` names (``none``: no form), None when unset."""
    raw = ((os.environ if env is None else env).get(SCHEMA_FORMS_ENV) or "").strip().lower()
    if not raw:
        return None
    if raw == "none":
        return ()
    forms = tuple(f.strip() for f in raw.split(",") if f.strip())
    bad = [f for f in forms if f not in SCHEMA_FORMS]
    if bad:
        raise ConfigError(f"{SCHEMA_FORMS_ENV}: unknown form(s) {bad}; expected {', '.join(SCHEMA_FORMS)} or none")
    return forms  # type: ignore[return-value]


# ---- accounting -----------------------------------------------------------------------------------
@dataclass
class Usage:
    """What one logical request cost: every HTTP attempt is a call; tokens of answered calls only."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    truncations: int = 0
    fallbacks: int = 0

    def add(self, other: Usage) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, int]:
        d = asdict(self)
        d["total_tokens"] = self.prompt_tokens + self.completion_tokens
        return d


class LLMMetrics:
    """Process-wide counters of every model call (thread-safe). ``snapshot()`` for a /metrics endpoint."""

    FIELDS = ("requests", "calls", "failures", "retries", "degraded", "truncations", "truncation_recoveries",
              "fallbacks", "invalid_json", "prompt_tokens", "completion_tokens", "rate_limit_wait_ms")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._c = dict.fromkeys(self.FIELDS, 0)

    def incr(self, **counts: int) -> None:
        with self._lock:
            for k, v in counts.items():
                self._c[k] = self._c.get(k, 0) + int(v)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._c)

    def reset(self) -> None:
        with self._lock:
            self._c = dict.fromkeys(self.FIELDS, 0)


METRICS = LLMMetrics()


# ---- process-wide limits --------------------------------------------------------------------------
class TokenBucket:
    """A bucket of ``per_minute`` units refilled continuously, holding at most ``burst`` (default: one
    minute's worth). ``reserve(n)`` takes n now and returns how long the caller must wait for them (the
    bucket may go into debt, so callers queue fairly in reservation order)."""

    def __init__(self, per_minute: float, burst: float | None = None, clock: Callable[[], float] = time.monotonic):
        if per_minute <= 0:
            raise ConfigError("per_minute must be > 0")
        self.rate = per_minute / 60.0
        self.capacity = float(burst if burst is not None else per_minute)
        if self.capacity < 1:
            raise ConfigError("burst must be >= 1")
        self._clock = clock
        self._level = self.capacity
        self._t = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._t) * self.rate)
        self._t = now

    def reserve(self, n: float) -> float:
        with self._lock:
            self._refill()
            self._level -= min(float(n), self.capacity)
            return 0.0 if self._level >= 0 else -self._level / self.rate

    def adjust(self, n: float) -> None:
        """Charge (n > 0) or refund (n < 0) after the fact, e.g. actual minus estimated tokens."""
        with self._lock:
            self._refill()
            self._level = min(self.capacity, self._level - n)


class LLMGovernor:
    """One concurrency limit and one pair of rate limits for every model call in the process."""

    def __init__(self, concurrency: int = 4, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None, burst_seconds: float | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        self._sleep = sleep
        self._clock = clock
        self.configure(concurrency, requests_per_minute, tokens_per_minute, burst_seconds)

    def configure(self, concurrency: int = 4, requests_per_minute: float | None = None,
                  tokens_per_minute: float | None = None, burst_seconds: float | None = None) -> None:
        """Replace the limits (calls in flight finish under the old ones). ``burst_seconds`` bounds how much
        of the per-minute budget may be spent at once (default: the whole minute)."""
        if concurrency < 1:
            raise ConfigError("concurrency must be >= 1")

        def bucket(per_minute: float | None) -> TokenBucket | None:
            if not per_minute:
                return None
            burst = None if burst_seconds is None else max(1.0, per_minute * burst_seconds / 60.0)
            return TokenBucket(per_minute, burst, clock=self._clock)

        self.concurrency = concurrency
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self._slots = threading.BoundedSemaphore(concurrency)
        self._requests = bucket(requests_per_minute)
        self._tokens = bucket(tokens_per_minute)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    @contextmanager
    def slot(self, estimated_tokens: int, metrics: LLMMetrics | None = None) -> Iterator[Callable[[int], None]]:
        """Wait for the rate limits, then for a concurrency slot. Yields ``settle(actual_tokens)``."""
        waits = [b.reserve(n) for b, n in ((self._requests, 1), (self._tokens, estimated_tokens)) if b is not None]
        wait = max(waits, default=0.0)
        if wait > 0:
            (metrics or METRICS).incr(rate_limit_wait_ms=round(wait * 1000))
            self._sleep(wait)
        slots, tokens = self._slots, self._tokens
        slots.acquire()
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        settled = False

        def settle(actual_tokens: int) -> None:
            nonlocal settled
            if tokens is not None and not settled:
                tokens.adjust(actual_tokens - estimated_tokens)
            settled = True

        try:
            yield settle
        finally:
            with self._lock:
                self.in_flight -= 1
            slots.release()


def _env_float(name: str) -> float | None:
    v = os.environ.get(name)
    return float(v) if v else None


GOVERNOR = LLMGovernor(concurrency=int(os.environ.get("LOREGRAPH_LLM_CONCURRENCY") or 4),
                       requests_per_minute=_env_float("LOREGRAPH_LLM_RPM"),
                       tokens_per_minute=_env_float("LOREGRAPH_LLM_TPM"))
"""The process-wide governor every :class:`LLMClient` uses unless given another."""


def configure_llm_limits(concurrency: int = 4, requests_per_minute: float | None = None,
                         tokens_per_minute: float | None = None, burst_seconds: float | None = None) -> None:
    """Set the process-wide model-call limits (env: LOREGRAPH_LLM_CONCURRENCY / _RPM / _TPM)."""
    GOVERNOR.configure(concurrency, requests_per_minute, tokens_per_minute, burst_seconds)


# ---- tolerant JSON --------------------------------------------------------------------------------
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_OPEN_THINK = re.compile(r"^\s*<(think|thinking|reasoning)>.*", re.S | re.I)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


def parse_json_tolerant(text: str) -> dict[str, Any]:
    """Read the JSON object in a model's answer: strips ``<think>`` blocks, code fences and text around
    the outermost object. Raises ValueError when there is none."""
    s = _THINK.sub("", text or "").strip()
    if _OPEN_THINK.match(s):  # an unterminated think block holds no answer
        raise ValueError("no JSON object (unterminated think block)")
    fenced = _FENCE.findall(s)
    candidates = [*fenced, s] if fenced else [s]
    for cand in candidates:
        cand = cand.strip()
        try:
            obj = json.loads(cand)
        except ValueError:
            start, end = cand.find("{"), cand.rfind("}")
            if start < 0 or end <= start:
                continue
            try:
                obj = json.loads(cand[start:end + 1])
            except ValueError:
                continue
        if isinstance(obj, dict):
            return obj
    raise ValueError("no JSON object in the answer")


def salvage_truncated_json(text: str) -> dict[str, Any] | None:
    """Best effort for an answer cut off at the output limit: keep the complete array items and top-level
    members, drop the half-written one, close the brackets."""
    s = _THINK.sub("", text or "")
    start = s.find("{")
    if start < 0:
        return None
    s = s[start:]
    # walk the text remembering the last position where a value inside a container was complete
    stack: list[str] = []
    in_str = esc = False
    cut = -1
    cut_stack: list[str] = []
    for i, ch in enumerate(s):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
            if not stack:
                break
            if stack[-1] == "]" or len(stack) == 1:  # a whole array item / top-level member ends here
                cut, cut_stack = i + 1, list(stack)
        elif ch == "," and stack and (stack[-1] == "]" or len(stack) == 1):
            cut, cut_stack = i, list(stack)
    if cut < 0:
        return None
    repaired = s[:cut].rstrip().rstrip(",") + "".join(reversed(cut_stack))
    try:
        obj = json.loads(repaired)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


# ---- client ---------------------------------------------------------------------------------------
@dataclass
class LLMResult:
    data: dict[str, Any]
    usage: Usage
    mode: Mode
    partial: bool = False
    """True when the answer was cut off at the output ceiling and only its complete items were kept."""
    extra: dict[str, Any] = field(default_factory=dict)


class _Transient(Exception):
    def __init__(self, kind: str, retry_after: float | None = None):
        super().__init__(kind)
        self.kind = kind
        self.retry_after = retry_after


class _Invalid(Exception):
    pass


class _ModeRefused(Exception):
    def __init__(self, status: int, named: tuple[SchemaForm, ...] = (), forms_named: bool = True):
        super().__init__(f"status_{status}")
        self.status = status
        self.named = named
        """The schema forms the refusal names (empty: it names none in particular)."""
        self.forms_named = forms_named
        """False when the refusal names the mode itself (e.g. ``json_object``) and none of the schema forms."""


# ---- per-endpoint capabilities --------------------------------------------------------------------
@dataclass
class EndpointCaps:
    """What one endpoint (base URL + model) was found to accept; shared by every client of the process."""

    mode: Mode = "json_schema"
    refused_forms: frozenset[str] = frozenset()
    """JSON-mode schema forms the server refused; they are not sent again."""


class EndpointRegistry:
    """Process-wide memory of negotiated capabilities, keyed by :func:`endpoint_key`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._caps: dict[str, EndpointCaps] = {}

    def get(self, key: str) -> EndpointCaps:
        with self._lock:
            return self._caps.setdefault(key, EndpointCaps())

    def snapshot(self) -> dict[str, EndpointCaps]:
        with self._lock:
            return {k: EndpointCaps(v.mode, v.refused_forms) for k, v in self._caps.items()}

    def forget(self, key: str | None = None) -> None:
        """Forget one endpoint (or all): the next call negotiates again."""
        with self._lock:
            if key is None:
                self._caps.clear()
            else:
                self._caps.pop(key, None)

    @contextmanager
    def locked(self) -> Iterator[None]:
        with self._lock:
            yield


ENDPOINTS = EndpointRegistry()
"""Negotiated structured-output capabilities of every endpoint this process talked to."""


def endpoint_key(config: LLMConfig) -> str:
    """``base_url|model``: what negotiated capabilities are remembered under."""
    base = (config.base_url or "https://api.openai.com/v1").rstrip("/")
    return f"{base}|{config.model}"


# status codes with which servers refuse a response_format: 400/422 (most), 500 (llama-cpp-python), 404/415 (rare)
_REFUSAL_STATUS = (400, 404, 415, 422, 500)
_REFUSAL_HINTS = ("response_format", "json_schema", "json_object", "schema", "guided_json", "format")
_REFUSAL_HINTS_5XX = ("response_format", "json_schema", "schema", "guided_json")
"""A 500 is a refusal only when its body names the structured-output fields; otherwise it is transient."""


class LLMClient:
    """JSON-answer calls to one OpenAI-compatible endpoint. Thread-safe; blocking (runs on a worker thread)."""

    def __init__(self, config: LLMConfig, *, governor: LLMGovernor | None = None, metrics: LLMMetrics | None = None,
                 sleep: Callable[[float], None] = time.sleep, endpoints: EndpointRegistry | None = None):
        import openai

        self.config = config
        self.governor = governor or GOVERNOR
        self.metrics = metrics or METRICS
        self._sleep = sleep
        self._openai = openai
        self._client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "not-needed",
                                     timeout=config.timeout, max_retries=0, default_headers=config.default_headers)
        self.forced: Mode | None = (config.structured_output if config.structured_output != "auto"
                                    else structured_output_from_env())
        """The mode forced by configuration or environment; None: negotiated."""
        forms = config.schema_forms if config.schema_forms is not None else schema_forms_from_env()
        self.schema_forms: tuple[SchemaForm, ...] = SCHEMA_FORMS if forms is None else tuple(forms)
        self._endpoints = endpoints or ENDPOINTS
        self.endpoint = endpoint_key(config)
        self._caps = self._endpoints.get(self.endpoint)

    @property
    def mode(self) -> Mode:
        """The structured-output mode the next call uses."""
        return self.forced or self._caps.mode

    def _forms(self, mode: Mode) -> tuple[SchemaForm, ...]:
        if mode != "json_object":
            return ()
        refused = self._caps.refused_forms
        return tuple(f for f in self.schema_forms if f not in refused)

    @property
    def name(self) -> str:
        return self.config.model

    def close(self) -> None:
        self._client.close()

    # ---- public -------------------------------------------------------------------------------
    def complete_json(self, messages: list[dict[str, Any]], schema: dict[str, Any], *, name: str = "answer",
                      max_tokens: int | None = None,
                      validate: Callable[[dict[str, Any]], Any] | None = None) -> LLMResult:
        """Ask for one JSON object. ``validate`` may raise to reject a parsed answer (treated like invalid
        JSON: retried once). Raises :class:`LLMError` subclasses when the call finally fails."""
        usage = Usage()
        self.metrics.incr(requests=1)
        limit = max_tokens or self.config.max_tokens
        retried = False
        last_kind = ""
        while True:
            mode = self.mode
            forms = self._forms(mode)
            try:
                text, finish = self._call(messages, schema, name, mode, limit, usage, forms)
            except _ModeRefused as exc:
                sent = forms if exc.forms_named else ()
                if self._downgrade(mode, tuple(f for f in sent if f in exc.named) or sent, exc.status):
                    usage.fallbacks += 1
                    self.metrics.incr(fallbacks=1)
                    continue
                self.metrics.incr(failures=1)
                raise LLMError("bad_request", f"the server refused response_format={mode} "
                                              f"(status {exc.status})", usage) from None
            except _Transient as exc:
                last_kind = exc.kind
                if retried:
                    self.metrics.incr(failures=1)
                    raise LLMUnavailable(exc.kind, "failed again after one retry", usage) from None
                retried = True
                self._backoff(usage, exc.retry_after)
                continue
            except LLMError as exc:
                self.metrics.incr(failures=1)
                exc.usage = usage
                raise
            if finish == "length":
                usage.truncations += 1
                self.metrics.incr(truncations=1)
                if limit < self.config.max_tokens_ceiling:
                    limit = min(self.config.max_tokens_ceiling, limit * 2)
                    log.info("llm answer truncated; re-asking with max_tokens=%d", limit)
                    continue
                data = salvage_truncated_json(text)
                if data is not None and self._valid(data, validate):
                    self.metrics.incr(truncation_recoveries=1)
                    return LLMResult(data, usage, mode, partial=True)
                self.metrics.incr(failures=1)
                raise LLMResponseError("truncated", f"answer exceeds max_tokens={limit}", usage)
            try:
                data = parse_json_tolerant(text)
                if not self._valid(data, validate):
                    raise _Invalid("schema")
            except (ValueError, _Invalid):
                self.metrics.incr(invalid_json=1)
                last_kind = "invalid_json"
                if retried:
                    self.metrics.incr(failures=1)
                    raise LLMResponseError("invalid_json", "no valid JSON object after one retry", usage) from None
                retried = True
                self._backoff(usage, None)
                continue
            if usage.truncations:
                self.metrics.incr(truncation_recoveries=1)
            if retried:
                log.info("llm call recovered after one retry (%s)", last_kind)
            return LLMResult(data, usage, mode)

    # ---- internals ----------------------------------------------------------------------------
    @staticmethod
    def _valid(data: dict[str, Any], validate: Callable[[dict[str, Any]], Any] | None) -> bool:
        if validate is None:
            return True
        try:
            validate(data)
        except Exception:
            return False
        return True

    def _backoff(self, usage: Usage, retry_after: float | None) -> None:
        usage.retries += 1
        self.metrics.incr(retries=1)
        if retry_after is not None:
            delay = min(max(retry_after, 0.0), self.config.max_backoff)
        else:
            delay = self.config.retry_backoff * (1.0 + 0.5 * random.random())
        if delay > 0:
            self._sleep(delay)

    def _downgrade(self, mode: Mode, refused: tuple[SchemaForm, ...], status: int) -> bool:
        """After a refusal of ``mode``: first stop sending the refused schema forms (JSON mode: the ones the
        error names, else all that were sent), then step down to the next mode unless one is forced.
        Remembered for the endpoint. False when nothing is left to try."""
        with self._endpoints.locked():
            caps = self._caps
            if refused:
                new = frozenset(refused) - caps.refused_forms
                if new:
                    caps.refused_forms = caps.refused_forms | new
                    log.warning("llm endpoint %s refused the JSON-mode schema form(s) %s (status %d); not sending "
                                "them from now on", self.endpoint, sorted(new), status)
                return True
            if self.forced is not None:
                return False
            if caps.mode != mode:  # another thread already moved on
                return True
            nxt = _MODES.index(mode) + 1
            if nxt >= len(_MODES):
                return False
            caps.mode = _MODES[nxt]
            log.warning("llm endpoint %s refused response_format=%s (status %d); using %s from now on",
                        self.endpoint, mode, status, caps.mode)
            return True

    def request_kwargs(self, messages: list[dict[str, Any]], schema: dict[str, Any], name: str, mode: Mode,
                       limit: int, forms: tuple[SchemaForm, ...] = ()) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments of one call (``extra_body`` holds the non-OpenAI fields)."""
        kw: dict[str, Any] = {"model": self.config.model, "messages": messages,
                              "temperature": self.config.temperature, self.config.token_param: limit}
        extra: dict[str, Any] = {}
        if mode == "json_schema":
            kw["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": name, "schema": schema, "strict": False}}
        elif mode == "json_object":
            kw["response_format"] = {"type": "json_object"}
            if "response_format" in forms:
                kw["response_format"]["schema"] = schema
            if "guided_json" in forms:
                extra["guided_json"] = schema
            if "format" in forms:
                extra["format"] = schema
        if self.config.extra_body:
            extra.update(self.config.extra_body)
        if extra:
            kw["extra_body"] = extra
        return kw

    def _call(self, messages: list[dict[str, Any]], schema: dict[str, Any], name: str, mode: Mode, limit: int,
              usage: Usage, forms: tuple[SchemaForm, ...] = ()) -> tuple[str, str | None]:
        oa = self._openai
        kw = self.request_kwargs(messages, schema, name, mode, limit, forms)
        estimate = approx_prompt_tokens(messages, kw.get("response_format"))
        with self.governor.slot(estimate + limit // 4, self.metrics) as settle:
            usage.calls += 1
            self.metrics.incr(calls=1)
            try:
                resp = self._client.chat.completions.create(**kw)
            except oa.APITimeoutError:
                settle(0)
                raise _Transient("timeout") from None
            except oa.APIConnectionError:
                settle(0)
                raise _Transient("connection") from None
            except oa.RateLimitError as exc:
                settle(0)
                raise _Transient("rate_limited", _retry_after(exc)) from None
            except oa.APIStatusError as exc:
                settle(0)
                code = exc.status_code
                if (mode != "none" or forms) and _is_refusal(exc, code):
                    raise _ModeRefused(code, _named_forms(exc, forms), _names_forms(exc)) from None
                if code >= 500 or code == 408:
                    raise _Transient(f"status_{code}", _retry_after(exc)) from None
                raise LLMError(f"status_{code}", "the server refused the request") from None
            except oa.OpenAIError as exc:  # malformed body and other client-side surprises
                settle(0)
                raise _Transient(type(exc).__name__.lower()) from None
            if not getattr(resp, "choices", None):
                settle(0)
                raise _Transient("empty_response")
            choice = resp.choices[0]
            text = (choice.message.content if choice.message else None) or ""
            u = getattr(resp, "usage", None)
            pt = int(getattr(u, "prompt_tokens", 0) or 0) or estimate
            ct = int(getattr(u, "completion_tokens", 0) or 0) or approx_tokens(text)
            settle(pt + ct)
        usage.prompt_tokens += pt
        usage.completion_tokens += ct
        self.metrics.incr(prompt_tokens=pt, completion_tokens=ct)
        return text, choice.finish_reason


def _error_text(exc: Any) -> str:
    text = str(getattr(exc, "message", "") or exc).lower()
    body = getattr(exc, "body", None)
    if body is not None:
        text += " " + json.dumps(body, default=str).lower()
    return text


def _is_refusal(exc: Any, status: int) -> bool:
    """A 400/404/415/422/500 whose message or body names the structured-output fields."""
    if status not in _REFUSAL_STATUS:
        return False
    text = _error_text(exc)
    return any(h in text for h in (_REFUSAL_HINTS_5XX if status >= 500 else _REFUSAL_HINTS))


def _names_forms(exc: Any) -> bool:
    """Whether a refusal points at the schema forms rather than at the ``json_object`` type itself."""
    text = _error_text(exc)
    return "json_object" not in text or any(h in text for h in ("schema", "guided_json", '"format"', "'format'"))


def _named_forms(exc: Any, forms: tuple[SchemaForm, ...]) -> tuple[SchemaForm, ...]:
    """The sent schema forms a refusal names (``schema`` for ``response_format.schema``)."""
    text = _error_text(exc)
    marks: dict[SchemaForm, tuple[str, ...]] = {"response_format": ("schema",), "guided_json": ("guided_json",),
                                                "format": ('"format"', "'format'", " format:", " format ")}
    return tuple(f for f in forms if any(m in text for m in marks[f]) and not (f == "response_format"
                                                                               and "guided_json" in text))


def _retry_after(exc: Any) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if not headers:
        return None
    for key in ("retry-after-ms", "retry-after"):
        raw = headers.get(key)
        if raw is None:
            continue
        try:
            v = float(raw)
        except ValueError:
            continue
        return v / 1000.0 if key.endswith("-ms") else v
    return None
