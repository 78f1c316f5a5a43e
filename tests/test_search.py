"""Search behaviour: current facts by default, as_of, filters, fusion, MMR, center node, group scoping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from loregraph.extract.base import SPEAKER, ExtractedEnding, ExtractedEntity, ExtractedRelation, Extraction
from loregraph.search.hybrid import mmr, rrf
from scripted import ScriptedExtractor

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def rel(src_name, src_type, rtype, dst_name, dst_type, text, end=None):
    def answer(ctx):
        ents = [ExtractedEntity("t", dst_name, dst_type)]
        src = SPEAKER
        if src_name != "USER":
            ents.append(ExtractedEntity("s", src_name, src_type))
            src = "s"
        ex = Extraction(entities=ents, relations=[ExtractedRelation(src, rtype, "t", text)])
        if end:
            ents.append(ExtractedEntity("old", end, dst_type))
            ex.endings.append(ExtractedEnding(source=src, type=rtype, target="old"))
        return ex
    return answer


SCRIPT = {
    "Orion stores data in MySQL": rel("Orion", "project", "USES", "MySQL", "tool", "Orion stores its data in MySQL"),
    "Orion moved to PostgreSQL": rel("Orion", "project", "USES", "PostgreSQL", "tool",
                                     "Orion stores its data in PostgreSQL", end="MySQL"),
    "I work on Orion": rel("USER", "person", "WORKS_ON", "Orion", "project", "The user works on Orion"),
    "Ravi knows Elena": rel("Ravi", "person", "KNOWS", "Elena", "person", "Ravi knows Elena from school"),
}


@pytest.fixture
async def mem(open_memory):
    m = await open_memory(extractor=ScriptedExtractor(SCRIPT))
    for i, text in enumerate(["Orion stores data in MySQL", "I work on Orion", "Ravi knows Elena"]):
        await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0 + timedelta(days=i)}])
    await m.add_messages("g1", [{"content": "Orion moved to PostgreSQL", "role_type": "user",
                                 "timestamp": T0 + timedelta(days=60)}])
    await m.add_messages("g2", [{"content": "Orion stores data in MySQL", "role_type": "user",
                                 "timestamp": T0}])
    return m


async def test_current_facts_by_default_and_as_of_for_the_past(mem):
    now = await mem.search("Where does Orion store its data?", "g1")
    texts = [f.fact.fact for f in now.facts]
    assert "Orion stores its data in PostgreSQL" in texts and "Orion stores its data in MySQL" not in texts
    then = await mem.search("Where does Orion store its data?", "g1", as_of=T0 + timedelta(days=30))
    texts = [f.fact.fact for f in then.facts]
    assert "Orion stores its data in MySQL" in texts and "Orion stores its data in PostgreSQL" not in texts
    before = await mem.search("Where does Orion store its data?", "g1", as_of=T0 - timedelta(days=1))
    assert before.facts == [] and before.episodes == []


async def test_results_carry_names_and_scores_in_order(mem):
    res = await mem.search("PostgreSQL", "g1")
    top = res.facts[0]
    assert top.fact.fact == "Orion stores its data in PostgreSQL"
    assert (top.source_name, top.target_name) == ("Orion", "PostgreSQL")
    assert [f.score for f in res.facts] == sorted((f.score for f in res.facts), reverse=True)
    assert res.entities[0].entity.name == "PostgreSQL"
    assert any("PostgreSQL" in e.episode.content for e in res.episodes)


async def test_filters_relation_and_entity_types_and_time_ranges(mem):
    res = await mem.search("Orion", "g1", filters={"relation_types": ["WORKS_ON"]})
    assert [f.fact.type for f in res.facts] == ["WORKS_ON"]
    res = await mem.search("who knows whom", "g1", filters={"entity_types": ["person"]})
    assert all(e.entity.type == "person" for e in res.entities) and res.entities
    assert {f.fact.fact for f in res.facts} >= {"Ravi knows Elena from school"}
    res = await mem.search("Orion", "g1", filters={"valid_after": T0 + timedelta(days=30)})
    assert [f.fact.fact for f in res.facts] == ["Orion stores its data in PostgreSQL"]
    assert all(e.episode.valid_at >= T0 + timedelta(days=30) for e in res.episodes)


async def test_an_entity_type_filter_keeps_facts_with_either_end_of_that_type(mem):
    # one end a project, the other a person or a tool: both kept; a fact between two people is not
    res = await mem.search("Orion data work Ravi Elena", "g1", filters={"entity_types": ["project"]}, limit=10)
    texts = {f.fact.fact for f in res.facts}
    assert texts == {"The user works on Orion", "Orion stores its data in PostgreSQL"}
    assert {e.entity.name for e in res.entities} == {"Orion"}


async def test_graph_expansion_finds_facts_that_share_no_words_with_the_query(mem):
    # "Elena" matches the entity; BFS from it reaches the KNOWS fact even without lexical overlap
    res = await mem.search("Elena", "g1", bfs_depth=1)
    assert "Ravi knows Elena from school" in [f.fact.fact for f in res.facts]


async def test_center_node_rerank_puts_nearby_facts_first(mem):
    ents = {e.name: e for e in await mem.list_entities("g1")}
    res = await mem.search("facts", "g1", center_node_id=ents["Ravi"].id, limit=5)
    assert res.facts[0].fact.fact == "Ravi knows Elena from school"


async def test_search_never_returns_another_groups_rows(mem):
    g2 = await mem.search("Orion MySQL data", "g2")
    assert g2.facts and all(f.fact.group_id == "g2" for f in g2.facts)
    assert all(e.entity.group_id == "g2" for e in g2.entities)
    assert all(e.episode.group_id == "g2" for e in g2.episodes)
    g1_ids = {e.id for e in await mem.list_entities("g1")}
    res = await mem.search("Orion", "g2", center_node_id=next(iter(g1_ids)))
    assert all(f.fact.group_id == "g2" for f in res.facts)
    both = await mem.search("Orion MySQL", ["g1", "g2"])
    assert {f.fact.group_id for f in both.facts} <= {"g1", "g2"}


async def test_empty_answer_is_explicit(mem):
    res = await mem.search("zebra quantum unicorn", "g3")
    assert res.is_empty()


async def test_bad_search_input_names_the_field(mem):
    with pytest.raises(ValidationError, match="limit"):
        await mem.search("x", "g1", limit=0)
    with pytest.raises(ValidationError, match="query"):
        await mem.search("", "g1")
    with pytest.raises(ValidationError, match="group_ids"):
        await mem.search("x", ["bad group"])
    with pytest.raises(ValidationError, match="relation_typ"):
        await mem.search("x", "g1", filters={"relation_typ": ["USES"]})


def test_rrf_rewards_agreement():
    scores = rrf([["a", "b", "c"], ["b", "a", "d"]])
    assert max(scores, key=scores.get) in {"a", "b"} and scores["a"] == scores["b"]
    assert scores["c"] > scores.get("e", 0) and scores["d"] == scores["c"]


def test_mmr_prefers_novel_items():
    import numpy as np

    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    near = np.array([0.99, 0.14, 0.0], dtype=np.float32)
    vecs = {"a": near, "b": near.copy(), "c": np.array([0.8, 0.0, 0.6], dtype=np.float32)}
    assert mmr(["a", "b", "c"], vecs, q, 0.3, 2) == ["a", "c"]
    assert mmr(["a", "b", "c"], vecs, q, 1.0, 2) == ["a", "b"]


async def test_mmr_search_uses_stored_vectors(mem):
    plain = await mem.search("Orion data", "g1", limit=3)
    diverse = await mem.search("Orion data", "g1", limit=3, mmr=0.3)
    assert diverse.facts and {f.fact.id for f in diverse.facts} <= {
        f.id for f in await mem.list_facts("g1")}
    assert len(diverse.facts) == len(plain.facts)


async def test_evidence_keeps_the_best_turns_neighbours_next_to_it(open_memory):
    m = await open_memory(extractor=ScriptedExtractor())
    turns = ["Did you finish the marathon?", "Yes! I ran it in four hours last Sunday.", "Amazing, congrats.",
             "Unrelated: the weather is grey.", "Let us talk about gardening tomatoes."]
    for i, text in enumerate(turns):
        await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0 + timedelta(minutes=i)}],
                             conversation_id="s1")
    await m.add_messages("g1", [{"content": "marathon in another session", "role_type": "user",
                                 "timestamp": T0 + timedelta(minutes=2, seconds=30)}], conversation_id="s2")
    res = await m.search("finish the marathon", "g1", limit=3, neighbours=1)
    best = res.episodes[0].episode
    assert "finish the marathon" in best.content
    ctx = res.context[best.id]
    assert [e.content.split(": ", 1)[1] for e in ctx] == [turns[1]]  # next turn, same conversation only
    ev = [e.episode.id for e in res.evidence(3)]
    assert ev[:2] == [best.id, ctx[0].id]
    assert m.store.adjacent_episodes("other-group", best.id, 1) == []
    assert [e.content.split(": ", 1)[1] for e in (await m.search("finish the marathon", "g1", limit=3))
            .context[best.id]] == [turns[1]]  # one turn each side by default below limit 10
    default = await m.search("finish the marathon", "g1", limit=10)  # two from limit 10 up (LoCoMo-tuned)
    assert [e.content.split(": ", 1)[1] for e in default.context[best.id]] == turns[1:3]
    none = await m.search("finish the marathon", "g1", limit=3, neighbours=0)
    assert none.context == {}


async def test_center_node_orders_by_hops_touching_then_one_away_then_the_rest(open_memory):
    script = {**SCRIPT, "Elena knows Mira": rel("Elena", "person", "KNOWS", "Mira", "person",
                                                "Elena knows Mira from work")}
    m = await open_memory(extractor=ScriptedExtractor(script))
    for i, text in enumerate(["Orion stores data in MySQL", "I work on Orion", "Ravi knows Elena",
                              "Elena knows Mira"]):
        await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0 + timedelta(days=i)}])
    ents = {e.name: e.id for e in await m.list_entities("g1")}
    # a query the Orion facts match best: only the center node can lift the KNOWS facts above them
    ravi = await m.search("Where does Orion store its data?", "g1", center_node_id=ents["Ravi"], limit=10)
    texts = [f.fact.fact for f in ravi.facts]
    assert texts[:2] == ["Ravi knows Elena from school", "Elena knows Mira from work"], texts
    assert texts[2:] == ["Orion stores its data in MySQL", "The user works on Orion"], texts  # then by score
    mira = await m.search("Where does Orion store its data?", "g1", center_node_id=ents["Mira"], limit=10)
    assert [f.fact.fact for f in mira.facts][:2] == ["Elena knows Mira from work", "Ravi knows Elena from school"]
    assert not ravi.is_empty()
    assert (await m.search("zebra quantum unicorn", "nobody")).is_empty()


def test_entity_candidate_name_and_block_scores():
    from loregraph.search.candidates import combined_score, name_similarity, normalize, weighted_similarity

    assert name_similarity("", "postgres") == 0.0 and name_similarity("postgres", "") == 0.0
    assert name_similarity("postgres", "postgres") == 1.0
    assert name_similarity("postgres", "postgresql") == pytest.approx(16 / 18)
    assert name_similarity("abcde", "abcxy") == pytest.approx(0.6)  # exactly the threshold counts
    assert name_similarity("abcdef", "fedcba") == 0.0  # same letters, little in order: below the threshold
    assert name_similarity("redis", "kafka") == 0.0
    assert weighted_similarity(0.8, 0) == pytest.approx(0.8) and weighted_similarity(0.8, 1) == pytest.approx(0.4)
    assert weighted_similarity(0.9, 2) == pytest.approx(0.3)
    assert combined_score(1.0, 0.0) == pytest.approx(0.55) and combined_score(0.0, 1.0) == pytest.approx(0.45)
    assert normalize("  Ｐｏｓｔｇｒｅｓ\x00SQL  ") == normalize("postgres sql")


async def test_entity_candidate_requests_are_checked_naming_the_field(open_memory):
    from loregraph.errors import InvalidInputError

    m = await open_memory()
    ask = m.find_entity_candidates
    with pytest.raises(InvalidInputError) as e:
        await ask("g", names=["  "], user_id="u")
    assert str(e.value) == ("names / short_description: at least one non-empty name or a non-empty "
                            "short_description is required")
    with pytest.raises(InvalidInputError) as e:
        await ask("g", names=["Ada"], user_id=" ")
    assert str(e.value) == "user_id: required (candidates are scoped to the requester)"
    with pytest.raises(InvalidInputError) as e:
        await ask("g", names=["Ada"], user_id="u", limit=-1)
    assert str(e.value) == "limit: must not be negative (got -1)"
    with pytest.raises(InvalidInputError) as e:
        await ask("g", names=["Ada"], user_id="u", potential_type_ids=["node.person", "person"])
    assert str(e.value) == "potential_type_ids[1]: unknown entity type 'person'"
    assert await ask("g", names=["Ada"], user_id="u", limit=0) == []  # 0: the default limit
    assert await ask("g", names=["Ada"], user_id="u", potential_type_ids=["node.person"]) == []
