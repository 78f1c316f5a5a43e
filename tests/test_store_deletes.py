"""Deleting one fact or one episode on both backends: exactly what it alone contributed goes, counted right; what
another episode still backs stays; nothing of another group is touched."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta, Mention
from loregraph.schema import Schema
from loregraph.store import open_store

SCHEMA = Schema.default()
T0 = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    url = request.getfixturevalue("pg_db") if request.param == "postgres" else f"sqlite:///{tmp_path / 'd.db'}"
    s = open_store(url)
    s.ensure_embedder("test-model", 8)
    yield s
    s.close()


def graph(group: str) -> tuple[GraphDelta, dict[str, object]]:
    """Episode one: facts shared (also backed by episode two), only1, only2; entity quiet is only mentioned there;
    entity echo is mentioned by both episodes and in no fact."""
    e1 = Episode(group_id=group, content="one", valid_at=T0)
    e2 = Episode(group_id=group, content="two", valid_at=T0 + timedelta(days=1))
    ents = {n: Entity(group_id=group, name=n, type="tool") for n in ("ada", "bob", "cy", "dee", "quiet", "echo")}
    x = {**ents, "e1": e1, "e2": e2}

    def fact(s: str, t: str, eps: list[Episode]) -> Fact:
        return Fact(group_id=group, source_id=ents[s].id, target_id=ents[t].id, type="USES", fact=f"{s} uses {t}",
                    episodes=[e.id for e in eps], valid_at=T0)

    x["shared"], x["only1"], x["only2"] = fact("ada", "bob", [e1, e2]), fact("cy", "dee", [e1]), fact("ada", "cy", [e1])
    e1 = e1.model_copy(update={"fact_ids": [x["shared"].id, x["only1"].id, x["only2"].id]})
    x["e1"] = e1
    mentions = [Mention(group_id=group, episode_id=e1.id, entity_id=ents[n].id) for n in ents] + [
        Mention(group_id=group, episode_id=e2.id, entity_id=ents[n].id) for n in ("ada", "bob", "echo")]
    return GraphDelta(group_id=group, episodes=[e1, e2], entities=list(ents.values()),
                      facts=[x["shared"], x["only1"], x["only2"]], mentions=mentions), x


def test_deleting_an_episode_removes_what_it_alone_backed(store):
    delta, x = graph("g")
    store.apply(delta, SCHEMA)
    other, _ = graph("other")
    store.apply(other, SCHEMA)
    before_other = store.count("other")
    assert store.delete_episode("g", x["e1"].id) == {"episodes": 1, "facts": 2, "entities": 3}
    left = sorted(e.name for e in store.list_entities("g"))
    assert left == ["ada", "bob", "echo"], left  # cy, dee (only in its facts) and quiet (only mentioned there) went
    (shared,) = store.get_facts("g", [x["shared"].id])
    assert shared.episodes == [x["e2"].id]
    assert store.get_facts("g", [x["only1"].id, x["only2"].id]) == []
    assert store.count("other") == before_other


def test_deleting_a_fact_unlinks_it_from_its_episodes_in_its_group_only(store):
    delta, x = graph("g")
    store.apply(delta, SCHEMA)
    other, y = graph("other")
    store.apply(other, SCHEMA)
    assert store.delete_fact("other", x["only1"].id) == 0  # another group's id: nothing
    assert store.delete_fact("g", "no-such-fact") == 0
    assert store.delete_fact("g", x["only1"].id) == 1
    assert store.get_facts("g", [x["only1"].id]) == []
    (e1,) = store.get_episodes("g", [x["e1"].id])
    assert e1.fact_ids == [x["shared"].id, x["only2"].id]
    assert store.delete_fact("g", x["only1"].id) == 0
    assert len(store.get_facts("other", [y["only1"].id])) == 1
    (theirs,) = store.get_episodes("other", [y["e1"].id])
    assert len(theirs.fact_ids) == 3
    assert store.delete_episode("g", x["e1"].id)["facts"] == 1  # only2; only1 is gone already
