"""A pet named in one turn is still a pet when a later turn names it without a cue, and a name first stored as a
person becomes a pet when a turn calls it one (issue 21), on both backends, with the real extractor. Sentences
written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from loregraph.memory import Memory, Message

T0 = datetime(2024, 4, 2, 9, 0, tzinfo=UTC)


async def _say(m: Memory, texts: list[str]) -> None:
    for k, text in enumerate(texts):
        msg = Message(content=text, role_type="user", role="Ines", name=f"t{k}", timestamp=T0 + timedelta(hours=k))
        await m.add_messages("g", [msg], conversation_id="g:c1")


async def _by_name(m: Memory, name: str) -> list:
    return [e for e in await m.list_entities("g") if e.name == name]


async def test_a_pet_named_before_stays_a_pet(db_url, embedder) -> None:
    m = await Memory.open(db_url, embedder=embedder)
    try:
        await _say(m, ["We adopted a beagle puppy, our dog Waffles is so tiny!",
                       "Waffles and I walked to the lake this morning, it was lovely."])
        (waffles,) = await _by_name(m, "Waffles")
        assert waffles.type == "entity" and waffles.attributes.get("kind") == "pet"
        facts = await m.list_facts("g")
        assert not any(f.type in ("KNOWS", "WORKS_WITH") and waffles.id in (f.source_id, f.target_id)
                       for f in facts)
    finally:
        await m.close()


async def test_a_name_stored_as_a_person_becomes_a_pet_when_called_one(db_url, embedder) -> None:
    m = await Memory.open(db_url, embedder=embedder)
    try:
        await _say(m, ["Pickle and I went for a long walk by the river, he just loves splashing around.",
                       "My dog Pickle turned three today, we got him a squeaky toy."])
        (pickle,) = await _by_name(m, "Pickle")
        assert pickle.type == "entity" and pickle.attributes.get("kind") == "pet"
    finally:
        await m.close()


async def test_a_person_stays_a_person(db_url, embedder) -> None:
    m = await Memory.open(db_url, embedder=embedder)
    try:
        await _say(m, ["My sister Odalys moved to town last month.",
                       "Odalys and I went hiking with my dog Pretzel yesterday."])
        (odalys,) = await _by_name(m, "Odalys")
        assert odalys.type == "person"
    finally:
        await m.close()


async def test_a_pet_the_speaker_got_is_theirs_from_that_day_and_no_one_elses(db_url, embedder) -> None:
    m = await Memory.open(db_url, embedder=embedder)
    try:
        await _say(m, ["Guess what, I got a puppy three days ago! Her name's Biscuit and she chews everything.",
                       "My neighbour's cat Juniper keeps visiting our garden."])
        (biscuit,) = await _by_name(m, "Biscuit")
        facts = await m.list_facts("g")
        (owned,) = [f for f in facts if f.target_id == biscuit.id]
        assert owned.type == "RELATED_TO" and owned.attributes.get("context") == "pet"
        assert owned.valid_at == T0 - timedelta(days=3)
        juniper = await _by_name(m, "Juniper")
        assert not any(f.target_id in {j.id for j in juniper} for f in facts)  # the neighbour's, not the speaker's
    finally:
        await m.close()

