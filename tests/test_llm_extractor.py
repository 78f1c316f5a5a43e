"""LLMExtractor through the full pipeline: real SQLite, real local embeddings, the real ``openai`` SDK against the
scripted OpenAI-compatible server. One call per message, model output checked like client input, degrade on
persistent failure, bounded prompts, token usage in the result, preprocessing per Memory and per episode."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from loregraph.assembly.components import default_extractor
from loregraph.bench.scripted_llm import Call, ScriptedLLMServer
from loregraph.extract.llm import LLMExtractor
from loregraph.extract.prompts import DEFAULT_TEMPLATE, ExtractionConfig
from loregraph.models.llm import ENDPOINTS, METRICS, LLMClient, LLMConfig, LLMGovernor

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def fresh_endpoints(monkeypatch):
    monkeypatch.delenv("LOREGRAPH_LLM_STRUCTURED_OUTPUT", raising=False)
    ENDPOINTS.forget()
    yield
    ENDPOINTS.forget()


@pytest.fixture
def server():
    with ScriptedLLMServer(timeout_delay=2.0) as s:
        yield s


def make_extractor(server: ScriptedLLMServer, config: ExtractionConfig | None = None, **cfg) -> LLMExtractor:
    cfg.setdefault("retry_backoff", 0.02)
    cfg.setdefault("timeout", 5.0)
    client = LLMClient(LLMConfig(model="scripted", base_url=server.base_url, **cfg), governor=LLMGovernor())
    return LLMExtractor(client, config)


def msg(content: str, i: int = 0, role: str = "alice") -> dict:
    return {"content": content, "role_type": "user", "role": role, "timestamp": T0 + timedelta(minutes=i)}


def handle(call: Call, name: str) -> str:
    m = re.search(rf"^(E\d+) {re.escape(name)} \(", call.prompt, re.M)
    assert m, f"{name} not offered"
    return m.group(1)


def fact_handle(call: Call, needle: str) -> str:
    m = re.search(rf"^(F\d+) .*{re.escape(needle)}", call.prompt, re.M)
    assert m, f"no offered fact with {needle}"
    return m.group(1)


FASTAPI = {"entities": [{"ref": "n1", "name": "FastAPI", "type": "tool"},
                        {"ref": "n2", "name": "Orion", "type": "project"}],
           "relations": [{"source": "SPEAKER", "type": "USES", "target": "n1", "fact": "Alice uses FastAPI"},
                         {"source": "SPEAKER", "type": "WORKS_ON", "target": "n2", "fact": "Alice works on Orion"}],
           "ended": []}


async def test_one_call_per_message_and_usage_in_result(server, open_memory):
    server.on("FastAPI for project Orion", FASTAPI)
    server.on("Nora", {"entities": [{"ref": "s", "name": "Nora", "type": "person"}],
                        "relations": [{"source": "SPEAKER", "type": "WORKS_WITH", "target": "s",
                                       "fact": "Alice works with Nora"}], "ended": []})
    m = await open_memory(extractor=make_extractor(server))
    before = METRICS.snapshot()
    results = await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.", 0),
                                             msg("Nice weather today.", 1), msg("I pair with Nora daily.", 2)])
    assert len(server.calls) == 3  # one call per message, none for anything else
    first = results[0]
    assert {e.name for e in first.entities} == {"FastAPI", "Orion", "alice"}
    assert {f.fact for f in first.facts} == {"Alice uses FastAPI", "Alice works on Orion"}
    for res, call in zip(results, server.calls, strict=True):
        assert res.usage["calls"] == 1 and res.usage["prompt_tokens"] == call.prompt_tokens > 0
        assert res.usage["completion_tokens"] == call.completion_tokens
        assert res.extraction_notes["extractor"] == "llm" and res.extraction_notes["mode"] == "json_schema"
    after = METRICS.snapshot()
    assert after["calls"] - before["calls"] == 3
    assert after["prompt_tokens"] - before["prompt_tokens"] == sum(c.prompt_tokens for c in server.calls)
    # the prompt speaks of the message, and who wrote it
    assert "<message>\nI pair with Nora daily.\n</message>" in server.calls[2].prompt
    assert "Message from alice (user)" in server.calls[2].prompt


async def test_offered_candidates_by_handle_and_ids_checked(server, open_memory):
    server.on("FastAPI for project Orion", FASTAPI)

    def second(call: Call) -> dict:
        e = handle(call, "FastAPI")
        return {"entities": [{"ref": "a", "name": "fastapi framework", "type": "tool", "existing": e},
                             {"ref": "b", "name": "Pydantic", "type": "tool", "existing": "E42"}],
                "relations": [{"source": e, "type": "DEPENDS_ON", "target": "b", "fact": "FastAPI depends on Pydantic"},
                              {"source": "SPEAKER", "type": "USES", "target": "ghost", "fact": "x"}],
                "ended": [{"fact": "F77"}]}

    server.on("built on Pydantic", second)
    m = await open_memory(extractor=make_extractor(server))
    (r1,) = await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.", 0)])
    fastapi = next(e for e in r1.entities if e.name == "FastAPI")
    (r2,) = await m.add_messages("alice", [msg("FastAPI is built on Pydantic.", 1)])
    prompt = server.calls[1].prompt
    assert fastapi.id not in prompt  # ids never reach the model; handles do
    # the speaker is offered as a known entity (E..) when the hybrid candidate search finds it
    assert re.search(r"^F\d+ (alice|E\d+) USES E\d+: Alice uses FastAPI$", prompt, re.M)
    # the offered handle resolved to the stored entity; the alias was learned
    again = next(e for e in r2.entities if e.id == fastapi.id)
    assert "fastapi framework" in again.aliases
    assert {f.fact for f in r2.facts} == {"FastAPI depends on Pydantic"}
    # made-up ids are rejected and counted by the pipeline; the unknown ref is skipped
    assert r2.counts["rejected_ids"] == 2  # E42 and F77
    assert r2.counts["skipped"] >= 1
    assert r2.extraction_notes["unknown_refs"] == 1
    assert len(await m.list_entities("alice")) == 4  # alice, FastAPI, Orion, Pydantic


async def test_unknown_types_rejected_and_malformed_items_dropped(server, open_memory):
    server.on("spaceship", {
        "entities": [{"ref": "x", "name": "Rocinante", "type": "spaceship"}, {"ref": "y", "type": "tool"},
                     {"ref": "z", "name": "Tycho", "type": "ORGANIZATION"}],
        "relations": [{"source": "SPEAKER", "type": "LOVES", "target": "x", "fact": "loves it"},
                      {"source": "SPEAKER", "type": "works_with", "target": "z", "fact": "works with Tycho"},
                      {"source": "SPEAKER", "fact": "no type or target"}],
        "ended": [{"reason": "nothing named"}]})
    m = await open_memory(extractor=make_extractor(server))
    (r,) = await m.add_messages("alice", [msg("My spaceship Rocinante docks at Tycho.")])
    types = {e.name: e.type for e in r.entities}
    assert types["Rocinante"] == "entity" and types["Tycho"] == "organization"
    assert r.counts["rejected_types"] == 2  # spaceship (kept as generic entity) and LOVES (dropped)
    assert [f.type for f in r.facts] == ["WORKS_WITH"]
    assert r.extraction_notes["dropped_items"] == 3  # nameless entity, relation without type, empty ending


async def test_ending_an_offered_fact(server, open_memory):
    server.on("FastAPI for project Orion", FASTAPI)

    def switch(call: Call) -> dict:
        return {"entities": [{"ref": "d", "name": "Django", "type": "tool"}],
                "relations": [{"source": "SPEAKER", "type": "USES", "target": "d", "fact": "Alice uses Django"}],
                "ended": [{"fact": fact_handle(call, "Alice uses FastAPI"), "reason": "switched"}]}

    server.on("switched", switch)
    m = await open_memory(extractor=make_extractor(server))
    await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.", 0)])
    (r,) = await m.add_messages("alice", [msg("I switched from FastAPI to Django.", 5)])
    assert [f.fact for f in r.invalidated] == ["Alice uses FastAPI"]
    assert r.invalidated[0].invalid_at == T0 + timedelta(minutes=5)
    current = {f.fact for f in await m.list_facts("alice")}
    assert "Alice uses Django" in current and "Alice uses FastAPI" not in current


@pytest.mark.parametrize("faults,kind", [(("429", "429"), "rate_limited"), (("malformed", "malformed"), "invalid_json"),
                                         (("503", "timeout"), "timeout")])
async def test_persistent_failure_degrades_and_episode_is_stored(server, open_memory, faults, kind):
    server.on("FastAPI for project Orion", FASTAPI)
    m = await open_memory(extractor=make_extractor(server, timeout=0.5))
    degraded = METRICS.snapshot()["degraded"]
    server.inject(*faults)
    (r,) = await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.", 0)])
    assert len(server.calls) == 2  # retried once, then gave up
    assert r.extraction_notes["degraded"] == kind
    assert r.entities == [] and r.facts == []  # no LLM entities...
    stored = await m.get_episodes("alice", ids=[r.episode.id])
    assert stored and "FastAPI" in stored[0].content  # ...but the episode is kept
    assert r.usage["calls"] == 2 and r.usage["retries"] == 1
    assert METRICS.snapshot()["degraded"] == degraded + 1
    # the next message goes through normally
    (r2,) = await m.add_messages("alice", [msg("Still using FastAPI for project Orion.", 1)])
    assert "degraded" not in r2.extraction_notes and {e.name for e in r2.entities} >= {"FastAPI", "Orion"}


async def test_truncation_recovered_in_the_pipeline(server, open_memory):
    server.on("FastAPI for project Orion", FASTAPI)
    m = await open_memory(extractor=make_extractor(server, max_tokens=20, max_tokens_ceiling=400))
    (r,) = await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.")])
    assert {f.fact for f in r.facts} == {"Alice uses FastAPI", "Alice works on Orion"}
    assert r.usage["truncations"] >= 2 and [c.max_tokens for c in server.calls][:2] == [20, 40]


async def test_prompt_size_does_not_grow_with_the_graph(server, open_memory):
    """Every message names the hub and three new tools: the graph grows, the prompt stays bounded."""

    def grow(call: Call) -> dict:
        names = re.findall(r"\b(tool\w+)", call.current)
        ents = [{"ref": "p", "name": "Atlas", "type": "project"}] + \
            [{"ref": f"t{i}", "name": n, "type": "tool"} for i, n in enumerate(names)]
        rels = [{"source": "p", "type": "USES", "target": f"t{i}", "fact": f"Atlas uses {n}"}
                for i, n in enumerate(names)]
        return {"entities": ents, "relations": rels, "ended": []}

    server.on("Atlas", grow)
    m = await open_memory(extractor=make_extractor(server))
    sizes = []
    for i in range(30):
        text = f"Atlas now also uses tool{i}a, tool{i}b and tool{i}c together with Atlas core."
        await m.add_messages("alice", [msg(text, i)])
        call = server.calls[-1]
        sizes.append(call.prompt_tokens)
        assert len(re.findall(r"^E\d+ ", call.prompt, re.M)) <= 10
        assert len(re.findall(r"^F\d+ ", call.prompt, re.M)) <= 20
        assert call.prompt.count("\n- user:") <= 3
    assert len(await m.list_entities("alice")) > 80 and len(await m.list_facts("alice")) >= 90
    assert max(sizes) <= 1.15 * max(sizes[:12])  # saturates once the caps are reached
    assert max(sizes) < 1400


async def test_preprocessing_per_memory_and_per_episode(server, open_memory):
    server.on("deploy", {"entities": [], "relations": [], "ended": []})
    cfg = ExtractionConfig(preprocessing_prompt="Focus on deployment facts.", custom_instructions="Be terse.")
    m = await open_memory(extractor=make_extractor(server, cfg))
    (r1,) = await m.add_messages("alice", [msg("We deploy on Fridays.", 0)])
    assert "Instructions:\nFocus on deployment facts.\n\nBe terse." in server.calls[-1].prompt
    assert r1.extraction_notes["preprocessing"] == {"requested": "inline", "applied": True, "source": "inline",
                                                    "override": False}
    # per-episode override: the built-in template instead of the configured text
    (r2,) = await m.add_messages("alice", [msg("We deploy on Mondays now.", 1)], preprocessing_prompt=DEFAULT_TEMPLATE)
    p = server.calls[-1].prompt
    assert "Session turn guidance" in p and "Focus on deployment facts." not in p and "Be terse." in p
    assert r2.extraction_notes["preprocessing"]["source"] == f"builtin:{DEFAULT_TEMPLATE}"
    # per-episode off
    (r3,) = await m.add_messages("alice", [msg("We deploy daily.", 2)], preprocessing_prompt=False)
    assert "Focus on deployment" not in server.calls[-1].prompt and "Be terse." in server.calls[-1].prompt
    assert r3.extraction_notes["preprocessing"]["applied"] is False
    # append mode puts the preprocessing text after the other instructions
    m2 = await open_memory("m2.db", extractor=make_extractor(server, ExtractionConfig(
        preprocessing_prompt="Focus on deployment facts.", custom_instructions="Be terse.",
        preprocessing_mode="append")))
    await m2.add_messages("alice", [msg("We deploy weekly.", 3)])
    assert "Instructions:\nBe terse.\n\nFocus on deployment facts." in server.calls[-1].prompt


async def test_local_extractor_records_the_preprocessing_request(open_memory):
    m = await open_memory()  # no LLM configured: LocalExtractor
    (r,) = await m.add_messages("alice", [msg("I use FastAPI.")], preprocessing_prompt=DEFAULT_TEMPLATE)
    assert r.extraction_notes["preprocessing"] == {"requested": DEFAULT_TEMPLATE, "applied": False}
    assert r.usage == {}


def test_default_extractor_follows_configuration(monkeypatch):
    monkeypatch.delenv("LOREGRAPH_LLM_MODEL", raising=False)
    assert default_extractor().name == "local"
    monkeypatch.setenv("LOREGRAPH_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("LOREGRAPH_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    ex = default_extractor()
    assert isinstance(ex, LLMExtractor) and ex.llm.config.model == "qwen2.5:7b"
    assert ex.llm.config.base_url == "http://127.0.0.1:9/v1"


async def test_server_refusing_json_schema_with_500_gets_json_mode_with_the_schema(server, open_memory):
    """llama-cpp-python's behaviour: json_schema refused with a 500 naming response_format; JSON mode honours
    response_format.schema. A small model without the schema would answer free text (``unconstrained``)."""
    server.reject_modes, server.reject_status, server.schema_forms = {"json_schema"}, 500, {"response_format"}
    server.unconstrained = "FastAPI is a tool and Orion is a project."
    server.on("FastAPI for project Orion", FASTAPI)
    m = await open_memory(extractor=make_extractor(server, retry_backoff=5.0))
    results = await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.", 0),
                                             msg("Nice weather today.", 1), msg("Still on FastAPI.", 2)])
    assert [c.status for c in server.calls] == [500, 200, 200, 200]  # one refusal, then one call per message
    assert [r.usage["calls"] for r in results] == [2, 1, 1] and all(r.usage["retries"] == 0 for r in results)
    assert all("degraded" not in r.extraction_notes and r.extraction_notes["mode"] == "json_object"
               for r in results)
    assert {f.fact for f in results[0].facts} == {"Alice uses FastAPI", "Alice works on Orion"}
    schema = server.calls[1].schema
    assert schema is not None and server.calls[1].body["response_format"]["type"] == "json_object"
    ent = schema["properties"]["entities"]
    assert ent["items"]["properties"]["type"] == {"$ref": "#/$defs/e"} and ent["maxItems"] > 0
    assert {"person", "tool", "project"} <= set(schema["$defs"]["e"]["enum"])
    assert schema["properties"]["relations"]["items"]["properties"]["type"] == {"$ref": "#/$defs/r"}
    assert "USES" in schema["$defs"]["r"]["enum"]
    # nothing offered yet: no "existing" and no endings can be given; later, only the offered handles
    assert "existing" not in ent["items"]["properties"] and schema["properties"]["ended"]["maxItems"] == 0
    later = server.calls[3]
    offered = re.findall(r"^(E\d+) ", later.prompt, re.M)
    assert offered and later.schema["properties"]["entities"]["items"]["properties"]["existing"] == {"enum": offered}
    facts = re.findall(r"^(F\d+) ", later.prompt, re.M)
    assert facts and later.schema["properties"]["ended"]["items"]["properties"]["fact"] == {"enum": facts}


async def test_json_mode_without_schema_support_degrades_cleanly(server, open_memory):
    """The same model behind a server that honours no schema form: free text, invalid after one retry, the episode
    is stored without LLM entities."""
    server.reject_modes, server.unconstrained = {"json_schema"}, "FastAPI is a tool and Orion is a project."
    server.on("FastAPI for project Orion", FASTAPI)
    m = await open_memory(extractor=make_extractor(server))
    (r,) = await m.add_messages("alice", [msg("I'm using FastAPI for project Orion.", 0)])
    assert r.extraction_notes["degraded"] == "invalid_json" and r.entities == []
    assert [c.status for c in server.calls] == [400, 200, 200]
