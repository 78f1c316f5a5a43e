"""Everyday memberships across turns (issue 21): joining a club, a gym or a new employer ends no church, choir
or support group one already belongs to, on both backends, with the real extractor. Sentences written for these
tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from loregraph.memory import Memory, Message

T0 = datetime(2024, 4, 2, 9, 0, tzinfo=UTC)


async def _say(m: Memory, texts: list[str]) -> None:
    for k, text in enumerate(texts):
        msg = Message(content=text, role_type="user", role="Ines", name=f"t{k}", timestamp=T0 + timedelta(hours=k))
        await m.add_messages("g", [msg], conversation_id="g:c1")


async def test_joining_a_club_or_a_new_employer_ends_no_church_or_support_group(db_url, embedder) -> None:
    m = await Memory.open(db_url, embedder=embedder)
    try:
        await _say(m, ["Just yesterday I joined a nearby choir, the harmonies are lovely.",
                       "I'm also in a support group for new parents that meets on Sundays.",
                       "Big news: I joined a climbing gym last week!",
                       "And I finally joined Halden Bank as an analyst."])
        facts = await m.list_facts("g")
        names = {e.id: e.name for e in await m.list_entities("g")}
        current = {names[f.target_id] for f in facts if f.type == "PART_OF" and f.invalid_at is None}
        assert {"choir", "climbing gym", "Halden Bank"} <= current
        assert not any(f.type == "PART_OF" and f.invalid_at is not None for f in facts)
    finally:
        await m.close()
