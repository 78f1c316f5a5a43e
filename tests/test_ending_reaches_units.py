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
