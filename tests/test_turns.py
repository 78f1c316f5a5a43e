"""Turn-based indexing (spec 004): turns from role transitions, processed when the next user message arrives, on
flush and on close; the programmatic noise filter; one extraction call per turn with the session template."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loregraph.bench.scripted_llm import ScriptedLLMServer
from loregraph.extract.llm import LLMExtractor
from loregraph.extract.noise import filter_noise
from loregraph.models.llm import LLMClient, LLMConfig, LLMGovernor
from loregraph.sessions import TurnDetector, TurnIndexer, TurnMessage, split_turns

T0 = datetime(2025, 5, 2, 14, 0, tzinfo=UTC)

TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/main.py", line 42, in <module>
    serve(config)
  File "/srv/app/server.py", line 17, in serve
    bind(port)
  File "/srv/app/net.py", line 8, in bind
    raise OSError("address already in use")
OSError: [Errno 98] address already in use"""

JS_TRACE = """TypeError: Cannot read properties of undefined (reading 'map')
    at render (/app/src/List.js:12:20)
    at renderWithHooks (/app/node_modules/react-dom/cjs/react-dom.development.js:14985:18)
    at mountIndeterminateComponent (/app/node_modules/react-dom/cjs/react-dom.development.js:17811:13)"""

BIG_CODE = '''```python
"""Token bucket used by the billing client."""
import time


class Bucket:
    def __init__(self, rate):
        self.rate = rate
        self.level = rate

    def take(self, n=1):
        self.level -= n
        return self.level >= 0


def refill(bucket, seconds):
    bucket.level = min(bucket.rate, bucket.level + seconds * bucket.rate)
    return bucket
```'''


def m(role: str, content: str, i: int, **kw) -> dict:
    return {"role": role, "content": content, "timestamp": T0 + timedelta(seconds=i), **kw}


SESSION = [
    m("system", "You are a coding assistant.", 0),
    m("user", "The server won't start, can you look?", 1, name="dana"),
    m("assistant", "Checking the logs.", 2),
    m("tool", "\n".join(f"log line {i}: worker heartbeat ok" for i in range(30)) + "\n" + TRACEBACK, 3, name="shell"),
    m("assistant", "Port 8080 is taken by an old process; I killed it and restarted uvicorn.", 4),
    m("user", "Thanks. Also switch the tests to pytest-xdist.", 5, name="dana"),
    m("user", "And keep coverage above 90%.", 6, name="dana"),
    m("assistant", "Done: added pytest-xdist to pyproject.toml.", 7),
    m("user", "Great, now write the README section.", 8, name="dana"),
]


# ---- turn detection -------------------------------------------------------------------------------
def test_split_turns_on_role_transitions():
    turns = split_turns(SESSION)
    assert [[x.role_type for x in t.messages] for t in turns] == [
        ["system", "user", "assistant", "tool", "assistant"],
        ["user", "user", "assistant"],  # consecutive user messages stay in one turn
        ["user"],                       # unanswered: only complete on flush
    ]
    assert [t.index for t in turns] == [0, 1, 2]
    assert [t.complete for t in turns] == [True, True, False]
    assert turns[0].user_name == "dana" and turns[1].started_at == T0 + timedelta(seconds=5)
    # an assistant greeting before any user message opens a turn of its own
    lead = split_turns([m("assistant", "Hi! How can I help?", 0), m("user", "Hello", 1)])
    assert [[x.role_type for x in t.messages] for t in lead] == [["assistant"], ["user"]]


def test_detector_reports_a_turn_only_when_the_next_user_message_arrives():
    det = TurnDetector()
    assert det.push(TurnMessage.of(SESSION[1])) is None
    assert det.push(TurnMessage.of(SESSION[2])) is None
    assert det.push(TurnMessage.of(SESSION[4])) is None  # more replies: still the same turn
    done = det.push(TurnMessage.of(SESSION[5]))
    assert done is not None and [x.role_type for x in done.messages] == ["user", "assistant", "assistant"]
    assert det.pending is not None and det.pending.messages[0].content.startswith("Thanks")
    assert det.take().index == 1 and det.take() is None


def test_message_validation():
    with pytest.raises(ValueError, match="role"):
        TurnMessage.of({"role": "robot", "content": "x"})
    with pytest.raises(ValueError, match="content"):
        TurnMessage.of({"role": "user"})
    msg = TurnMessage.of({"role": "alice", "role_type": "user", "content": "hi", "timestamp": "2025-01-01T00:00:00Z"})
    assert (msg.role_type, msg.role, msg.timestamp.tzinfo is not None) == ("user", "alice", True)


# ---- noise filter ---------------------------------------------------------------------------------
def test_stack_traces_become_error_type_and_message():
    out = filter_noise(f"It crashed:\n{TRACEBACK}\nand the UI said\n{JS_TRACE}\nafter that.")
    assert "[stack trace] OSError: [Errno 98] address already in use" in out.text
    assert "TypeError: Cannot read properties of undefined (reading 'map')" in out.text
    assert "File \"" not in out.text and " at render" not in out.text
    assert out.text.startswith("It crashed:") and out.text.endswith("after that.")
    assert out.stats["stack_traces"] == 2 and out.stats["stack_lines_dropped"] == 6 + 3


def test_large_code_blocks_become_purpose_and_names():
    out = filter_noise(f"Here is the limiter:\n{BIG_CODE}\nand a tiny one:\n```js\nconst x = 1;\n```")
    assert "[code block: python, 17 lines; purpose: Token bucket used by the billing client.; " \
           "defines: Bucket, __init__, take, refill]" in out.text
    assert "self.level -= n" not in out.text
    assert "```js\nconst x = 1;\n```" in out.text  # small blocks stay verbatim
    assert out.stats["code_blocks_summarized"] == 1


def test_verbose_tool_output_becomes_its_outcome():
    lines = ["$ pytest -q"] + [f"collected module_{chr(97 + i % 26)}{i % 7}" for i in range(40)] + \
        ["FAILED tests/test_api.py::test_login - AssertionError", "41 passed, 1 failed in 3.20s"]
    out = filter_noise("\n".join(lines), tool_output=True)
    kept = out.text.splitlines()
    assert kept[0] == "$ pytest -q"
    assert "FAILED tests/test_api.py::test_login - AssertionError" in kept
    assert kept[-1] == "41 passed, 1 failed in 3.20s"
    assert any(k.startswith("[tool output: ") for k in kept) and len(kept) <= 6
    # short tool output is left alone
    assert filter_noise("$ ls\nREADME.md", tool_output=True).text == "$ ls\nREADME.md"


def test_repeated_status_lines_are_dropped():
    text = "Downloading model\n" + "\n".join(f"progress {p}% ({p * 3} MB)" for p in range(0, 101, 10)) + \
        "\nwaiting...\nwaiting...\nwaiting...\nready"
    out = filter_noise(text)
    assert out.text.splitlines() == ["Downloading model", "progress 100% (300 MB)", "waiting...", "ready"]
    assert out.stats["status_lines_dropped"] == 12


def test_clean_text_is_untouched():
    text = "I moved the billing service to Kubernetes last week.\n\nIt uses PostgreSQL 16."
    out = filter_noise(text)
    assert out.text == text and out.stats == {}


# ---- indexing -----------------------------------------------------------------------------------------
@pytest.fixture
def server():
    with ScriptedLLMServer() as s:
        s.on("server won't start", {
            "entities": [{"ref": "u", "name": "uvicorn", "type": "tool"}],
            "relations": [{"source": "SPEAKER", "type": "USES", "target": "u", "fact": "dana runs uvicorn"}],
            "ended": []})
        s.on("pytest-xdist", {
            "entities": [{"ref": "x", "name": "pytest-xdist", "type": "tool"}],
            "relations": [{"source": "SPEAKER", "type": "USES", "target": "x", "fact": "dana uses pytest-xdist"}],
            "ended": []})
        yield s


def llm_extractor(server: ScriptedLLMServer) -> LLMExtractor:
    return LLMExtractor(LLMClient(LLMConfig(model="scripted", base_url=server.base_url), governor=LLMGovernor()))


async def test_turns_indexed_one_call_each_with_filtered_text(server, open_memory):
    mem = await open_memory(extractor=llm_extractor(server))
    turns = TurnIndexer(mem, "dana", conversation_id="s1")
    produced = []
    for i, message in enumerate(SESSION):
        out = await turns.add(message)
        produced.append(len(out))
        # turn 0 is processed when message 5 (the next user message) arrives, turn 1 at message 8
        assert len(server.calls) == (0 if i < 5 else 1 if i < 8 else 2)
    assert produced == [0, 0, 0, 0, 0, 1, 0, 0, 1]
    first = server.calls[0]
    assert "[stack trace] OSError: [Errno 98] address already in use" in first.current
    assert first.current.count("log line") == 1 and "File \"/srv" not in first.current  # latest status only
    assert "assistant: Port 8080 is taken" in first.current and "tool (shell):" in first.current
    assert "Session turn guidance" in first.prompt  # the built-in template, per turn
    assert "Message from dana:" in first.prompt
    assert "user: Thanks. Also switch the tests to pytest-xdist.\n\nuser: And keep coverage" in server.calls[1].current
    # the last turn waits for flush
    assert turns.pending is not None
    (last,) = await turns.flush()
    assert len(server.calls) == 3 and last.extraction_notes["turn"] == {"index": 2, "messages": 1, "complete": False}
    assert await turns.flush() == []
    facts = {f.fact for f in await mem.list_facts("dana")}
    assert facts == {"dana runs uvicorn", "dana uses pytest-xdist"}
    episodes = await mem.get_episodes("dana", last_n=10)
    assert len(episodes) == 3 and all(e.conversation_id == "s1" for e in episodes)
    assert {e.name for e in episodes} == {"turn-0", "turn-1", "turn-2"}
    speaker = next(e for e in await mem.list_entities("dana") if e.attributes.get("is_speaker"))
    assert speaker.name == "dana"


async def test_pending_turn_processed_when_the_memory_closes(server, open_memory):
    mem = await open_memory(extractor=llm_extractor(server))
    turns = TurnIndexer(mem, "dana")
    await turns.add_many(SESSION[1:5])
    assert server.calls == []
    await mem.close()
    assert len(server.calls) == 1 and "server won't start" in server.calls[0].current


async def test_context_manager_closes_and_filter_stats_are_reported(server, open_memory):
    mem = await open_memory(extractor=llm_extractor(server))
    async with TurnIndexer(mem, "dana", preprocessing_prompt=None) as turns:
        await turns.add_many(SESSION[:5])
    assert len(server.calls) == 1 and "Session turn guidance" not in server.calls[0].prompt
    with pytest.raises(RuntimeError):
        await turns.add(SESSION[5])
    await mem.close()  # the closed indexer is no longer hooked
    assert len(server.calls) == 1


async def test_turns_with_the_local_extractor_record_the_template(open_memory):
    mem = await open_memory()
    async with TurnIndexer(mem, "dana") as turns:
        (res,) = await turns.add_many(SESSION[:6])
        (second,) = await turns.flush()
    assert res.extraction_notes["preprocessing"] == {"requested": "default-session-turn.md", "applied": False}
    assert "noise_filtered" not in second.extraction_notes
    assert res.extraction_notes["noise_filtered"] == {"status_lines_dropped": 29, "stack_traces": 1,
                                                      "stack_lines_dropped": 6}
    assert turns.turns_processed == 2
