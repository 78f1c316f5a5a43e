"""Spec 000 step 28 (communities, when asked for): each connected group of entities is one community, found
through facts in either direction, named after its most-mentioned member, kept (same id) when updated.
Real SQLite file; the scripted extractor decides what a message contains."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from loregraph.extract.base import ExtractedEntity, ExtractedRelation, Extraction
from scripted import ScriptedExtractor

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
# A -> B -> C <- D: one component only when facts are followed both ways; E -> F another; G alone
FIRST = Extraction(
    entities=[ExtractedEntity("a", "Alder", "tool"), ExtractedEntity("b", "Birch", "project"),
              ExtractedEntity("c", "Cedar", "tool"), ExtractedEntity("d", "Dogwood", "tool"),
              ExtractedEntity("e", "Elm", "project"), ExtractedEntity("f", "Fir", "tool"),
              ExtractedEntity("g", "Ginkgo", "concept")],
    relations=[ExtractedRelation("a", "USES", "b", "Alder uses Birch"),
               ExtractedRelation("b", "USES", "c", "Birch uses Cedar"),
               ExtractedRelation("d", "DEPENDS_ON", "c", "Dogwood depends on Cedar"),
               ExtractedRelation("e", "USES", "f", "Elm uses Fir")])
AGAIN = Extraction(entities=[ExtractedEntity("c", "Cedar", "tool"), ExtractedEntity("h", "Hazel", "tool")],
                   relations=[ExtractedRelation("h", "DEPENDS_ON", "c", "Hazel depends on Cedar")])


async def test_components_follow_facts_both_ways_and_keep_their_id(open_memory):
    m = await open_memory(extractor=ScriptedExtractor({"first": lambda c: FIRST, "again": lambda c: AGAIN}))
    (res,) = await m.add_messages("g", [{"content": "first", "role_type": "user", "timestamp": T0}],
                                  update_communities=True)
    ids = {e.name: e.id for e in res.entities}
    got = {frozenset(c.member_ids): c for c in res.communities}
    big = frozenset(ids[n] for n in ("Alder", "Birch", "Cedar", "Dogwood"))
    small = frozenset(ids[n] for n in ("Elm", "Fir"))
    assert set(got) == {big, small}  # Ginkgo, alone, is no community
    assert got[big].summary == "4 connected entities" and got[small].summary == "2 connected entities"
    assert all(c.group_id == "g" for c in res.communities)
    assert got[big].member_ids == sorted(big)
    # the lead is the most-mentioned member (ties: the largest id)
    tie = max(big)
    assert got[big].name == f"{next(n for n, i in ids.items() if i == tie)} and related"

    (again,) = await m.add_messages("g", [{"content": "again", "role_type": "user",
                                           "timestamp": T0 + timedelta(days=1)}], update_communities=True)
    (grown,) = again.communities
    hazel = next(e.id for e in again.entities if e.name == "Hazel")
    assert grown.id == got[big].id  # updated, not a new community
    assert set(grown.member_ids) == big | {hazel} and grown.summary == "5 connected entities"
    assert grown.name == "Cedar and related"  # mentioned twice now
    stored = m.store.conn.execute("SELECT COUNT(*) FROM communities WHERE group_id = 'g'").fetchone()[0]
    assert stored == 2
