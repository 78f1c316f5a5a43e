"""Ranking with fixed expected orders (issue 23): a query that matches only by keyword, only by meaning, or by both,
and MMR choosing the diverse fact over a near-duplicate. Each case fails if one term of the fused score is dropped
or inverted, or if MMR sees only the top of the list."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scripted import ScriptedExtractor
from test_search import rel

T0 = datetime(2025, 1, 1, tzinfo=UTC)

FACTS = {
    # keyword-only: the rare word "zettelkasten" names nothing the model knows well
    "m1": rel("USER", "person", "USES", "Zettelkasten", "tool", "The user keeps notes in a zettelkasten"),
    # meaning-only targets: no word in common with the query "automobile commute"
    "m2": rel("USER", "person", "USES", "Car", "tool", "The user drives a car to the office every day"),
    "m3": rel("USER", "person", "PREFERS", "Pasta", "concept", "The user cooks pasta on weekends"),
    "m4": rel("USER", "person", "USES", "Chess", "concept", "The user plays chess online at night"),
    # MMR: two near-duplicates and one related but different fact
    "m5": rel("Orion", "project", "USES", "PostgreSQL", "tool", "Orion stores its data in PostgreSQL"),
    "m6": rel("Orion", "project", "DEPENDS_ON", "PostgreSQL", "tool", "Orion keeps its data in PostgreSQL"),
    "m7": rel("Orion", "project", "USES", "Backups", "tool", "Orion data is backed up nightly to object storage"),
}


@pytest.fixture
async def mem(open_memory):
    m = await open_memory(extractor=ScriptedExtractor(FACTS))
    for i, key in enumerate(FACTS):
        await m.add_messages("r", [{"content": key, "role_type": "user", "timestamp": T0 + timedelta(days=i)}])
    return m


async def test_keyword_only_match_comes_first(mem):
    res = await mem.search("zettelkasten", "r", include=["facts"], limit=4)
    assert res.facts[0].fact.fact == "The user keeps notes in a zettelkasten"


async def test_meaning_only_matches_come_in_order_of_meaning(mem):
    res = await mem.search("automobile commute", "r", include=["facts"], limit=10, bfs_depth=0)
    order = [f.fact.fact for f in res.facts]
    car, pasta, chess = ("The user drives a car to the office every day", "The user cooks pasta on weekends",
                         "The user plays chess online at night")
    assert order[0] == car
    assert order.index(car) < order.index(pasta) and order.index(car) < order.index(chess)


async def test_keyword_and_meaning_beat_keyword_alone(mem):
    # "data" appears in three Orion facts; "storage" + the meaning of persisting data favours the storage facts
    res = await mem.search("where Orion stores its data", "r", include=["facts"], limit=10, bfs_depth=0)
    order = [f.fact.fact for f in res.facts]
    assert set(order[:2]) == {"Orion stores its data in PostgreSQL", "Orion keeps its data in PostgreSQL"}
    assert [f.score for f in res.facts] == sorted((f.score for f in res.facts), reverse=True)


async def test_mmr_picks_the_diverse_fact_over_a_near_duplicate(mem):
    q = "where Orion stores its data"
    plain = [f.fact.fact for f in (await mem.search(q, "r", include=["facts"], limit=2, bfs_depth=0)).facts]
    assert set(plain) == {"Orion stores its data in PostgreSQL", "Orion keeps its data in PostgreSQL"}
    diverse = [f.fact.fact for f in
               (await mem.search(q, "r", include=["facts"], limit=2, bfs_depth=0, mmr=0.6)).facts]
    assert len(diverse) == 2 and diverse[0] in plain
    assert "Orion data is backed up nightly to object storage" in diverse
