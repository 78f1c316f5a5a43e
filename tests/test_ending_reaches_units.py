"""An ending of a membership reaches the memberships it covers (ingest/resolve.py): leaving an organisation ends
the member's place on its teams, on both backends. A scripted extractor says only what the local one would."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from loregraph.extract.base import SPEAKER, ExtractedEnding, ExtractedEntity, ExtractedRelation, Extraction
from loregraph.memory import Memory, Message
from scripted import ScriptedExtractor

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

SCRIPT = {
    "data team": lambda c: Extraction(
        entities=[ExtractedEntity("o", "Hartwell", "organization"), ExtractedEntity("t", "data team", "organization"),
                  ExtractedEntity("q", "Quarry Labs", "organization"),
                  ExtractedEntity("r", "reading club", "organization")],
        relations=[ExtractedRelation("t", "PART_OF", "o", "data team is part of Hartwell"),
                   ExtractedRelation(SPEAKER, "PART_OF", "t", "User is part of data team"),
                   ExtractedRelation("r", "PART_OF", "q", "reading club is part of Quarry Labs"),
                   ExtractedRelation(SPEAKER, "PART_OF", "r", "User is part of reading club")]),
    "left": lambda c: Extraction(entities=[ExtractedEntity("o", "Hartwell", "organization")],
                                 endings=[ExtractedEnding(source=SPEAKER, type="PART_OF", target="o")]),
}


async def test_leaving_an_organisation_ends_the_place_on_its_team(db_url) -> None:
    async with await Memory.open(db_url, extractor=ScriptedExtractor(SCRIPT)) as m:
        await m.add_messages("g1", [Message(content="I'm on Hartwell's data team", role_type="user", timestamp=T0)])
        (b,) = await m.add_messages("g1", [Message(content="I left Hartwell", role_type="user",
                                                    timestamp=T0 + timedelta(days=9))])
        assert [f.fact for f in b.invalidated] == ["User is part of data team"], b.counts
        current = sorted(f.fact for f in await m.list_facts("g1"))
        # the team stays part of its organisation; another organisation's team keeps its member
        assert current == ["User is part of reading club", "data team is part of Hartwell",
                           "reading club is part of Quarry Labs"]
        # another group's graph is never read or touched
        assert await m.list_facts("g2") == []


WORK_SCRIPT = {
    "at Northwind": lambda c: Extraction(
        entities=[ExtractedEntity("o", "Northwind", "organization"), ExtractedEntity("p", "Orion", "project"),
                  ExtractedEntity("a", "Atlas", "project")],
        relations=[ExtractedRelation(SPEAKER, "PART_OF", "o", "User is part of Northwind"),
                   ExtractedRelation(SPEAKER, "WORKS_ON", "p", "User works on Orion"),
                   ExtractedRelation("a", "PART_OF", "o", "Atlas is part of Northwind")]),
    "Ravi works": lambda c: Extraction(
        entities=[ExtractedEntity("r", "Ravi", "person"), ExtractedEntity("p", "Orion", "project"),
                  ExtractedEntity("a", "Atlas", "project"), ExtractedEntity("l", "Lantern", "project"),
                  ExtractedEntity("o", "Northwind", "organization")],
        relations=[ExtractedRelation("r", "PART_OF", "o", "Ravi is part of Northwind"),
                   ExtractedRelation("r", "WORKS_ON", "p", "Ravi works on Orion"),
                   ExtractedRelation("r", "WORKS_ON", "a", "Ravi works on Atlas"),
                   ExtractedRelation("r", "WORKS_ON", "l", "Ravi works on Lantern")]),
    "Ravi left": lambda c: Extraction(
        entities=[ExtractedEntity("r", "Ravi", "person"), ExtractedEntity("o", "Northwind", "organization")],
        endings=[ExtractedEnding(source="r", type="PART_OF", target="o")]),
}


async def test_leaving_an_organisation_ends_work_on_its_projects(db_url) -> None:
    """The organisation's projects: one part of it, one the speaker (still a member) works on; a side project
    of the leaver's own stays."""
    async with await Memory.open(db_url, extractor=ScriptedExtractor(WORK_SCRIPT)) as m:
        for i, text in enumerate(["I'm at Northwind and work on Orion", "Ravi works on Orion, Atlas and Lantern",
                                  "Ravi left Northwind"]):
            (last,) = await m.add_messages("g1", [Message(content=text, role_type="user",
                                                          timestamp=T0 + timedelta(days=i))])
        assert sorted(f.fact for f in last.invalidated) == ["Ravi is part of Northwind", "Ravi works on Atlas",
                                                           "Ravi works on Orion"]
        current = {f.fact for f in await m.list_facts("g1")}
        assert {"Ravi works on Lantern", "User works on Orion", "User is part of Northwind"} <= current
        assert await m.list_facts("g2") == []


USE_SCRIPT = {
    "depend": lambda c: Extraction(
        entities=[ExtractedEntity("s", "Stripe", "tool"), ExtractedEntity("h", "Hollow Mill", "organization")],
        relations=[ExtractedRelation(SPEAKER, "DEPENDS_ON", "s", "User depends on Stripe"),
                   ExtractedRelation(SPEAKER, "DEPENDS_ON", "h", "User depends on Hollow Mill")]),
    "stopped": lambda c: Extraction(entities=[ExtractedEntity("s", "Stripe", "tool")],
                                    endings=[ExtractedEnding(source=SPEAKER, type="USES", target="s")]),
}


async def test_an_ended_use_ends_a_dependence_on_the_same_thing(db_url) -> None:
    """"We stopped using Stripe" ends "User depends on Stripe"; a dependence on another thing stays."""
    async with await Memory.open(db_url, extractor=ScriptedExtractor(USE_SCRIPT)) as m:
        await m.add_messages("g1", [Message(content="we depend on both", role_type="user", timestamp=T0)])
        (b,) = await m.add_messages("g1", [Message(content="we stopped using it", role_type="user",
                                                    timestamp=T0 + timedelta(days=3))])
        assert [f.fact for f in b.invalidated] == ["User depends on Stripe"], b.counts
        assert [f.fact for f in await m.list_facts("g1")] == ["User depends on Hollow Mill"]
        assert await m.list_facts("g2") == []
