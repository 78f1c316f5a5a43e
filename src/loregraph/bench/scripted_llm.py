"""A scripted OpenAI-compatible chat server on 127.0.0.1: the one stand-in for a remote model.

It speaks real HTTP (``POST /v1/chat/completions``), so the real ``openai`` SDK and :class:`LLMClient` are
exercised end to end. Answers come from a script matched against the request's current message (the
text inside the last ``<message>…</message>`` of the prompt, else the last message), or from a
responder function. Every call is recorded. Faults can be queued: ``429``, ``500``/``502``/``503``,
``timeout`` (the answer comes after the client gave up), ``malformed`` (not JSON), ``truncate``
(``finish_reason: length``), ``think`` (answer wrapped in a ``<think>`` block and a code fence).
With ``simulate_max_tokens`` an answer longer than the request's output limit is cut off with
``finish_reason: length``, as a real server does. Token counts use :func:`approx_prompt_tokens`.

Structured-output behaviours seen on real servers:

- ``reject_modes`` with ``reject_status``: refuse a ``response_format`` type, with a 400 (OpenAI-style) or
  422, or with llama-cpp-python's 500 whose body is a validation error naming ``response_format``;
- ``schema_forms``: the JSON-mode schema forms it honours (``response_format`` = llama.cpp's
  ``response_format.schema``, ``guided_json`` = vLLM, ``format`` = Ollama); others are ignored, as real
  servers ignore unknown fields; ``reject_fields`` refuses named ones with a 400 instead (strict servers);
- ``unconstrained``: the answer given when no schema reached the "model" (a small model's free text),
  so a test sees the difference the schema makes.

Used by the tests and by ``loregraph bench llm-cost``; never contacts anything but loopback.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loregraph.models.llm import CHARS_PER_TOKEN, approx_prompt_tokens, approx_tokens

_CURRENT = re.compile(r"<message>\n?(.*?)\n?</message>", re.S)

Answer = dict[str, Any] | str | Callable[["Call"], dict[str, Any] | str]


@dataclass
class Call:
    """One request as the server saw it."""

    body: dict[str, Any]
    at: float
    status: int = 200
    fault: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answer: str = ""

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def prompt(self) -> str:
        return "\n".join(str(m.get("content") or "") for m in self.messages)

    @property
    def current(self) -> str:
        """The message being extracted (inside the last <message> tags), else the last message's text."""
        last = str(self.messages[-1].get("content") or "") if self.messages else ""
        found = _CURRENT.findall(last)
        return found[-1] if found else last

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.body.get("response_format")

    @property
    def max_tokens(self) -> int | None:
        return self.body.get("max_tokens") or self.body.get("max_completion_tokens")

    schema: dict[str, Any] | None = None
    """The schema that reached the model: a ``json_schema`` response format, or a JSON-mode form it honours."""


@dataclass
class _State:
    script: list[tuple[str, Answer]] = field(default_factory=list)
    faults: deque[str] = field(default_factory=deque)
    calls: list[Call] = field(default_factory=list)


class ScriptedLLMServer:
    def __init__(self, script: dict[str, Answer] | None = None, *, responder: Answer | None = None,
                 default: Answer | None = None, simulate_max_tokens: bool = True,
                 reject_modes: set[str] | tuple[str, ...] = (), timeout_delay: float = 3.0,
                 retry_after: float | None = None, delay: float = 0.0, reject_status: int = 400,
                 schema_forms: set[str] | tuple[str, ...] = (), reject_fields: set[str] | tuple[str, ...] = (),
                 unconstrained: Answer | None = None):
        self._state = _State(script=list((script or {}).items()))
        self.responder = responder
        self.default: Answer = default if default is not None else {"entities": [], "relations": [], "ended": []}
        self.simulate_max_tokens = simulate_max_tokens
        self.reject_modes = set(reject_modes)
        self.reject_status = reject_status
        self.schema_forms = set(schema_forms)
        self.reject_fields = set(reject_fields)
        self.unconstrained = unconstrained
        self.timeout_delay = timeout_delay
        self.retry_after = retry_after
        self.delay = delay
        """Seconds every answer takes (to observe concurrency)."""
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------------------
    def start(self) -> ScriptedLLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    server._handle(self)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def do_GET(self) -> None:  # /v1/models, for clients that probe
                server._send(self, 200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}/v1"

    # ---- scripting ------------------------------------------------------------------------------
    def on(self, needle: str, answer: Answer) -> None:
        """Answer requests whose current message contains ``needle`` (first match wins)."""
        with self._lock:
            self._state.script.append((needle, answer))

    def inject(self, *faults: str) -> None:
        """Queue faults for the next calls, in order (one fault per call)."""
        with self._lock:
            self._state.faults.extend(faults)

    @property
    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._state.calls)

    def reset_calls(self) -> None:
        with self._lock:
            self._state.calls.clear()

    # ---- serving --------------------------------------------------------------------------------
    def _schema_of(self, body: dict[str, Any]) -> dict[str, Any] | None:
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("schema")
        if rf.get("type") == "json_object" and "response_format" in self.schema_forms and rf.get("schema"):
            return rf["schema"]
        for form in ("guided_json", "format"):
            if form in self.schema_forms and isinstance(body.get(form), dict):
                return body[form]
        return None

    def _refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        rf = body.get("response_format") or {}
        for name in sorted(self.reject_fields):
            present = "schema" in rf if name == "response_format.schema" else name in body
            if present:
                return 400, {"error": {"message": f"Unrecognized request argument supplied: {name}",
                                       "type": "invalid_request_error", "param": name}}
        kind = rf.get("type")
        if not kind or kind not in self.reject_modes:
            return None
        if self.reject_status >= 500:  # llama-cpp-python: a pydantic error wrapped as an internal server error
            msg = (f"1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be "
                   f"'text' or 'json_object' [type=literal_error, input_value='{kind}', input_type=str]")
            return self.reject_status, {"error": {"message": msg, "type": "internal_server_error", "param": None,
                                                  "code": None}}
        return self.reject_status, {"error": {"message": f"response_format type '{kind}' is not supported",
                                              "type": "invalid_request_error", "param": "response_format"}}

    def _answer_for(self, call: Call) -> str:
        answer: Answer | None = None
        if self.unconstrained is not None and call.schema is None:
            answer = self.unconstrained
        elif self.responder is not None:
            answer = self.responder
        else:
            with self._lock:
                script = list(self._state.script)
            cur = call.current
            for needle, ans in script:
                if needle in cur:
                    answer = ans
                    break
        if answer is None:
            answer = self.default
        if callable(answer):
            answer = answer(call)
        return answer if isinstance(answer, str) else json.dumps(answer)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        try:
            body = json.loads(h.rfile.read(length) or b"{}")
        except ValueError:
            self._send(h, 400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        call = Call(body=body, at=time.monotonic())
        call.prompt_tokens = approx_prompt_tokens(call.messages, call.response_format)
        with self._lock:
            self._state.calls.append(call)
            fault = self._state.faults.popleft() if self._state.faults else None
        call.fault = fault
        if not h.path.rstrip("/").endswith("/chat/completions"):
            call.status = 404
            self._send(h, 404, {"error": {"message": f"unknown path {h.path}", "type": "not_found"}})
            return
        if fault in ("429", "500", "502", "503"):
            call.status = int(fault)
            headers = {"Retry-After": str(self.retry_after)} if fault == "429" and self.retry_after is not None \
                else {}
            kind = "rate_limit_exceeded" if fault == "429" else "server_error"
            self._send(h, call.status, {"error": {"message": f"scripted {fault}", "type": kind}}, headers)
            return
        refusal = self._refusal(body)
        if refusal is not None:
            call.status = refusal[0]
            self._send(h, *refusal)
            return
        call.schema = self._schema_of(body)
        if fault == "timeout":
            self._stop.wait(self.timeout_delay)
        elif self.delay:
            self._stop.wait(self.delay)
        try:
            text = self._answer_for(call)
        except Exception as exc:  # a broken script answers 500, like a crashing server
            call.status = 500
            self._send(h, 500, {"error": {"message": f"scripted responder failed: {type(exc).__name__}",
                                          "type": "server_error"}})
            return
        finish = "stop"
        if fault == "malformed":
            text = text[: max(1, len(text) // 2)].replace("{", "{'", 1) + " <- not json"
        elif fault == "truncate":
            text, finish = text[: max(1, len(text) // 2)], "length"
        elif fault == "think":
            text = f"<think>The user wants JSON. {{draft}}</think>\nHere it is:\n```json\n{text}\n```"
        limit = call.max_tokens
        if self.simulate_max_tokens and limit and approx_tokens(text) > limit:
            text, finish = text[: limit * CHARS_PER_TOKEN], "length"
        call.finish_reason, call.answer = finish, text
        call.completion_tokens = approx_tokens(text)
        self._send(h, 200, {
            "id": f"chatcmpl-scripted-{len(self.calls)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
                      "total_tokens": call.prompt_tokens + call.completion_tokens},
        })

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)
