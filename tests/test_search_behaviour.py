"""Search behaviour through the public APIs (Memory.search, HybridSearch, GraphExplorer, GraphQuery): the exact
order, pages, time windows and routing a caller sees. Written to pin behaviour that mutation testing showed no
test noticed (issue 23); each test was checked failing with the planted change it names."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from loregraph.extract.base import SPEAKER, ExtractedEnding, ExtractedEntity, ExtractedRelation, Extraction
from scripted import ScriptedExtractor

DAY0 = datetime(2024, 3, 1, tzinfo=UTC)


def says(subject: tuple[str, str] | None, rtype: str, obj: tuple[str, str], text: str,
         ends: tuple[str, str] | None = None):
    """A scripted extraction: ``subject -[rtype]-> obj`` (subject None: the speaker), optionally ending the
    same relationship to ``ends``."""
    def answer(ctx):
        ents = [ExtractedEntity("o", obj[0], obj[1])]
        src = SPEAKER
        if subject is not None:
            ents.append(ExtractedEntity("s", subject[0], subject[1]))
            src = "s"
        ex = Extraction(entities=ents, relations=[ExtractedRelation(src, rtype, "o", text)])
        if ends:
            ents.append(ExtractedEntity("e", ends[0], ends[1]))
            ex.endings.append(ExtractedEnding(source=src, type=rtype, target="e"))
        return ex
    return answer


LYRA, KAFKA, RABBIT = ("Lyra", "project"), ("Kafka", "tool"), ("RabbitMQ", "tool")
NOOR, TOMAS, IDA = ("Noor", "person"), ("Tomas", "person"), ("Ida", "person")
SCRIPT = {
    "Lyra queues on RabbitMQ": says(LYRA, "USES", RABBIT, "Lyra sends its events through RabbitMQ"),
    "Noor mentors Tomas": says(NOOR, "KNOWS", TOMAS, "Noor mentors Tomas on Fridays"),
    "Tomas met Ida": says(TOMAS, "KNOWS", IDA, "Tomas met Ida at the climbing gym"),
    "Lyra switched to Kafka": says(LYRA, "USES", KAFKA, "Lyra sends its events through Kafka", ends=RABBIT),
}
MESSAGES = [("Lyra queues on RabbitMQ", 0), ("Noor mentors Tomas", 1), ("Tomas met Ida", 2),
            ("Lyra switched to Kafka", 40)]


async def add(m, group: str, texts: list[tuple[str, int]]) -> None:
    for text, day in texts:
        await m.add_messages(group, [{"content": text, "role_type": "user", "timestamp": DAY0 + timedelta(days=day)}])


@pytest.fixture
async def mem(open_memory):
    m = await open_memory(extractor=ScriptedExtractor(SCRIPT))
    await add(m, "g1", MESSAGES)
    return m


# ---- GraphExplorer.page ---------------------------------------------------------------------------------------
async def test_graph_pages_follow_creation_order_and_hold_only_the_facts_among_their_entities(mem):
    everything = await mem.graph_page("g1", limit=200)
    names = [e.name for e in everything.entities]
    assert names == ["RabbitMQ", "Lyra", "Tomas", "Noor", "Ida", "Kafka"], names
    assert everything.more is False
    # every current fact, none ended; the time span covers ended facts too (RabbitMQ: day 0 to day 40)
    assert sorted(f.fact for f in everything.facts) == ["Lyra sends its events through Kafka",
                                                        "Noor mentors Tomas on Fridays",
                                                        "Tomas met Ida at the climbing gym"]
    assert everything.time_min == DAY0 and everything.time_max == DAY0 + timedelta(days=40)

    first = await mem.graph_page("g1", limit=2)
    assert [e.name for e in first.entities] == names[:2] and first.more is True
    assert first.facts == []  # RabbitMQ -- Lyra ended; no current fact has both ends on the page
    middle = await mem.graph_page("g1", limit=3, offset=2)
    assert [e.name for e in middle.entities] == names[2:5] and middle.more is True
    assert sorted(f.fact for f in middle.facts) == ["Noor mentors Tomas on Fridays",
                                                    "Tomas met Ida at the climbing gym"]
    assert middle.time_min == DAY0 + timedelta(days=1) and middle.time_max == DAY0 + timedelta(days=2)
    last = await mem.graph_page("g1", limit=1, offset=5)
    assert [e.name for e in last.entities] == ["Kafka"] and last.more is False
    exactly = await mem.graph_page("g1", limit=6)
    assert len(exactly.entities) == 6 and exactly.more is False

    past = await mem.graph_page("g1", limit=2, as_of=DAY0 + timedelta(days=10))
    assert [f.fact for f in past.facts] == ["Lyra sends its events through RabbitMQ"]
    empty = await mem.graph_page("other", limit=5)
    assert empty.entities == [] and empty.facts == [] and empty.time_min is None and empty.time_max is None


async def test_a_neighbourhood_holds_the_centre_its_neighbours_up_to_the_limit_and_the_facts_among_them(mem):
    ids = {e.name: e.id for e in await mem.list_entities("g1")}
    piece = await mem.graph_neighbourhood("g1", [ids["Tomas"]])
    assert next(e.name for e in piece.entities) == "Tomas"
    assert sorted(e.name for e in piece.entities) == ["Ida", "Noor", "Tomas"] and piece.more is False
    assert sorted(f.fact for f in piece.facts) == ["Noor mentors Tomas on Fridays", "Tomas met Ida at the climbing gym"]
    one = await mem.graph_neighbourhood("g1", [ids["Tomas"]], limit=1)
    assert len(one.entities) == 2 and one.more is True  # the limit reached: there may be more
    assert [f.fact for f in one.facts] == [next(f.fact for f in piece.facts if {f.source_id, f.target_id} ==
                                                {ids["Tomas"], one.entities[1].id})]
    two = await mem.graph_neighbourhood("g1", [ids["Tomas"], ids["Noor"]])
    assert sorted(e.name for e in two.entities) == ["Ida", "Noor", "Tomas"]
    lyra_then = await mem.graph_neighbourhood("g1", [ids["Lyra"]], as_of=DAY0 + timedelta(days=10))
    assert [e.name for e in lyra_then.entities] == ["Lyra", "RabbitMQ"]
    lyra_now = await mem.graph_neighbourhood("g1", [ids["Lyra"]])
    assert [e.name for e in lyra_now.entities] == ["Lyra", "Kafka"]
    from loregraph.errors import NotFoundError

    with pytest.raises(NotFoundError, match=f"entity {ids['Tomas']} not found in group other"):
        await mem.graph_neighbourhood("other", [ids["Tomas"]])


async def test_a_timeline_lists_every_fact_of_the_entity_in_world_time_order_with_the_other_names(open_memory):
    m = await open_memory(extractor=ScriptedExtractor(SCRIPT))
    # told out of order: the switch to Kafka (day 40) first, the RabbitMQ queueing (day 0) after it
    await add(m, "g1", [("Lyra switched to Kafka", 40), ("Lyra queues on RabbitMQ", 0)])
    ids = {e.name: e.id for e in await m.list_entities("g1")}
    entity, facts, names = await m.entity_timeline("g1", ids["Lyra"])
    assert entity.name == "Lyra"
    assert [f.fact for f in facts] == ["Lyra sends its events through RabbitMQ",
                                       "Lyra sends its events through Kafka"]
    assert names == {ids["Lyra"]: "Lyra", ids["Kafka"]: "Kafka", ids["RabbitMQ"]: "RabbitMQ"}
    _, first, _ = await m.entity_timeline("g1", ids["Lyra"], limit=1)
    assert len(first) == 1
    from loregraph.errors import InvalidInputError, NotFoundError

    with pytest.raises(NotFoundError, match="not found in group g2"):
        await m.entity_timeline("g2", ids["Lyra"])
    with pytest.raises(InvalidInputError, match="limit: must be between 1 and 1000"):
        await m.entity_timeline("g1", ids["Lyra"], limit=1001)


# ---- GraphQuery.explain ---------------------------------------------------------------------------------------
async def test_explain_lists_a_facts_sources_oldest_first_and_the_message_that_ended_it(open_memory):
    m = await open_memory(extractor=ScriptedExtractor(SCRIPT))
    # the same relationship told twice, the later-dated message first: sources come back in world-time order
    await add(m, "g1", [("Lyra queues on RabbitMQ (again)", 5), ("Lyra queues on RabbitMQ", 1),
                        ("Lyra switched to Kafka", 40)])
    facts = {f.fact: f for f in await m.list_facts("g1", current=False)}
    old = facts["Lyra sends its events through RabbitMQ"]
    why = await m.explain("g1", old.id)
    assert why.kind == "fact" and why.record.id == old.id
    assert [s.valid_at for s in why.sources] == [DAY0 + timedelta(days=1), DAY0 + timedelta(days=5)]
    assert why.ended_by is not None and why.ended_by.valid_at == DAY0 + timedelta(days=40)
    assert "switched to Kafka" in why.ended_by.content
    new = await m.explain("g1", facts["Lyra sends its events through Kafka"].id)
    assert new.ended_by is None and [s.valid_at for s in new.sources] == [DAY0 + timedelta(days=40)]
    lyra = next(e for e in await m.list_entities("g1") if e.name == "Lyra")
    about = await m.explain("g1", lyra.id)
    assert about.kind == "entity" and [s.valid_at for s in about.sources] == [
        DAY0 + timedelta(days=d) for d in (1, 5, 40)]
    from loregraph.errors import NotFoundError

    with pytest.raises(NotFoundError, match=f"no entity or fact {lyra.id} in group g2"):
        await m.explain("g2", lyra.id)


# ---- routed search --------------------------------------------------------------------------------------------
async def test_the_graph_route_answers_only_for_one_group_and_the_present(mem):
    await add(mem, "g2", [("Lyra queues on RabbitMQ", 0)])
    question = "Which tools does Lyra use?"  # a relationship question: routed to the graph
    # a floor no match clears: only relationships the graph route found keep the results
    routed = await mem.search(question, "g1", route=True, min_relevance=0.99)
    assert routed.route == "graph" and routed.below_floor is False
    assert next((f.fact.fact, f.score, f.source_name, f.target_name) for f in routed.facts) == (
        "Lyra sends its events through Kafka", 1.0, "Lyra", "Kafka")
    two_groups = await mem.search(question, ["g1", "g2"], route=True, min_relevance=0.99)
    assert two_groups.route == "graph" and two_groups.below_floor is True and two_groups.facts == []
    past = await mem.search(question, "g1", route=True, min_relevance=0.99, as_of=DAY0 + timedelta(days=10))
    assert past.route == "graph" and past.below_floor is True and past.facts == []
    # in the past, without the floor: what was true then, not the graph route's current answer
    then = await mem.search(question, "g1", route=True, min_relevance=0, as_of=DAY0 + timedelta(days=10))
    assert "Lyra sends its events through Kafka" not in [f.fact.fact for f in then.facts]
    assert "Lyra sends its events through RabbitMQ" in [f.fact.fact for f in then.facts]
    unrouted = await mem.search(question, "g1", min_relevance=0.99)
    assert unrouted.route is None and unrouted.below_floor is True
    # the graph route's relationships pass the request's filters too
    filtered = await mem.search(question, "g1", route=True, min_relevance=0.99, filters={"relation_types": ["KNOWS"]})
    assert filtered.below_floor is True and filtered.facts == []


async def test_a_narrative_question_is_routed_to_vector_search_without_graph_expansion(mem):
    narrative = "What did Noor say when we talked?"
    routed = await mem.search(narrative, "g1", route=True, min_relevance=0)
    assert routed.route == "vector"
    plain = await mem.search(narrative, "g1", bfs_depth=0, min_relevance=0)
    assert [(f.fact.id, f.score) for f in routed.facts] == [(f.fact.id, f.score) for f in plain.facts]
    expanded = await mem.search(narrative, "g1", min_relevance=0)
    assert [(f.fact.id, f.score) for f in expanded.facts] != [(f.fact.id, f.score) for f in plain.facts]


# ---- evidence ---------------------------------------------------------------------------------------------------
def test_evidence_lifts_the_turns_a_matching_fact_came_from_and_keeps_context_after_its_turn():
    from loregraph.graph.types import Episode, Fact
    from loregraph.search.hybrid import FACT_EVIDENCE_BOOST, ScoredEpisode, ScoredFact, SearchResults

    def ep(i: str) -> Episode:
        return Episode(id=i, group_id="g", content=f"turn {i}", valid_at=DAY0)

    a, b, c, d = ep("a"), ep("b"), ep("c"), ep("d")
    fact = Fact(group_id="g", source_id="x", target_id="y", type="KNOWS", fact="x knows y", episodes=["b", "zz"])
    res = SearchResults(episodes=[ScoredEpisode(a, 0.5), ScoredEpisode(b, 0.45), ScoredEpisode(c, 0.1)],
                        facts=[ScoredFact(fact, 0.8)], context={"b": [d, a], "c": [b]})
    ev = res.evidence(10)
    # b: 0.45 + 0.1 * 0.8 = 0.53 beats a (0.5); its context d and a follow it, with b's score; c last
    assert [(e.episode.id, e.score) for e in ev] == [("b", round(0.45 + FACT_EVIDENCE_BOOST * 0.8, 6)),
                                                     ("d", 0.53), ("a", 0.53), ("c", 0.1)]
    assert [e.episode.id for e in res.evidence(2)] == ["b", "a"]  # below k = 10 no context turns (LoCoMo-tuned)
    assert SearchResults().evidence(3) == []
    thirds = SearchResults(episodes=[ScoredEpisode(a, 1 / 3)], context={"a": [d]})
    assert [(e.episode.id, e.score) for e in thirds.evidence(10)] == [("a", 0.333333), ("d", 0.333333)]


# ---- HybridSearch: parts, filters, relevance ----------------------------------------------------------------
async def test_only_the_parts_asked_for_come_back_and_messages_still_calibrate_relevance(mem):
    facts_only = await mem.search("Lyra events", "g1", include=["facts"], min_relevance=0)
    assert facts_only.facts and facts_only.entities == [] and facts_only.episodes == []
    assert facts_only.communities == [] and facts_only.context == {}
    assert set(facts_only.relevance_parts) == {"entity", "fact", "episode"}
    assert facts_only.relevance == max(facts_only.relevance_parts.values())
    full = await mem.search("Lyra events", "g1", min_relevance=0)
    # the same closest message whether episodes were searched or not
    assert full.relevance_parts == facts_only.relevance_parts
    assert [(f.fact.id, f.score) for f in full.facts] == [(f.fact.id, f.score) for f in facts_only.facts]
    scores = [s for part in (full.facts, full.entities, full.episodes) for s in (x.score for x in part)]
    assert scores and all(s == round(s, 6) for s in scores) and any(s != round(s, 2) for s in scores)
    assert all(v == round(v, 6) for v in full.relevance_parts.values())
    entities_only = await mem.search("Lyra", "g1", include=["entities"], limit=2, min_relevance=0)
    assert next(e.entity.name for e in entities_only.entities) == "Lyra" and len(entities_only.entities) == 2
    assert entities_only.facts == [] and entities_only.episodes == []
    nothing = await mem.search("Lyra", "empty-group", min_relevance=0)
    assert nothing.relevance is None and nothing.relevance_parts == {} and nothing.is_empty()


async def test_ended_facts_come_back_only_when_asked_and_created_time_filters_apply(mem):
    ended = "Lyra sends its events through RabbitMQ"
    now = await mem.search("Lyra events RabbitMQ", "g1", min_relevance=0)
    assert ended not in [f.fact.fact for f in now.facts]
    history = await mem.search("Lyra events RabbitMQ", "g1", include_ended=True, min_relevance=0)
    assert ended in [f.fact.fact for f in history.facts]
    # as_of answers what was true then, never every ended fact
    late = await mem.search("Lyra events RabbitMQ", "g1", include_ended=True, as_of=DAY0 + timedelta(days=50),
                            min_relevance=0)
    assert ended not in [f.fact.fact for f in late.facts]
    late_only = await mem.search("Lyra events RabbitMQ", "g1", as_of=DAY0 + timedelta(days=50), min_relevance=0)
    assert [(f.fact.id, f.score) for f in late.facts] == [(f.fact.id, f.score) for f in late_only.facts]
    facts = await mem.list_facts("g1")
    first, last = min(f.created_at for f in facts), max(f.created_at for f in facts)
    before_all = await mem.search("Lyra events", "g1", filters={"created_before": first - timedelta(seconds=1)},
                                  min_relevance=0)
    assert before_all.facts == []
    after_all = await mem.search("Lyra events", "g1", filters={"created_after": last + timedelta(seconds=1)},
                                 min_relevance=0)
    assert after_all.facts == []
    window = await mem.search("Lyra events", "g1", limit=20, min_relevance=0,
                              filters={"created_after": first, "created_before": last})
    assert {f.fact.id for f in window.facts} == {f.id for f in facts}
    valid_window = await mem.search("Noor Tomas Ida Lyra", "g1", limit=20, min_relevance=0,
                                    filters={"valid_after": DAY0 + timedelta(days=1),
                                             "valid_before": DAY0 + timedelta(days=2)})
    assert sorted(f.fact.fact for f in valid_window.facts) == ["Noor mentors Tomas on Fridays",
                                                               "Tomas met Ida at the climbing gym"]
    assert sorted(e.episode.valid_at for e in valid_window.episodes) == [DAY0 + timedelta(days=1),
                                                                        DAY0 + timedelta(days=2)]
    plain = await mem.search("Noor Tomas Ida Lyra", "g1", limit=20, min_relevance=0, turn_context=False,
                             filters={"valid_after": DAY0 + timedelta(days=1),
                                      "valid_before": DAY0 + timedelta(days=2)})
    assert sorted(e.episode.valid_at for e in plain.episodes) == [DAY0 + timedelta(days=1),
                                                                 DAY0 + timedelta(days=2)]
    one = await mem.search("Noor Tomas Ida Lyra", "g1", limit=1, min_relevance=0, turn_context=False)
    assert len(one.episodes) == 1 and len(one.facts) == 1 and len(one.entities) == 1


# ---- GraphQuery: anchors and routing ----------------------------------------------------------------------------
async def test_a_question_naming_no_entity_anchors_on_a_very_close_meaning_only(mem):
    # "Rabbit MQ" is no whole-word name of any entity; its meaning is very close to RabbitMQ (cosine ~0.87)
    close = await mem.query_graph("Rabbit MQ", "g1")
    assert [e.name for e in close.entities] == ["RabbitMQ"] and close.found
    far = await mem.query_graph("a rabbit message queue", "g1")  # cosine ~0.6: not close enough
    assert far.entities == [] and not far.found
    named = await mem.query_graph("Tomas", "g1")
    assert named.entities[0].name == "Tomas"
    assert sorted(r.fact.fact for r in named.relationships) == ["Noor mentors Tomas on Fridays",
                                                                "Tomas met Ida at the climbing gym"]


def test_a_question_about_people_alone_is_not_a_graph_question():
    from loregraph.search.graph import route

    assert route("Who is Noor?") == "combined"  # a person cue alone: no relationship, no other entity type
    assert route("Who mentors Tomas?") == "combined"
    assert route("Which tools does Lyra use?") == "graph"
    assert route("Which projects are there?") == "graph"  # an entity type other than person is enough
    assert route("What did Noor say when we talked?") == "vector"


async def test_graph_facts_follow_the_time_asked(mem):
    ids = {e.name: e.id for e in await mem.list_entities("g1")}
    now = await mem.graph_facts("g1", [ids["Lyra"]])
    assert [f.fact for f in now] == ["Lyra sends its events through Kafka"]
    then = await mem.graph_facts("g1", [ids["Lyra"]], as_of=DAY0 + timedelta(days=10))
    assert [f.fact for f in then] == ["Lyra sends its events through RabbitMQ"]
    from loregraph.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="entity_ids: give between 1 and 50 entity ids"):
        await mem.graph_facts("g1", [])
    assert await mem.graph_facts("other", [ids["Lyra"]]) == []


async def test_an_entity_type_filter_looks_past_the_first_candidates_for_an_entity_of_that_type(open_memory):
    tools = ["Hammer", "Chisel", "Wrench", "Pliers", "Drill", "Sander", "Plane", "Clamp", "Level", "Mallet",
             "Rasp", "Trowel", "Awl", "Vise", "Saw", "File"]

    def inventory(ctx):
        ents = [ExtractedEntity(f"t{i}", name, "tool") for i, name in enumerate(tools)]
        ents.append(ExtractedEntity("p", "Zephyr", "project"))
        return Extraction(entities=ents)

    m = await open_memory(extractor=ScriptedExtractor({"workshop inventory": inventory}))
    await add(m, "g1", [("workshop inventory", 0)])
    question = "hammer chisel wrench pliers drill sander plane clamp level mallet rasp trowel"
    everything = await m.search(question, "g1", include=["entities"], limit=20, min_relevance=0)
    assert [e.entity.name for e in everything.entities].index("Zephyr") >= 12  # ranked past the first loads
    projects = await m.search(question, "g1", include=["entities"], limit=1, min_relevance=0,
                              filters={"entity_types": ["project"]})
    assert [e.entity.name for e in projects.entities] == ["Zephyr"]



async def test_graph_expansion_reaches_facts_two_hops_from_the_best_entities_at_depth_two(open_memory):
    people = [("Aurelio", "person"), ("Bettina", "person"), ("Cosmin", "person"), ("Dagny", "person"),
              ("Emeka", "person"), ("Farida", "person"), ("Gustav", "person"), ("Hiroshi", "person"),
              ("Ilse", "person"), ("Jovan", "person"), ("Kalani", "person"), ("Lorcan", "person")]
    script = {f"{a[0]} and {b[0]}": says(a, "KNOWS", b, f"{a[0]} and {b[0]} sing in one choir")
              for a, b in itertools.pairwise(people)}
    m = await open_memory(extractor=ScriptedExtractor(script))
    await add(m, "g1", [(text, i) for i, text in enumerate(script)])
    scores = {}
    for depth in (0, 1, 2):
        res = await m.search("Aurelio", "g1", bfs_depth=depth, limit=20, min_relevance=0)
        scores[depth] = {f.fact.fact: f.score for f in res.facts}
    # each hop adds facts (or lifts them): depth 1 differs from 0, depth 2 from 1
    assert scores[1] != scores[0] and scores[2] != scores[1]
    assert all(scores[2][f] >= scores[1][f] for f in scores[1])


# ---- messages: conversation context, when-questions, as_of -----------------------------------------------------
CHAT = ["Noor: I finally went hiking in the Alps with my sister.", "Ida: How was the weather up there?",
        "Noor: Sunny, and that was last week already.", "Ida: I prefer swimming to hiking, honestly.",
        "Noor: Swimming in the lake is lovely too."]


async def chat(open_memory):
    m = await open_memory(extractor=ScriptedExtractor())
    for i, text in enumerate(CHAT):
        await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": DAY0 + timedelta(days=i)}],
                             conversation_id="c1")
    await m.add_messages("g1", [{"content": "Tomas: hiking boots are on sale", "role_type": "user",
                                 "timestamp": DAY0}], conversation_id="c2")
    return m


async def test_a_when_question_lifts_the_turn_that_tells_the_time_and_keeps_scores_in_order(open_memory):
    m = await chat(open_memory)
    res = await m.search("When did Noor go hiking in the Alps?", "g1", limit=5, min_relevance=0)
    scores = [e.score for e in res.episodes]
    assert scores == sorted(scores, reverse=True)
    plain = await m.search("Noor went hiking in the Alps", "g1", limit=5, min_relevance=0)
    told = next(e for e in res.episodes if "last week" in e.episode.content)
    told_plain = next(e for e in plain.episodes if "last week" in e.episode.content)
    assert res.episodes.index(told) < plain.episodes.index(told_plain) or res.episodes[0] is told


async def test_the_conversation_around_a_message_changes_its_score_only_with_turn_context(open_memory):
    m = await chat(open_memory)
    alone = await m.search("hiking", "g1", limit=6, min_relevance=0, turn_context=False)
    around = await m.search("hiking", "g1", limit=6, min_relevance=0)
    by_id = {e.episode.id: e.score for e in alone.episodes}
    assert all(e.score > by_id[e.episode.id] for e in around.episodes if e.episode.conversation_id == "c1")


async def test_the_turns_around_the_best_message_stay_within_the_time_asked(open_memory):
    m = await chat(open_memory)
    res = await m.search("hiking in the Alps", "g1", limit=3, neighbours=2, min_relevance=0,
                         as_of=DAY0 + timedelta(days=1, hours=1))
    best = res.episodes[0].episode
    assert "hiking in the Alps" in best.content
    assert [e.content.endswith(CHAT[1]) for e in res.context[best.id]] == [True]  # later turns: not said yet


def test_a_conversation_is_as_strong_as_its_three_best_messages():
    from loregraph.search.turns import CONTEXT_WEIGHT, SESSION_WEIGHT, rescore_turns

    day = [DAY0 + timedelta(minutes=i) for i in range(5)]
    places = {"a1": ("A", day[0]), "a2": ("A", day[1]), "a3": ("A", day[2]), "a4": ("A", day[3]),
              "b1": ("B", day[4])}
    scored = dict(rescore_turns([("a1", 0.9), ("a2", 0.8), ("a3", 0.7), ("a4", 0.1), ("b1", 0.5)], places, None))
    a = [0.9 + CONTEXT_WEIGHT * 0.8, 0.8 + CONTEXT_WEIGHT * 0.9, 0.7 + CONTEXT_WEIGHT * 0.8]  # the three best of A
    assert scored["b1"] == pytest.approx(0.5 + SESSION_WEIGHT * (0.5 / 3) / (sum(a) / 3))
    assert scored["a1"] == pytest.approx(a[0] + SESSION_WEIGHT)


async def test_a_question_naming_a_day_or_month_lifts_what_was_said_then(open_memory):
    m = await chat(open_memory)
    for question in ("What did Ida say about sports on March 4, 2024?",
                     "What did Ida say about sports on 4 March 2024?"):
        res = await m.search(question, "g1", limit=3, min_relevance=0)
        assert res.episodes[0].episode.valid_at == DAY0 + timedelta(days=3), question
    month = await m.search("What did Ida say about sports in March 2024?", "g1", limit=6, min_relevance=0)
    other = await m.search("What did Ida say about sports in May 2024?", "g1", limit=6, min_relevance=0)
    lifted = {e.episode.id: e.score for e in month.episodes}
    assert all(lifted[e.episode.id] > e.score for e in other.episodes)  # every message was said in March 2024
