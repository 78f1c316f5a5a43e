"""Knowledge-graph semantics (spec 003) end to end with the real LocalExtractor: query_graph with
provenance, symmetric relationships, explain, rate limits, routing, endings without collateral."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loregraph.ingest.pipeline import RateLimits
from loregraph.search.graph import route
from loregraph.store import NotFoundError

T0 = datetime(2025, 4, 1, 9, 0, tzinfo=UTC)
CONVERSATION = [
    ("c1", "I'm working on project Nimbus, our billing service."),
    ("c1", "Nimbus is written in Go and stores its data in MySQL."),
    ("c1", "I use Terraform for the infrastructure."),
    ("c1", "I use Docker for local development."),
    ("c1", "My colleague Oskar works on Nimbus with me."),
    ("c2", "I prefer Vim over Emacs."),
    ("c2", "We switched Nimbus from MySQL to PostgreSQL."),
    ("c2", "I don't use Terraform anymore."),
]


@pytest.fixture
async def mem(open_memory):
    m = await open_memory()
    for i, (conv, text) in enumerate(CONVERSATION):
        await m.add_messages("ines", [{"content": text, "role_type": "user", "name": f"m{i + 1}",
                                       "timestamp": T0 + timedelta(days=i)}], conversation_id=conv)
    return m


def rels(answer) -> set[tuple[str, str, str]]:
    def name(e):
        return "USER" if e.attributes.get("is_speaker") else e.name
    return {(name(r.source), r.fact.type, name(r.target)) for r in answer.relationships}


async def test_query_graph_answers_relationship_questions_with_provenance(mem):
    ans = await mem.query_graph("What technologies does Nimbus use?", "ines")
    assert ans.found and ans.route == "graph"
    got = rels(ans)
    assert ("Nimbus", "USES", "Go") in got or ("Nimbus", "DEPENDS_ON", "Go") in got
    assert not any(t == "MySQL" for _, _, t in got)  # ended by the switch
    for r in ans.relationships:
        assert r.provenance and all(p.message_name.startswith("m") and p.conversation_id for p in r.provenance)


async def test_query_graph_first_person_and_filters(mem):
    ans = await mem.query_graph("What tools do I use?", "ines")
    assert ans.found and ("USER", "USES", "Docker") in rels(ans)
    assert all(r.fact.type == "USES" for r in ans.relationships)
    assert "Terraform" not in {r.target.name for r in ans.relationships}  # no longer used
    prefs = await mem.query_graph("What tools do I use or like?", "ines", relationship_type="PREFERS")
    assert prefs.relationships and all(r.fact.type == "PREFERS" for r in prefs.relationships)
    me = await mem.query_graph("What do I prefer?", "ines")
    assert ("USER", "PREFERS", "Vim") in rels(me)
    with pytest.raises(ValueError, match="relationship_type"):
        await mem.query_graph("x", "ines", relationship_type="LOVES")
    with pytest.raises(ValueError, match="entity_type"):
        await mem.query_graph("x", "ines", entity_type="planet")


async def test_symmetric_relationships_are_found_from_either_side(mem):
    ans = await mem.query_graph("Who does Oskar work with?", "ines")
    assert any(r.fact.type == "WORKS_WITH" for r in ans.relationships), rels(ans)
    mine = await mem.query_graph("Who have I mentioned working with?", "ines")
    assert any(r.fact.type == "WORKS_WITH" and "Oskar" in (r.source.name, r.target.name)
               for r in mine.relationships)


async def test_no_relevant_entities_is_an_explicit_empty_answer(mem):
    ans = await mem.query_graph("What does Quetzalcoatl depend on?", "ines")
    assert not ans.found and "No relevant" in ans.message
    other = await mem.query_graph("What technologies does Nimbus use?", "someone-else")
    assert not other.found  # never crosses groups


async def test_explain_cites_the_source_messages(mem):
    nimbus = next(e for e in await mem.list_entities("ines") if e.name == "Nimbus")
    why = await mem.explain("ines", nimbus.id)
    assert why.kind == "entity"
    assert [s.message_name for s in why.sources][:2] == ["m1", "m2"]
    assert set(why.conversation_ids) == {"c1", "c2"}
    fact = next(f for f in await mem.list_facts("ines") if f.type == "PREFERS")
    why = await mem.explain("ines", fact.id)
    assert why.kind == "fact" and [s.message_name for s in why.sources] == ["m6"]
    assert "Vim" in why.sources[0].content
    with pytest.raises(NotFoundError):
        await mem.explain("someone-else", fact.id)


async def test_entities_and_facts_record_their_conversation(mem):
    ents = {e.name: e for e in await mem.list_entities("ines")}
    assert ents["Nimbus"].conversation_id == "c1" and ents["PostgreSQL"].conversation_id == "c2"


async def test_endings_retire_only_the_named_relationship(mem):
    every = await mem.list_facts("ines", current=False)
    names = {e.id: e.name for e in await mem.list_entities("ines")}
    ended = {(names.get(f.source_id), f.type, names.get(f.target_id)) for f in every if not f.is_current()}
    current = {(names.get(f.source_id), f.type, names.get(f.target_id)) for f in every if f.is_current()}
    assert any(t == "MySQL" for _, _, t in ended) and any(t == "Terraform" for _, _, t in ended)
    assert any(t == "PostgreSQL" for _, _, t in current) and any(t == "Go" for _, _, t in current)
    for f in every:
        if not f.is_current():
            assert f.invalid_at is not None and f.expired_at is not None  # soft: kept with its interval


async def test_rate_limits_per_conversation_are_reported_not_silent(open_memory):
    m = await open_memory(limits=RateLimits(entities_per_conversation=2, relationships_per_conversation=1))
    (r1,) = await m.add_messages("lim", [{"content": "I use Docker, Ansible and Jenkins.", "role_type": "user"}],
                                 conversation_id="conv-a")
    created = [e for e in r1.entities if not e.attributes.get("is_speaker")]
    assert len(created) == 2 and r1.rate_limited.get("entities") == 1
    assert len(r1.facts) == 1 and r1.rate_limited.get("relationships", 0) >= 1
    (r2,) = await m.add_messages("lim", [{"content": "I use Docker every day.", "role_type": "user"}],
                                 conversation_id="conv-a")
    assert r2.rate_limited == {}  # reinforcing what exists is not limited
    (r3,) = await m.add_messages("lim", [{"content": "I use Kafka.", "role_type": "user"}],
                                 conversation_id="conv-b")
    assert [e.name for e in r3.entities if not e.attributes.get("is_speaker")] == ["Kafka"]


@pytest.mark.parametrize(("query", "expected"), [
    ("What tools do I use?", "graph"),
    ("Who have I mentioned working with?", "graph"),
    ("What technologies am I using for project Nimbus?", "graph"),
    ("What did we discuss about the trip?", "vector"),
    ("Tell me about the conversation with my sister", "vector"),
    ("What did we discuss about the tools I use?", "combined"),
])
def test_route(query, expected):
    assert route(query) == expected


async def test_search_can_route(mem):
    res = await mem.search("What tools do I use?", "ines", route=True)
    assert res.route == "graph" and res.facts
    assert res.facts[0].fact.type == "USES"
    res = await mem.search("What did we discuss about billing?", "ines", route=True)
    assert res.route == "vector" and res.episodes


async def test_aliases_resolve_to_one_entity_end_to_end(open_memory):
    m = await open_memory()
    for i, text in enumerate(["Our API stores everything in Postgres.", "I use PostgreSQL for analytics too.",
                              "We run it all on k8s.", "Kubernetes upgrades are painful."]):
        await m.add_messages("al", [{"content": text, "role_type": "user", "timestamp": T0 + timedelta(hours=i)}])
    names = [e.name for e in await m.list_entities("al") if not e.attributes.get("is_speaker")]
    folded = {n.casefold() for n in names}
    assert len({"postgres", "postgresql"} & folded) == 1, names
    assert len({"k8s", "kubernetes"} & folded) == 1, names


async def test_user_defined_types_from_a_schema_file_work(open_memory, tmp_path):
    import json

    from loregraph.extract.base import SPEAKER, ExtractedEntity, ExtractedRelation, Extraction
    from loregraph.schema import Schema
    from scripted import ScriptedExtractor

    doc = json.loads(Schema.default().doc.model_dump_json())
    doc["node_types"]["dataset"] = {"parent": "entity", "description": "A data set",
                                    "properties": {"rows": {"type": "integer"}}}
    doc["edge_types"]["TRAINS_ON"] = {"description": "A model trains on a data set"}
    doc["edge_rules"].append({"edge": "TRAINS_ON", "source": "entity", "target": "dataset"})
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(doc))
    script = {"trains": lambda c: Extraction(
        entities=[ExtractedEntity("d", "ClickLog", "dataset", 0.9, attributes={"rows": 1000})],
        relations=[ExtractedRelation(SPEAKER, "TRAINS_ON", "d", "The user trains on ClickLog")])}
    m = await open_memory(schema=str(path), extractor=ScriptedExtractor(script))
    (res,) = await m.add_messages("ds", [{"content": "My model trains on ClickLog", "role_type": "user"}])
    ds = next(e for e in res.entities if e.name == "ClickLog")
    assert ds.type == "dataset" and ds.attributes == {"rows": 1000}
    assert [f.type for f in res.facts] == ["TRAINS_ON"]
    ans = await m.query_graph("What does ClickLog relate to?", "ds", entity_type="dataset")
    assert ans.found


async def test_explain_an_ended_fact_names_the_message_that_ended_it(open_memory):
    """Issue 18: "how do you know it ended?" — explain names the ending message besides the creating one."""
    m = await open_memory()
    await m.add_messages("kai", [
        {"content": "Project Vega uses Redis for caching.", "role_type": "user", "name": "first",
         "timestamp": "2025-01-05T09:00:00Z"},
        {"content": "We switched Vega from Redis to Memcached.", "role_type": "user", "name": "switch",
         "timestamp": "2025-03-01T09:00:00Z"}])
    ended = [f for f in await m.list_facts("kai", current=False) if not f.is_current()]
    assert ended, "the switch ends the Redis fact"
    why = await m.explain("kai", ended[0].id)
    assert [s.message_name for s in why.sources] == ["first"]
    assert why.ended_by is not None and why.ended_by.message_name == "switch"
    current = next(f for f in await m.list_facts("kai") if "Memcached" in f.fact)
    assert (await m.explain("kai", current.id)).ended_by is None
    # history through search: the ended fact comes back only when asked for
    plain = await m.search("What does Vega use for caching?", "kai")
    hist = await m.search("What does Vega use for caching?", "kai", include_ended=True)
    assert ended[0].id not in {f.fact.id for f in plain.facts}
    assert ended[0].id in {f.fact.id for f in hist.facts}


async def test_provenance_accuracy_every_entity_and_fact_links_to_a_message_of_its_group(mem):
    """Spec 003 evaluation "Provenance Accuracy 100%": every graph element links to a valid source message."""
    episodes = {e.id: e for e in await mem.get_episodes("ines", last_n=100)}
    assert len(episodes) == len(CONVERSATION)
    entities = await mem.list_entities("ines")
    facts = await mem.list_facts("ines", current=False)
    assert len(entities) >= 8 and len(facts) >= 6
    for ent in entities:
        assert ent.source_episode_id in episodes, ent.name
        assert ent.conversation_id == episodes[ent.source_episode_id].conversation_id, ent.name
    for fact in facts:
        assert fact.episodes and set(fact.episodes) <= set(episodes), fact.fact
        assert fact.conversation_id == episodes[fact.episodes[0]].conversation_id, fact.fact
        assert fact.id in episodes[fact.episodes[0]].fact_ids, fact.fact
