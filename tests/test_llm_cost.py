"""``loregraph bench llm-cost`` on a few dev messages (skips where ../shared is absent): the last line's format, one
call per message, and — when graphiti-core is installed — the comparison in the same run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from loregraph.bench.llm_cost import _minimal, graphiti_answer, graphiti_available, loregraph_answer, run_llm_cost_bench

DEV = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "extraction" / "dev.jsonl"
ROW = {"user_id": "alice", "content": "I'm using FastAPI for project Orion.",
       "entities": [{"name": "FastAPI", "type": "tool"}, {"name": "Orion", "type": "project", "aliases": ["P"]}],
       "relations": [{"source": "USER", "type": "USES", "target": "FastAPI"},
                     {"source": "Orion", "type": ["USES", "DEPENDS_ON"], "target": "FastAPI"}]}


def test_gold_answers_are_minimal_and_equivalent():
    ours = loregraph_answer(ROW)
    assert ours["entities"] == [{"ref": "n1", "name": "FastAPI", "type": "tool"},
                                {"ref": "n2", "name": "Orion", "type": "project", "aliases": ["P"]}]
    assert [(r["source"], r["type"], r["target"]) for r in ours["relations"]] == \
        [("SPEAKER", "USES", "n1"), ("n2", "USES", "n1")]
    nodes = graphiti_answer("extract_nodes.extract_message", None, ROW)
    assert [e["name"] for e in nodes["extracted_entities"]] == ["alice", "FastAPI", "Orion"]
    edges = graphiti_answer("extract_edges.edge", None, ROW)["edges"]
    assert [(e["source_entity_name"], e["relation_type"], e["target_entity_name"]) for e in edges] == \
        [("alice", "USES", "FastAPI"), ("Orion", "USES", "FastAPI")]
    schema = {"type": "object", "required": ["a", "b", "c"], "properties": {
        "a": {"type": "array"}, "b": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "c": {"$ref": "#/$defs/C"}},
        "$defs": {"C": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}}}
    assert _minimal(schema) == {"a": [], "b": None, "c": {"n": -1}}


async def test_skips_cleanly_without_data(tmp_path, capsys):
    await run_llm_cost_bench(data=tmp_path / "missing.jsonl", graphiti_python=None, console=Console(stderr=True))
    out = capsys.readouterr()
    assert "skipped" in out.err and out.out.strip() == "llm-cost skipped: dev.jsonl not found"


@pytest.mark.skipif(not DEV.exists(), reason="../shared/bench/extraction/dev.jsonl is absent")
async def test_bench_last_line(capsys):
    await run_llm_cost_bench(data=DEV, graphiti_python=None, console=Console(stderr=True), limit=6)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    m = re.fullmatch(r"llm calls_per_message=([\d.]+) prompt_tokens_per_message=(\d+) "
                     r"graphiti_calls_per_message=(\S+) graphiti_prompt_tokens_per_message=(\S+)", last)
    assert m, last
    assert float(m.group(1)) <= 1.1 and int(m.group(2)) > 0
    if graphiti_available():
        assert float(m.group(3)) > float(m.group(1))
        assert int(m.group(2)) * 3 <= int(m.group(4))
    else:
        assert m.group(3) == "n/a"
