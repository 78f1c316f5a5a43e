"""World time vs system time months apart, on every way facts are read (issue 23), and spec behaviours the default
schema hides: a custom single-valued rule replacing the old fact, rate limits across the messages of one
conversation."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from loregraph.ingest.pipeline import RateLimits
from loregraph.store import TimeFilter
from rest_support import Server
from scripted import ScriptedExtractor
from test_search import rel
from test_store import SCHEMA, vec
from test_store_contract import Backend

JAN, FEB, MAR, APR, JUN, JUL = (datetime(2025, m, 1, tzinfo=UTC) for m in (1, 2, 3, 4, 6, 7))


def ended_fact_delta(group: str = "t") -> GraphDelta:
    """Held in the world from January to March; the system learned it in June and the ending in July."""
    a = Entity(group_id=group, name="Juno", type="project", embedding=vec(1), created_at=JUN, updated_at=JUN)
    b = Entity(group_id=group, name="Redis", type="tool", embedding=vec(2), created_at=JUN, updated_at=JUN)
    ep = Episode(group_id=group, content="Juno used Redis from January to March", valid_at=JUN, created_at=JUN,
                 embedding=vec(3))
    f = Fact(group_id=group, source_id=a.id, target_id=b.id, type="USES", fact="Juno uses Redis", episodes=[ep.id],
             valid_at=JAN, invalid_at=MAR, created_at=JUN, expired_at=JUL, embedding=vec(4))
    return GraphDelta(group_id=group, episodes=[ep], entities=[a, b], facts=[f])


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path_factory):
    admin = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    backend = Backend(request.param, tmp_path_factory, admin)
    yield backend.fresh()
    backend.cleanup()


def test_as_of_is_world_time_not_system_time_in_the_store(store):
    store.apply(ended_fact_delta(), SCHEMA)
    held = {when: [f.fact for f in store.list_facts("t", TimeFilter(as_of=when))] for when in (JAN, FEB, APR, JUN)}
    # world time: true from January until March, whatever the system knew when
    assert held == {JAN: ["Juno uses Redis"], FEB: ["Juno uses Redis"], APR: [], JUN: []}
    assert store.list_facts("t", TimeFilter()) == []  # not current
    assert [f.fact for f in store.list_facts("t", TimeFilter(include_expired=True))] == ["Juno uses Redis"]
    ids = [e.id for e in store.list_entities("t")]
    assert [f.fact for f in store.facts_of_entities("t", ids, TimeFilter(as_of=FEB))] == ["Juno uses Redis"]
    assert store.facts_of_entities("t", ids, TimeFilter(as_of=APR)) == []


async def test_as_of_through_memory_and_search(tmp_path, embedder):
    from loregraph.memory import Memory
    from loregraph.store import open_store

    path = tmp_path / "m.db"
    s = open_store(path)
    s.ensure_embedder(embedder.name, embedder.dim)
    delta = ended_fact_delta()
    for rec in (*delta.entities, *delta.episodes, *delta.facts):
        rec.embedding = None  # the real model embeds them on the way in below
    s.close()
    m = await Memory.open(path, embedder=embedder)
    try:
        for rec in (*delta.entities, *delta.facts):
            rec.embedding = embedder.embed_one(getattr(rec, "fact", None) or rec.name).tolist()
        delta.episodes[0].embedding = embedder.embed_one(delta.episodes[0].content).tolist()
        await m.upsert_delta(delta)
        assert [f.fact for f in await m.list_facts("t", as_of=FEB)] == ["Juno uses Redis"]
        assert await m.list_facts("t", as_of=APR) == []
        feb = await m.search("What does Juno use?", "t", as_of=FEB, include=["facts"])
        apr = await m.search("What does Juno use?", "t", as_of=APR, include=["facts"])
        assert [f.fact.fact for f in feb.facts] == ["Juno uses Redis"] and apr.facts == []
    finally:
        await m.close()


def test_as_of_through_the_rest_facts_route(tmp_path):
    from loregraph.store import open_store

    db = tmp_path / "m.db"
    s = open_store(db)
    s.ensure_embedder("all-MiniLM-L6-v2", 384)
    delta = ended_fact_delta()
    for rec in (*delta.entities, *delta.episodes, *delta.facts):
        rec.embedding = None
    s.apply(delta, SCHEMA)
    s.close()
    srv = Server(tmp_path / "srv", db).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            def facts(**q: str) -> list[str]:
                r = c.get("/groups/t/facts", params=q)
                assert r.status_code == 200, r.text
                return [f["fact"] for f in r.json()]

            assert facts(as_of="2025-02-01T00:00:00Z") == ["Juno uses Redis"]
            assert facts(as_of="2025-04-01T00:00:00Z") == []
            assert facts() == [] and facts(current="false") == ["Juno uses Redis"]
    finally:
        srv.stop()


# ---- a custom single-valued rule -------------------------------------------------------------------
def one_project_per_person_schema(tmp_path) -> str:
    doc = json.loads(SCHEMA.doc.model_dump_json())
    doc["cardinality"] = [*doc.get("cardinality", []),
                          {"edge": "WORKS_ON", "per": "source", "source_type": "person", "max_current": 1}]
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(doc))
    return str(path)


async def test_a_custom_single_valued_rule_replaces_the_old_fact(tmp_path, embedder):
    from loregraph.memory import Memory

    script = {"on apollo": rel("USER", "person", "WORKS_ON", "Apollo", "project", "The user works on Apollo"),
              "on zephyr": rel("USER", "person", "WORKS_ON", "Zephyr", "project", "The user works on Zephyr")}
    m = await Memory.open(tmp_path / "m.db", embedder=embedder, extractor=ScriptedExtractor(script),
                          schema=one_project_per_person_schema(tmp_path))
    try:
        await m.add_messages("p", [{"content": "on apollo", "role_type": "user", "timestamp": JAN}])
        (second,) = await m.add_messages("p", [{"content": "on zephyr", "role_type": "user", "timestamp": MAR}])
        assert [f.fact for f in second.invalidated] == ["The user works on Apollo"]
        assert [f.fact for f in await m.list_facts("p")] == ["The user works on Zephyr"]
        old = next(f for f in await m.list_facts("p", current=False) if "Apollo" in f.fact)
        assert old.invalid_at == MAR
    finally:
        await m.close()


async def test_rate_limits_count_across_the_messages_of_one_conversation(tmp_path, embedder):
    from loregraph.memory import Memory

    script = {f"m{i}": rel("USER", "person", "USES", f"Tool{i}", "tool", f"The user uses Tool{i}") for i in range(5)}
    m = await Memory.open(tmp_path / "m.db", embedder=embedder, extractor=ScriptedExtractor(script),
                          limits=RateLimits(entities_per_conversation=3, relationships_per_conversation=2))
    try:
        results = [(await m.add_messages("r", [{"content": f"m{i}", "role_type": "user"}], conversation_id="c1"))[0]
                   for i in range(5)]
        assert [len(r.facts) for r in results] == [1, 1, 0, 0, 0]
        assert results[2].rate_limited and results[4].rate_limited
        # another conversation has its own allowance
        (other,) = await m.add_messages("r", [{"content": "m4", "role_type": "user", "timestamp": JUN}],
                                        conversation_id="c2")
        assert len(other.facts) == 1 and not other.rate_limited
    finally:
        await m.close()


class ManualClock:
    """The pipeline's system time, moved by the test (no sleeps, no wall clock)."""

    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def at(self, seconds: float) -> datetime:
        self.now = T_LIMITS + timedelta(seconds=seconds)
        return self.now


T_LIMITS = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgres"])
def memory_url(request, tmp_path):
    return request.getfixturevalue("pg_db") if request.param == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"


async def test_burst_and_daily_limits_count_every_conversation_of_the_group_in_their_window(memory_url, embedder):
    """SC-003 "burst and daily limits": within any burst_seconds / 24 hours of system time, a group's conversations
    together create at most so many entities / relationships; beyond, new ones are skipped and named, reinforcing is
    not limited, other groups are not touched, and the allowance comes back as the window moves on."""
    from loregraph.memory import Memory

    script = {f"m{i}": rel("USER", "person", "USES", f"Tool{i}", "tool", f"The user uses Tool{i}") for i in range(8)}
    limits = RateLimits(entities_per_conversation=None, relationships_per_conversation=None, entities_per_burst=3,
                        relationships_per_burst=5, burst_seconds=60, entities_per_day=5, relationships_per_day=None)
    m = await Memory.open(memory_url, embedder=embedder, extractor=ScriptedExtractor(script), limits=limits)
    clock = ManualClock(T_LIMITS)
    m.pipeline.clock = clock

    async def say(seconds: float, content: str, conversation: str = "c1", group: str = "b"):
        (r,) = await m.add_messages(group, [{"content": content, "role_type": "user",
                                             "timestamp": clock.at(seconds)}], conversation_id=conversation)
        return r

    def made(r) -> list[str]:
        return sorted(e.name for e in r.entities if e.created_at == clock.now and not e.attributes.get("is_speaker"))

    try:
        first = await say(0, "m0")  # the speaker and Tool0: 2 of the 3 entities of the burst
        assert made(first) == ["Tool0"] and len(first.facts) == 1 and first.rate_limited == {}
        assert made(await say(10, "m1", "c2")) == ["Tool1"]  # another conversation of the group: same allowance
        full = await say(20, "m2", "c3")
        assert made(full) == [] and full.facts == []
        assert full.rate_limited == {"entities": 1} and full.rate_limit_reasons == {"entities": "entities_per_burst"}
        again = await say(30, "m0")  # reinforcing what exists is not limited
        assert again.rate_limited == {} and [f.fact for f in again.facts] == ["The user uses Tool0"]
        assert made(await say(30, "m2", group="other")) == ["Tool2"]  # another group has its own allowance
        # 61 s later the speaker and Tool0 are out of the window, Tool1 is not: room for two
        assert made(await say(61, "m2")) == ["Tool2"]
        assert made(await say(62, "m3")) == ["Tool3"]
        assert (await say(63, "m4")).rate_limit_reasons == {"entities": "entities_per_burst"}
        # the day: speaker, Tool0..Tool3 = 5 of 5, whatever the burst window says
        late = await say(600, "m4")
        assert made(late) == [] and late.rate_limit_reasons == {"entities": "entities_per_day"}
        assert (await say(86_399, "m4")).rate_limit_reasons == {"entities": "entities_per_day"}
        assert made(await say(86_400.5, "m4")) == ["Tool4"]  # just over a day after the speaker and Tool0
        names = sorted(e.name for e in await m.list_entities("b") if e.name.startswith("Tool"))
        assert names == ["Tool0", "Tool1", "Tool2", "Tool3", "Tool4"]
    finally:
        await m.close()


async def test_relationship_limits_name_the_limit_that_stopped_them(tmp_path, embedder):
    from loregraph.memory import Memory

    script = {f"n{i}": rel("USER", "person", "PREFERS", f"Lang{i}", "tool", f"The user prefers Lang{i}")
               for i in range(4)}
    limits = RateLimits(entities_per_conversation=None, relationships_per_conversation=3,
                        relationships_per_burst=2, relationships_per_day=None, entities_per_burst=None,
                        entities_per_day=None)
    m = await Memory.open(tmp_path / "r.db", embedder=embedder, extractor=ScriptedExtractor(script), limits=limits)
    clock = ManualClock(T_LIMITS)
    m.pipeline.clock = clock
    try:
        results = []
        for seconds, content in [(0, "n0"), (1, "n1"), (2, "n2"), (100, "n2"), (101, "n3")]:
            message = {"content": content, "role_type": "user", "timestamp": clock.at(seconds)}
            (r,) = await m.add_messages("q", [message], conversation_id="c")
            results.append((len(r.facts), r.rate_limit_reasons.get("relationships")))
        # the burst stops the third; a minute on, the conversation's own limit (3) stops the fifth
        assert results == [(1, None), (1, None), (0, "relationships_per_burst"), (1, None),
                           (0, "relationships_per_conversation")]
    finally:
        await m.close()


@pytest.mark.parametrize("setting,value", [("entities_per_burst", -1), ("relationships_per_day", 2.5),
                                           ("entities_per_conversation", True), ("burst_seconds", 0),
                                           ("burst_seconds", "60")])
def test_rate_limit_settings_are_checked_naming_the_setting(setting, value):
    with pytest.raises(ValueError, match=f"^{setting}: must be"):
        RateLimits(**{setting: value})


def test_rate_limit_settings_accept_their_edges():
    limits = RateLimits(entities_per_burst=0, relationships_per_day=0, burst_seconds=0.5)  # 0 = nothing new at all
    assert (limits.entities_per_burst, limits.relationships_per_day, limits.burst_seconds) == (0, 0, 0.5)
