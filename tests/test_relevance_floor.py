"""Issue 18 item 2: a question with nothing relevant in a populated group gets an honest empty answer (the
relevance floor), on the Python API, the real CLI, a real REST server and MCP over stdio; a related question
still answers; the floor is configurable and can be turned off."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from loregraph.config import load_settings
from loregraph.errors import ConfigError
from loregraph.memory import Memory, Message
from loregraph.search.hybrid import DEFAULT_MIN_RELEVANCE, SearchRequest
from rest_support import Server, wait_idle

SRC = Path(__file__).resolve().parents[1] / "src"
TESTS = Path(__file__).resolve().parent
# a group about cooking (written for these tests)
COOKING = [
    "I use Le Creuset pots for braising short ribs on Sundays.",
    "For the risotto I toast the arborio rice in butter before adding warm stock.",
    "My grandmother's lasagna recipe uses bechamel instead of ricotta.",
    "I bought a Japanese gyuto knife and it slices tomatoes effortlessly.",
    "Baking sourdough at high hydration makes the crumb more open.",
]
UNRELATED = "How do I configure a Kubernetes ingress controller?"
RELATED = "How do I make risotto?"
RELATED_FACTS = "What do I use for braising short ribs?"


def test_the_floor_is_calibrated_not_off():
    assert 0.2 <= DEFAULT_MIN_RELEVANCE <= 0.4  # measured: docs/relevance-floor.md


async def test_python_unrelated_question_gets_the_honest_empty_answer(db_url):
    async with await Memory.open(db_url) as m:
        await m.add_messages("cook", [Message(content=c, role_type="user", role="sam") for c in COOKING])
        off = await m.search(UNRELATED, "cook")
        assert off.below_floor and off.is_empty() and off.relevance is not None
        assert off.relevance < off.min_relevance == DEFAULT_MIN_RELEVANCE
        on = await m.search(RELATED, "cook")
        assert not on.below_floor and any("risotto" in e.episode.content for e in on.episodes)
        assert on.relevance is not None and on.relevance >= on.min_relevance
        # the floor is per request: 0 turns it off and the closest (unrelated) matches come back
        anyway = await m.search(UNRELATED, "cook", min_relevance=0)
        assert not anyway.below_floor and anyway.episodes
        # a stricter floor than the closest match empties a related search too
        strict = await m.search(RELATED, "cook", min_relevance=0.99)
        assert strict.below_floor and strict.is_empty()
        # and the searcher's configured floor applies to requests that name none
        m.searcher.min_relevance = 0.0
        assert (await m.search(UNRELATED, "cook")).episodes
        # an unknown group holds nothing: empty, but not "below the floor"
        empty = await m.search(UNRELATED, "nobody-here")
        assert empty.is_empty() and not empty.below_floor


def test_bad_floor_is_a_clear_error():
    with pytest.raises(ValidationError, match="min_relevance"):
        SearchRequest(query="x", group_ids=["g"], min_relevance=1.5)
    with pytest.raises(ConfigError, match="min_relevance"):
        load_settings(env_file=None, min_relevance=-0.1)


def _lg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "loregraph.cli", *args], capture_output=True, text=True,
                          timeout=300, check=True)


def test_cli_says_no_relevant_memory_for_an_unrelated_question(tmp_path):
    db, lines = tmp_path / "m.db", tmp_path / "cook.jsonl"
    lines.write_text("".join(json.dumps({"group_id": "cook", "role_type": "user", "role": "sam", "content": c,
                                         "timestamp": f"2025-03-0{i + 1}T10:00:00Z"}) + "\n"
                             for i, c in enumerate(COOKING)))
    _lg("ingest", str(lines), "--db", str(db))
    said = " ".join(_lg("search", UNRELATED, "-g", "cook", "--db", str(db)).stdout.split())
    assert "No relevant memory found: nothing cleared the relevance floor" in said
    assert "risotto" not in said and "Creuset" not in said
    data = json.loads(_lg("search", UNRELATED, "-g", "cook", "--db", str(db), "--json").stdout)
    assert data["below_floor"] is True and not data["facts"] and not data["episodes"] and not data["entities"]
    related = " ".join(_lg("search", RELATED, "-g", "cook", "--db", str(db)).stdout.split())
    assert "risotto" in related and "No relevant memory" not in related
    off = " ".join(_lg("search", UNRELATED, "-g", "cook", "--db", str(db), "--min-relevance", "0").stdout.split())
    assert "No relevant memory" not in off and "Messages" in off


def test_rest_search_flags_below_floor_and_still_answers_related_questions(tmp_path):
    srv = Server(tmp_path, tmp_path / "memory.db", env={"LOREGRAPH_TEST_INNER": "local"}).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=60) as c:
            r = c.post("/messages", json={"group_id": "cook", "messages": [
                {"content": t, "role_type": "user", "role": "sam"} for t in COOKING]})
            assert r.status_code == 202, r.text
            wait_idle(srv.db, "cook")
            off = c.post("/search", json={"group_ids": ["cook"], "query": UNRELATED}).json()
            assert off["facts"] == [] and off["below_floor"] is True and off["relevance"] is not None
            on = c.post("/search", json={"group_ids": ["cook"], "query": RELATED_FACTS}).json()
            assert on["below_floor"] is False and any("Creuset" in f["fact"] for f in on["facts"])
            anyway = c.post("/search", json={"group_ids": ["cook"], "query": UNRELATED, "min_relevance": 0}).json()
            assert anyway["below_floor"] is False and anyway["facts"]
            bad = c.post("/search", json={"group_ids": ["cook"], "query": UNRELATED, "min_relevance": 2})
            assert bad.status_code == 422 and "min_relevance" in bad.text
    finally:
        srv.stop()


def test_server_floor_is_configurable(tmp_path):
    srv = Server(tmp_path, tmp_path / "memory.db", env={"LOREGRAPH_TEST_INNER": "local",
                                                        "LOREGRAPH_MIN_RELEVANCE": "0"}).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=60) as c:
            c.post("/messages", json={"group_id": "cook", "messages": [
                {"content": t, "role_type": "user", "role": "sam"} for t in COOKING]})
            wait_idle(srv.db, "cook")
            off = c.post("/search", json={"group_ids": ["cook"], "query": UNRELATED}).json()
            assert off["below_floor"] is False and off["facts"]  # the operator turned the floor off
    finally:
        srv.stop()


async def test_mcp_search_memory_says_nothing_cleared_the_floor(tmp_path):
    import os

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if not k.startswith("LOREGRAPH_") or k == "LOREGRAPH_CACHE_DIR"}
    env.update({"PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)]), "HF_HUB_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false"})
    params = StdioServerParameters(command=sys.executable, cwd=tmp_path, env=env,
                                   args=["-m", "loregraph.cli", "mcp", "--db", f"sqlite:///{tmp_path / 'm.db'}"])
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            added = await client.call_tool("add_messages", {"group_id": "cook", "messages": [
                {"content": t, "role_type": "user", "role": "sam"} for t in COOKING]})
            assert not added.is_error, added.content[0].text
            off = (await client.call_tool("search_memory", {"group_id": "cook", "query": UNRELATED})).structured_content
            assert off["below_floor"] is True and off["found"] is False
            assert "nothing cleared the relevance floor" in off["message"]
            assert off["facts"] == off["entities"] == off["episodes"] == []
            on = (await client.call_tool("search_memory", {"group_id": "cook", "query": RELATED})).structured_content
            assert on["found"] is True and any("risotto" in e["content"] for e in on["episodes"])
