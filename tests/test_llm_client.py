"""LLMClient against the scripted OpenAI-compatible server on 127.0.0.1 (the real ``openai`` SDK underneath):
structured output and its fallbacks, retry once with backoff, truncation recovery, process-wide limits."""

from __future__ import annotations

import threading

import pytest

from loregraph.bench.scripted_llm import ScriptedLLMServer
from loregraph.models.llm import (
    ENDPOINTS,
    GOVERNOR,
    STRUCTURED_OUTPUT_ENV,
    LLMClient,
    LLMConfig,
    LLMError,
    LLMGovernor,
    LLMMetrics,
    LLMResponseError,
    LLMUnavailable,
    TokenBucket,
    configure_llm_limits,
    parse_json_tolerant,
    salvage_truncated_json,
)

SCHEMA = {"type": "object", "properties": {"items": {"type": "array"}}, "required": ["items"]}
ANSWER = {"items": [{"name": "FastAPI"}, {"name": "Orion"}, {"name": "Nora"}]}
MSGS = [{"role": "system", "content": "Answer with JSON."}, {"role": "user", "content": "<message>\nhello\n</message>"}]


@pytest.fixture(autouse=True)
def fresh_endpoints(monkeypatch):
    """Negotiated modes are process-wide per base_url+model; a port reused by a later test starts afresh."""
    monkeypatch.delenv(STRUCTURED_OUTPUT_ENV, raising=False)
    monkeypatch.delenv("LOREGRAPH_LLM_SCHEMA_FORMS", raising=False)
    ENDPOINTS.forget()
    yield
    ENDPOINTS.forget()


@pytest.fixture
def server():
    with ScriptedLLMServer({"hello": ANSWER}, timeout_delay=2.0) as s:
        yield s


def client(server: ScriptedLLMServer, **cfg) -> LLMClient:
    cfg.setdefault("retry_backoff", 0.05)
    cfg.setdefault("timeout", 5.0)
    return LLMClient(LLMConfig(model="scripted", base_url=server.base_url, **cfg), governor=LLMGovernor(),
                     metrics=LLMMetrics())


def test_json_schema_request_usage_and_metrics(server):
    c = client(server)
    res = c.complete_json(MSGS, SCHEMA, name="things")
    assert res.data == ANSWER and res.mode == "json_schema" and not res.partial
    (call,) = server.calls
    assert call.response_format["type"] == "json_schema"
    assert call.response_format["json_schema"]["schema"] == SCHEMA
    assert call.body["model"] == "scripted" and call.max_tokens == 2048
    # token accounting comes from the server's usage block
    assert res.usage.calls == 1 and res.usage.retries == 0
    assert res.usage.prompt_tokens == call.prompt_tokens > 0
    assert res.usage.completion_tokens == call.completion_tokens > 0
    snap = c.metrics.snapshot()
    assert snap["calls"] == 1 and snap["prompt_tokens"] == call.prompt_tokens and snap["failures"] == 0


@pytest.mark.parametrize("fault,kind", [("429", "rate_limited"), ("500", "status_500"), ("503", "status_503"),
                                        ("timeout", "timeout")])
def test_transient_error_retried_once_after_backoff(server, fault, kind):
    c = client(server, retry_backoff=0.2, timeout=0.5)
    server.inject(fault)
    res = c.complete_json(MSGS, SCHEMA)
    assert res.data == ANSWER
    assert res.usage.calls == 2 and res.usage.retries == 1
    first, second = server.calls
    assert first.fault == fault and second.fault is None
    gap = second.at - first.at
    assert gap >= 0.2 + (0.5 if fault == "timeout" else 0.0) - 0.02  # backoff (after the timeout) was respected
    assert c.metrics.snapshot()["retries"] == 1


def test_retry_after_header_is_honoured(server):
    server.retry_after = 0.4
    c = client(server, retry_backoff=0.0)
    server.inject("429")
    c.complete_json(MSGS, SCHEMA)
    first, second = server.calls
    assert second.at - first.at >= 0.38


def test_persistent_failure_is_not_retried_twice(server):
    c = client(server)
    server.inject("429", "429", "429")
    with pytest.raises(LLMUnavailable) as info:
        c.complete_json(MSGS, SCHEMA)
    assert info.value.kind == "rate_limited"
    assert len(server.calls) == 2 and info.value.usage.calls == 2 and info.value.usage.retries == 1
    assert c.metrics.snapshot()["failures"] == 1


def test_invalid_json_retried_once_then_error(server):
    c = client(server)
    server.inject("malformed")
    assert c.complete_json(MSGS, SCHEMA).data == ANSWER
    assert [x.fault for x in server.calls] == ["malformed", None]
    server.reset_calls()
    server.inject("malformed", "malformed")
    with pytest.raises(LLMResponseError) as info:
        c.complete_json(MSGS, SCHEMA)
    assert info.value.kind == "invalid_json" and len(server.calls) == 2


def test_validation_failure_counts_as_invalid(server):
    c = client(server)

    def needs_people(data):
        if "people" not in data:
            raise ValueError("missing people")

    with pytest.raises(LLMResponseError):
        c.complete_json(MSGS, SCHEMA, validate=needs_people)
    assert len(server.calls) == 2


def test_truncated_answer_reasked_with_higher_limit(server):
    c = client(server, max_tokens=8, max_tokens_ceiling=64)
    res = c.complete_json(MSGS, SCHEMA)
    assert res.data == ANSWER and not res.partial
    assert [x.max_tokens for x in server.calls] == [8, 16, 32]
    assert [x.finish_reason for x in server.calls] == ["length", "length", "stop"]
    assert res.usage.truncations == 2 and res.usage.retries == 0
    assert c.metrics.snapshot()["truncation_recoveries"] == 1


def test_truncated_at_ceiling_keeps_complete_items(server):
    c = client(server, max_tokens=8, max_tokens_ceiling=16)
    res = c.complete_json(MSGS, SCHEMA)
    assert res.partial
    assert res.data["items"] and all(set(x) == {"name"} for x in res.data["items"])
    assert len(res.data["items"]) < len(ANSWER["items"])
    assert [x.max_tokens for x in server.calls] == [8, 16]


def test_injected_truncation_recovers(server):
    c = client(server)
    server.inject("truncate")
    res = c.complete_json(MSGS, SCHEMA)
    assert res.data == ANSWER
    assert [x.max_tokens for x in server.calls] == [2048, 4096]


def test_structured_output_falls_back_and_remembers(server):
    server.reject_modes = {"json_schema"}
    c = client(server)
    assert c.complete_json(MSGS, SCHEMA).data == ANSWER
    assert [(x.response_format or {}).get("type") for x in server.calls] == ["json_schema", "json_object"]
    assert c.mode == "json_object"
    server.reset_calls()
    c.complete_json(MSGS, SCHEMA)
    assert [(x.response_format or {}).get("type") for x in server.calls] == ["json_object"]
    # a server with no JSON support at all: plain text read by the tolerant parser
    server.reject_modes = {"json_schema", "json_object"}
    server.reset_calls()
    server.inject(None, "think")  # type: ignore[arg-type]
    res = c.complete_json(MSGS, SCHEMA)
    assert res.data == ANSWER and res.mode == "none" and c.mode == "none"
    assert server.calls[-1].response_format is None and server.calls[-1].answer.startswith("<think>")


def test_fixed_mode_does_not_fall_back(server):
    server.reject_modes = {"json_schema"}
    c = client(server, structured_output="json_schema")
    with pytest.raises(Exception) as info:
        c.complete_json(MSGS, SCHEMA)
    assert getattr(info.value, "kind", "") == "bad_request" and len(server.calls) == 1


def test_tolerant_parsing():
    assert parse_json_tolerant('<think>maybe {"x": 0}</think>\n```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_tolerant('Sure! Here you go: {"a": {"b": [1, 2]}} Hope it helps.') == {"a": {"b": [1, 2]}}
    assert parse_json_tolerant('<THINK>\nplan\n</THINK>{"a": 2}') == {"a": 2}
    for bad in ("", "no json here", "<think>never closed {\"a\": 1}", "[1, 2]"):
        with pytest.raises(ValueError):
            parse_json_tolerant(bad)
    cut = '{"entities": [{"name": "A", "type": "tool"}, {"name": "B", "ty'
    assert salvage_truncated_json(cut) == {"entities": [{"name": "A", "type": "tool"}]}
    assert salvage_truncated_json('{"a": "unterminated') is None


def test_token_bucket_waits():
    now = [0.0]
    b = TokenBucket(per_minute=60, burst=2, clock=lambda: now[0])  # 1 per second, burst of 2
    assert b.reserve(1) == 0 and b.reserve(1) == 0
    assert b.reserve(1) == pytest.approx(1.0)
    assert b.reserve(1) == pytest.approx(2.0)  # queued behind the previous reservation
    now[0] = 10.0
    assert b.reserve(1) == 0
    b.adjust(5)  # the call used more than reserved: the debt delays the next caller
    assert b.reserve(1) > 0


class ManualClock:
    """The governor's clock and sleep: sleeping moves the clock on, nothing else does (no wall-clock timing)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_requests_per_minute_limit_spaces_calls(server):
    clock = ManualClock()
    gov = LLMGovernor(concurrency=4, requests_per_minute=600, burst_seconds=0.1, sleep=clock.sleep,
                      clock=clock)  # 10/s, no burst
    c = LLMClient(LLMConfig(model="scripted", base_url=server.base_url), governor=gov, metrics=LLMMetrics())
    for _ in range(5):
        c.complete_json(MSGS, SCHEMA)
    assert clock.slept == pytest.approx([0.1] * 4)  # the first call at once, then one every 0.1 s
    assert len(server.calls) == 5 and c.metrics.snapshot()["rate_limit_wait_ms"] == 400


def test_tokens_per_minute_limit(server):
    # ~530 tokens per request at 60k tokens/min (1k/s) with a 0.6 s burst: the 2nd and 3rd requests wait
    clock = ManualClock()
    gov = LLMGovernor(concurrency=4, tokens_per_minute=60000, burst_seconds=0.6, sleep=clock.sleep, clock=clock)
    c = LLMClient(LLMConfig(model="scripted", base_url=server.base_url, max_tokens=40), governor=gov,
                  metrics=LLMMetrics())
    long = [{"role": "user", "content": "<message>\nhello " + "x" * 2000 + "\n</message>"}]
    for _ in range(3):
        c.complete_json(long, SCHEMA)
    assert len(clock.slept) == 2 and all(w > 0.3 for w in clock.slept), clock.slept
    assert all(x.prompt_tokens > 500 for x in server.calls)


def test_concurrency_limit_is_process_wide(server):
    server.delay = 0.15
    before = (GOVERNOR.concurrency, GOVERNOR.requests_per_minute, GOVERNOR.tokens_per_minute)
    configure_llm_limits(concurrency=2)
    try:
        # two clients (two call sites), one process-wide limit
        clients = [LLMClient(LLMConfig(model="scripted", base_url=server.base_url)) for _ in range(2)]
        assert all(c.governor is GOVERNOR for c in clients)
        errors: list[BaseException] = []

        def work(c: LLMClient) -> None:
            try:
                c.complete_json(MSGS, SCHEMA)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(clients[i % 2],)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert not errors and len(server.calls) == 6
        assert server.max_in_flight == 2 and GOVERNOR.max_in_flight == 2
    finally:
        configure_llm_limits(*before)


# ---- structured-output negotiation per endpoint -----------------------------------------------------------------
def kinds(server: ScriptedLLMServer) -> list[str | None]:
    return [(x.response_format or {}).get("type") for x in server.calls]


def test_500_naming_response_format_is_a_refusal_not_a_transient_error(server):
    """llama-cpp-python refuses json_schema with a 500 whose body names response_format: one fallback call, no
    retry and no backoff; JSON mode then carries the schema; the mode is remembered for base_url+model."""
    server.reject_modes, server.reject_status, server.schema_forms = {"json_schema"}, 500, {"response_format"}
    c = client(server, retry_backoff=5.0)  # a retry would take 5 s
    res = c.complete_json(MSGS, SCHEMA)
    assert res.data == ANSWER and res.mode == "json_object"
    assert [x.status for x in server.calls] == [500, 200] and kinds(server) == ["json_schema", "json_object"]
    assert "response_format" in str(server.calls[0].body) and server.calls[1].schema == SCHEMA
    assert res.usage.calls == 2 and res.usage.retries == 0 and res.usage.fallbacks == 1
    # a new client (another call site) of the same endpoint starts where the first one ended
    server.reset_calls()
    again = client(server)
    assert again.mode == "json_object"
    again.complete_json(MSGS, SCHEMA)
    assert kinds(server) == ["json_object"]
    # another model on the same server negotiates for itself
    server.reset_calls()
    other = LLMClient(LLMConfig(model="other", base_url=server.base_url), governor=LLMGovernor(), metrics=LLMMetrics())
    other.complete_json(MSGS, SCHEMA)
    assert kinds(server) == ["json_schema", "json_object"]


@pytest.mark.parametrize("form", ["response_format", "guided_json", "format"])
def test_json_mode_sends_the_schema_in_the_forms_servers_understand(server, form):
    """A server that honours one form gets the schema and answers JSON; free text would fail validation."""
    server.reject_modes, server.reject_status, server.schema_forms = {"json_schema"}, 422, {form}
    server.unconstrained = "Sure! The items are FastAPI, Orion and Nora."
    c = client(server)
    res = c.complete_json(MSGS, SCHEMA)
    assert res.data == ANSWER and res.mode == "json_object"
    body = server.calls[-1].body
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert body["guided_json"] == SCHEMA and body["format"] == SCHEMA  # the other forms are ignored by this server
    assert server.calls[-1].schema == SCHEMA


def test_json_mode_without_schema_support_gets_free_text(server):
    """The same small model behind a server that honours no form: no schema reaches it, no JSON comes back."""
    server.reject_modes, server.unconstrained = {"json_schema"}, "Sure! The items are FastAPI, Orion and Nora."
    c = client(server)
    with pytest.raises(LLMResponseError) as info:
        c.complete_json(MSGS, SCHEMA)
    assert info.value.kind == "invalid_json"
    assert kinds(server) == ["json_schema", "json_object", "json_object"]
    assert all(x.schema is None for x in server.calls)


def test_strict_server_refusing_one_schema_form_keeps_the_others(server):
    """A server that refuses an unknown field it does not know: that form is dropped for the endpoint; the schema
    still reaches it in the form it honours."""
    server.reject_modes, server.reject_fields, server.schema_forms = {"json_schema"}, {"guided_json"}, {"format"}
    server.unconstrained = "free text"
    c = client(server)
    assert c.complete_json(MSGS, SCHEMA).data == ANSWER
    assert [x.status for x in server.calls] == [400, 400, 200]
    assert kinds(server) == ["json_schema", "json_object", "json_object"]
    last = server.calls[-1]
    assert "guided_json" not in last.body and last.body["format"] == SCHEMA and last.schema == SCHEMA
    snap = ENDPOINTS.snapshot()[c.endpoint]
    assert snap.mode == "json_object" and snap.refused_forms == {"guided_json"}
    server.reset_calls()
    client(server).complete_json(MSGS, SCHEMA)
    assert [x.status for x in server.calls] == [200]


def test_server_refusing_every_schema_form_gets_plain_json_mode(server):
    server.reject_modes = {"json_schema"}
    server.reject_fields = {"guided_json", "format", "response_format.schema"}
    c = client(server)
    assert c.complete_json(MSGS, SCHEMA).data == ANSWER
    assert [x.status for x in server.calls] == [400, 400, 400, 400, 200]  # negotiated once per endpoint
    last = server.calls[-1].body
    assert last["response_format"] == {"type": "json_object"} and "guided_json" not in last and "format" not in last
    server.reset_calls()
    client(server).complete_json(MSGS, SCHEMA)
    assert [x.status for x in server.calls] == [200]


def test_mode_forced_by_environment(server, monkeypatch):
    monkeypatch.setenv(STRUCTURED_OUTPUT_ENV, "json_object")
    server.schema_forms = {"response_format"}
    c = client(server)
    assert c.mode == "json_object" and c.complete_json(MSGS, SCHEMA).mode == "json_object"
    assert kinds(server) == ["json_object"] and server.calls[0].schema == SCHEMA
    # forced: a refusal of the mode itself is an error, not a silent downgrade
    server.reset_calls()
    server.reject_modes = {"json_object"}
    with pytest.raises(LLMError) as info:
        c.complete_json(MSGS, SCHEMA)
    assert info.value.kind == "bad_request" and len(server.calls) == 1
    monkeypatch.setenv(STRUCTURED_OUTPUT_ENV, "none")
    server.reset_calls()
    assert client(server).complete_json(MSGS, SCHEMA).mode == "none" and kinds(server) == [None]
    cfg = LLMConfig.from_env({"LOREGRAPH_LLM_MODEL": "m", STRUCTURED_OUTPUT_ENV: "json_schema",
                              "LOREGRAPH_LLM_SCHEMA_FORMS": "guided_json"})
    assert cfg is not None and cfg.structured_output == "json_schema" and cfg.schema_forms == ("guided_json",)
    for var, bad in ((STRUCTURED_OUTPUT_ENV, "grammar"), ("LOREGRAPH_LLM_SCHEMA_FORMS", "grammar")):
        with pytest.raises(ValueError, match=var):
            LLMConfig.from_env({"LOREGRAPH_LLM_MODEL": "m", var: bad})


def test_schema_forms_configured(server):
    c = client(server, structured_output="json_object", schema_forms=())
    c.complete_json(MSGS, SCHEMA)
    assert server.calls[0].body["response_format"] == {"type": "json_object"}
    assert "guided_json" not in server.calls[0].body and "format" not in server.calls[0].body
