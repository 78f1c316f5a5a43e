"""Everyday chat (issue 21) with the real spaCy model: small talk leaves no junk entities, tastes and
personal projects are facts, people addressed by name are known, time words set ``valid_at``, and the
speaker is one node. Every sentence here was written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from extraction_support import rels
from loregraph.extract.base import SPEAKER, CandidateEntity, Extraction, ExtractionContext, PreviousEpisode
from loregraph.extract.local import LocalExtractor

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)  # a Wednesday


def ctx(role: str | None = "Rosa", **kw) -> ExtractionContext:
    return ExtractionContext(group_id="g", reference_time=NOW, role_type="user", role=role, **kw)


def ents(x: Extraction) -> dict[str, str]:
    return {e.name: e.type for e in x.entities}


# ---- small talk is not a name ------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Woohoo! Big news today, I got the part.",
    "Gotcha. Sooo excited for the weekend!",
    "Awesome, glad it worked out. Nah, no plans yet.",
    "Yup, that's exactly what I meant. Kudos on the promotion!",
])
def test_interjections_at_a_turn_start_are_not_entities(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    assert ents(x) == {}
    assert x.relations == []


def test_a_frequent_word_capitalised_by_its_position_is_not_a_name(ex: LocalExtractor) -> None:
    x = ex.extract("Dance is basically my therapy these days. Gardening is my happy place.", ctx())
    assert "Dance" not in ents(x) and "Gardening" not in ents(x)


def test_a_rare_name_at_a_sentence_start_is_still_a_name(ex: LocalExtractor) -> None:
    x = ex.extract("Zofia took over the budget review yesterday.", ctx())
    assert ents(x).get("Zofia") == "person"


# ---- date phrases ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Last Sun I baked bread with my niece.",
    "This past Tues we drove up the coast.",
])
def test_date_phrases_are_not_entities(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    assert not any(w in name for name in ents(x) for w in ("Sun", "Tues", "Last", "This"))


# ---- places, works, pets -----------------------------------------------------------------------


def test_places_are_left_out(ex: LocalExtractor) -> None:
    x = ex.extract("I was in Madrid for a week and loved it.", ctx())
    assert "Madrid" not in ents(x) and x.relations == []
    x = ex.extract("Two years ago I spent a month in Portugal and loved it.", ctx())
    assert "Portugal" not in ents(x)
    x = ex.extract("We had dinner at Rosie's diner and then walked around Cedar Lake Park.", ctx())
    assert "Cedar Lake Park" not in ents(x)
    assert not any(t == "PART_OF" for _, t, _ in rels(x))


def test_a_quoted_title_is_a_work_and_a_taste(ex: LocalExtractor) -> None:
    x = ex.extract('My sister and I adore "Pride and Prejudice" - we reread it every winter.', ctx())
    assert ents(x).get("Pride and Prejudice", ents(x).get("Pride")) == "entity"
    work = next(e for e in x.entities if e.name.startswith("Pride"))
    assert work.attributes.get("kind") == "work"


def test_a_quoted_title_of_ones_own_work_is_a_project(ex: LocalExtractor) -> None:
    x = ex.extract("my thesis is 'Tidal Voices', on dialect change in coastal towns.", ctx())
    assert ents(x).get("Tidal Voices") == "project"
    assert ("ME", "WORKS_ON", "Tidal Voices") in rels(x)


def test_pets_are_not_people(ex: LocalExtractor) -> None:
    x = ex.extract("Our kitten Biscuit knocked over my coffee again.", ctx())
    assert ents(x).get("Biscuit") == "entity"
    pet = next(e for e in x.entities if e.name == "Biscuit")
    assert pet.attributes.get("kind") == "pet"
    assert not any("Biscuit" in (s, o) and t in ("KNOWS", "WORKS_WITH") for s, t, o in rels(x))


# ---- people addressed by name -------------------------------------------------------------------


@pytest.mark.parametrize("text,name", [
    ("Hi Corinne, how did the audition go?", "Corinne"),
    ("Thanks so much, Bertie! You made my day.", "Bertie"),
    ("That sounds lovely, Anouk.", "Anouk"),
])
def test_a_person_addressed_by_name_is_known(ex: LocalExtractor, text: str, name: str) -> None:
    x = ex.extract(text, ctx())
    assert ents(x).get(name) == "person"
    assert ("ME", "KNOWS", name) in rels(x)
    assert ("ME", "WORKS_WITH", name) not in rels(x)


def test_an_appositive_name_is_not_addressed(ex: LocalExtractor) -> None:
    x = ex.extract("He quit to open his own bakery, Crumb Theory.", ctx())
    assert ("ME", "KNOWS", "Crumb Theory") not in rels(x)


# ---- PART_OF only from membership --------------------------------------------------------------


def test_part_of_needs_a_membership_construction(ex: LocalExtractor) -> None:
    assert not any(t == "PART_OF" for _, t, _ in rels(ex.extract(
        "I'm thankful for my caring neighbours.", ctx())))
    assert not any(t == "PART_OF" for _, t, _ in rels(ex.extract(
        "Yesterday I went to a Brightwater Book Club meeting for the first time.", ctx())))
    assert ("ME", "PART_OF", "Harbourside Rowing Club") in rels(ex.extract(
        "I'm a member of the Harbourside Rowing Club.", ctx()))
    assert ("ME", "PART_OF", "Larchmont Singers") in rels(ex.extract(
        "Last month I joined the Larchmont Singers.", ctx()))


# ---- tastes and hobbies ------------------------------------------------------------------------


@pytest.mark.parametrize("text,thing", [
    ("These days I'm all about board games.", "board games"),
    ("I've been getting into birdwatching lately.", "birdwatching"),
    ("Honestly I'm really into bouldering.", "bouldering"),
    ("I've always been interested in deep sea creatures.", "deep sea creatures"),
])
def test_interests_are_preferences_of_concepts(ex: LocalExtractor, text: str, thing: str) -> None:
    x = ex.extract(text, ctx())
    assert ents(x).get(thing) == "concept"
    assert ("ME", "PREFERS", thing) in rels(x)
    assert ("ME", "USES", thing) not in rels(x)


def test_the_listeners_taste_is_not_the_speakers(ex: LocalExtractor) -> None:
    x = ex.extract("I'm glad the photo reminded you of your love for sailing.", ctx())
    assert not any(t == "PREFERS" for _, t, _ in rels(x))
    assert ("ME", "PREFERS", "sailing") in rels(ex.extract("I have a real passion for sailing.", ctx()))


def test_an_accident_one_got_into_is_no_taste(ex: LocalExtractor) -> None:
    x = ex.extract("We got into a fender bender on the way home.", ctx())
    assert not any(t == "PREFERS" for _, t, _ in rels(x))


# ---- personal projects end when finished -------------------------------------------------------


def test_a_personal_project_is_works_on(ex: LocalExtractor) -> None:
    x = ex.extract("I'm knitting a scarf for my dad, and I'm working on my memoir at night.", ctx())
    assert ("ME", "WORKS_ON", "memoir") in rels(x)


def test_a_finished_project_ends_when_it_was_finished(ex: LocalExtractor) -> None:
    x = ex.extract("Three days ago I finally finished my quilt!", ctx())
    rel = next(r for r in x.relations if r.type == "WORKS_ON")
    assert rel.invalid_at is not None and rel.invalid_at.date() == datetime(2024, 6, 9).date()
    assert any(e.type == "WORKS_ON" and e.reason == "finished" for e in x.endings)


def test_a_later_done_remark_keeps_the_day_it_was_finished(ex: LocalExtractor) -> None:
    """"finished X last Friday ... so good to have it done": the remark confirms the end, it does not move it to
    the message time."""
    x = ex.extract("Phew! I completed my debut album and uploaded it last Friday. Took forever, so nice to have "
                   "it all done!", ctx())
    rel = next(r for r in x.relations if r.type == "WORKS_ON")
    assert rel.invalid_at is not None and rel.invalid_at.date() == datetime(2024, 6, 7).date()
    assert rel.valid_at is not None and rel.valid_at <= rel.invalid_at


def test_it_is_done_now_ends_the_project_named_before(ex: LocalExtractor) -> None:
    x = ex.extract("I built a treehouse project with my kids - took ages, but it's done now.", ctx())
    assert any(r.type == "WORKS_ON" and r.invalid_at is not None for r in x.relations)


# ---- lexicon needs cased evidence; names kept whole ---------------------------------------------


def test_a_common_word_is_not_a_product(ex: LocalExtractor) -> None:
    x = ex.extract("We want a safe neighbourhood for the kids. I ran a 10K on Sunday.", ctx())
    assert "SAFe" not in ents(x) and "K" not in ents(x)


# ---- time words --------------------------------------------------------------------------------


@pytest.mark.parametrize("phrase,expected", [
    ("yesterday", datetime(2024, 6, 11)),
    ("last Friday", datetime(2024, 6, 7)),
    ("two weeks ago", datetime(2024, 5, 29)),
    ("in May", datetime(2024, 5, 1)),
    ("next month", datetime(2024, 7, 12)),
    ("last weekend", datetime(2024, 6, 8)),
    ("a few days ago", datetime(2024, 6, 9)),
])
def test_time_words_resolve_against_the_message_time(phrase: str, expected: datetime) -> None:
    from loregraph.extract.local.when import resolve_phrase

    got = resolve_phrase(phrase, NOW, future=phrase.startswith("next"))
    assert got is not None and got.date() == expected.date()


def test_habits_are_not_dates() -> None:
    from loregraph.extract.local.when import find_time_words

    assert find_time_words("We play chess every Friday.", NOW) == []


def test_a_fact_takes_the_time_its_clause_names(ex: LocalExtractor) -> None:
    x = ex.extract("Last Friday I joined the Millbrook Hiking Club.", ctx())
    rel = next(r for r in x.relations if r.type == "PART_OF")
    assert rel.valid_at is not None and rel.valid_at.date() == datetime(2024, 6, 7).date()
    assert rel.attributes == {"time_phrase": "Last Friday"}
    x = ex.extract("I joined the Millbrook Hiking Club.", ctx())
    assert next(r for r in x.relations if r.type == "PART_OF").valid_at is None  # the message time, downstream


async def test_valid_at_and_the_phrase_reach_the_store(tmp_path, embedder) -> None:
    from loregraph.memory import Memory, Message

    m = await Memory.open(tmp_path / "m.db", embedder=embedder)
    try:
        msg = Message(content="Two weeks ago I joined the Quarry Street Choir.", role_type="user", role="Rosa",
                      timestamp=NOW)
        (res,) = await m.add_messages("g", [msg])
        fact = next(f for f in res.facts if f.type == "PART_OF")
        assert fact.valid_at is not None and fact.valid_at.date() == datetime(2024, 5, 29).date()
        assert fact.attributes.get("time_phrase") == "Two weeks ago"
        stored = (await m.list_facts("g"))
        assert any(f.id == fact.id and f.valid_at == fact.valid_at for f in stored)
    finally:
        await m.close()


async def test_a_switch_with_a_time_word_ends_the_old_fact_when_the_new_one_begins(tmp_path, embedder) -> None:
    """"We moved X from A to B last week": A ends when B begins (last week), not at the message time; as of a day
    in between only B holds."""
    from datetime import timedelta

    from loregraph.memory import Memory, Message

    m = await Memory.open(tmp_path / "m.db", embedder=embedder)
    try:
        first = Message(content="Our billing service Ledgerly runs on MySQL.", role_type="user",
                        role="Rosa", timestamp=NOW - timedelta(days=60))
        later = Message(content="We moved Ledgerly from MySQL to PostgreSQL last week.", role_type="user",
                        role="Rosa", timestamp=NOW)
        await m.add_messages("g", [first, later])
        facts = await m.list_facts("g", current=False)
        old = next(f for f in facts if f.fact == "Ledgerly uses MySQL")
        new = next(f for f in facts if f.fact == "Ledgerly uses PostgreSQL")
        assert new.valid_at is not None and new.valid_at.date() == (NOW - timedelta(days=7)).date()
        assert old.invalid_at == new.valid_at
    finally:
        await m.close()


# ---- the speaker is one node -------------------------------------------------------------------


async def test_a_nickname_and_the_speakers_name_are_one_node(tmp_path, embedder) -> None:
    from loregraph.memory import Memory, Message

    m = await Memory.open(tmp_path / "m.db", embedder=embedder)
    try:
        turns = [("Odile", "Hey Marguerite! How was the trip?"),
                 ("Marguerite", "Hi Odile! It was great. I'm a member of the Fernhill Cycling Club now."),
                 ("Odile", "Thanks, Marg! I'm so happy for you.")]
        for n, (who, text) in enumerate(turns):
            msg = Message(content=text, role_type="user", role=who, name=f"t{n}", timestamp=NOW)
            await m.add_messages("g", [msg])
        people = [e for e in await m.list_entities("g") if e.type == "person"]
        names = sorted(e.name for e in people)
        assert names == ["Marguerite", "Odile"], names
        marguerite = next(e for e in people if e.name == "Marguerite")
        assert marguerite.attributes.get("is_speaker") and "Marg" in marguerite.aliases
    finally:
        await m.close()


# ==== precision first: what a friend says about the listener, other people, their childhood, or in passing
# is not a current fact about the speaker (the precision gate, extract/local/precision.py) =================


def speaker_objects(x: Extraction) -> set[str]:
    return {o for s, _, o in rels(x) if s == "ME"}


# ---- the listener's (or someone else's) tastes are not the speaker's ---------------------------
# The thing is offered as an entity named earlier in the chat (as the pipeline does), so it is a mention.


def known(*names: str) -> list[CandidateEntity]:
    return [CandidateEntity(id=f"c{i}", name=n, type="concept") for i, n in enumerate(names)]


@pytest.mark.parametrize(("text", "thing"), [
    ("I love your lasagna so much! I wish I could make it the way you do!", "lasagna"),
    ("So happy you followed your dreams. Seeing you work on canoes is inspiring.", "canoes"),
    ("So glad the photo reminded you of your love for sailing.", "sailing"),
    ("It's inspiring to meet people who are passionate about birdwatching.", "birdwatching"),
])
def test_a_taste_owned_by_the_listener_or_others_is_not_the_speakers(ex: LocalExtractor, text: str,
                                                                     thing: str) -> None:
    x = ex.extract(text, ctx(candidates=known(thing)))
    assert thing not in speaker_objects(x), rels(x)


def test_advice_to_the_listener_is_not_the_speakers_practice(ex: LocalExtractor) -> None:
    x = ex.extract("I'd recommend practicing box breathing before bed.", ctx())
    assert "box breathing" not in speaker_objects(x), rels(x)


def test_the_speakers_own_taste_stays(ex: LocalExtractor) -> None:
    x = ex.extract("I love lasagna so much, I make it every week!", ctx(candidates=known("lasagna")))
    assert ("ME", "PREFERS", "lasagna") in rels(x)


# ---- the past is not now -------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "thing"), [
    ("This photo is from when we were 12 and we were really into rollerblading.", "rollerblading"),
    ("When I was 10, I was really into rollerblading.", "rollerblading"),
    ("As a kid I was obsessed with origami.", "origami"),
])
def test_an_interest_of_childhood_is_not_current(ex: LocalExtractor, text: str, thing: str) -> None:
    x = ex.extract(text, ctx(candidates=known(thing)))
    assert not {r for r in rels(x) if r[0] == "ME" and r[1] in ("PREFERS", "USES")}, rels(x)


def test_an_interest_now_stays(ex: LocalExtractor) -> None:
    x = ex.extract("These days I'm really into rollerblading.", ctx(candidates=known("rollerblading")))
    assert ("ME", "PREFERS", "rollerblading") in rels(x)


# ---- a subject must name something --------------------------------------------------------------


@pytest.mark.parametrize(("text", "things"), [
    ("Thanks, Ola! Baking really helps with stress. Keeps me calm.", ("baking", "stress")),
    ("Cool, Ola! Jazz has had a huge effect on hip hop.", ("jazz", "hip hop")),
])
def test_an_idea_is_no_subject(ex: LocalExtractor, text: str, things: tuple[str, ...]) -> None:
    x = ex.extract(text, ctx(candidates=known(*things)))
    assert not {r for r in rels(x) if r[0] != "ME"}, rels(x)


def test_an_everyday_word_opening_a_sentence_is_no_subject(ex: LocalExtractor) -> None:
    cands = [CandidateEntity(id="s0", name="store", type="project"), *known("fashion trends")]
    x = ex.extract("Thanks! Store's going good, just been keeping up with fashion trends.", ctx(candidates=cands))
    assert not {r for r in rels(x) if r[0] != "ME"}, rels(x)


# ---- things met once are not practices --------------------------------------------------------


@pytest.mark.parametrize("text", [
    "We followed the strict hygiene protocols at the venue.",
    "We're checking out a new trail with a huge waterfall this weekend.",
])
def test_a_thing_met_once_is_not_used(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    assert not {r for r in rels(x) if r[1] == "USES"}, rels(x)


def test_a_name_that_only_qualifies_a_noun_is_not_the_taste(ex: LocalExtractor) -> None:
    x = ex.extract("Oh wow, I love the Lisbon vibe in these shots!", ctx())
    assert "Lisbon" not in speaker_objects(x), rels(x)


# ---- company is not work; thinking of is not doing ---------------------------------------------


def test_sitting_together_is_not_working_together(ex: LocalExtractor) -> None:
    x = ex.extract("Yesterday Priya and I were sitting by the lake, watching the ducks.", ctx())
    assert ("ME", "WORKS_WITH", "Priya") not in rels(x), rels(x)


def test_doing_work_together_still_is(ex: LocalExtractor) -> None:
    x = ex.extract("Priya and I do budget reviews every Monday.", ctx())
    assert ("ME", "WORKS_WITH", "Priya") in rels(x), rels(x)


def test_thinking_of_joining_is_not_membership(ex: LocalExtractor) -> None:
    x = ex.extract("I'm thinking of joining a new chess team after the tournament.", ctx())
    assert not {r for r in rels(x) if r[1] == "PART_OF"}, rels(x)


def test_a_generic_group_named_before_has_no_short_form(ex: LocalExtractor) -> None:
    """ "a supportive group" said earlier does not make every later "supportive" that group."""
    cand = CandidateEntity(id="e1", name="supportive group", type="organization")
    x = ex.extract("I'm also grateful for my supportive friends.", ctx(candidates=[cand]))
    assert all(e.existing_id != "e1" for e in x.entities), [(e.name, e.existing_id) for e in x.entities]
    assert not {r for r in rels(x) if r[1] == "PART_OF"}, rels(x)


def test_a_named_project_keeps_its_short_form(ex: LocalExtractor) -> None:
    cand = CandidateEntity(id="e1", name="Fernhill project", type="project")
    x = ex.extract("Fernhill is finally moving again.", ctx(candidates=[cand]))
    assert any(e.existing_id == "e1" for e in x.entities), [(e.name, e.existing_id) for e in x.entities]


# ---- pieces of names, generic nouns -------------------------------------------------------------


@pytest.mark.parametrize(("text", "cands"), [
    ("We put together a tournament for our favorite game, CS:GO. Lots showed up!", ()),
    ("I started making music to follow my dreams, and I'm stoked about how far I've come.", ("dreams",)),
    ("That sounds awesome! I'm into the rush of fast boats.", ("rush",)),
    ("I like to create my own serene yoga space with candles and oils.", ("space",)),
])
def test_a_piece_of_a_name_or_a_generic_noun_is_no_object(ex: LocalExtractor, text: str,
                                                          cands: tuple[str, ...]) -> None:
    x = ex.extract(text, ctx(candidates=known(*cands)))
    assert not {r for r in rels(x) if r[0] == "ME" and r[1] != "KNOWS" and r[2] != "CS:GO"}, rels(x)


# ---- an everyday word is not a person on the name finder's word alone ---------------------------


@pytest.mark.parametrize(("text", "word"), [
    ("Me too! Guitar is my favorite thing these days.", "Guitar"),
    ("Thanks! Store's going good, just been busy with orders.", "Store"),
    ("Sushi is the best food, I could eat it every day.", "Sushi"),
])
def test_an_everyday_word_is_not_a_person(ex: LocalExtractor, text: str, word: str) -> None:
    x = ex.extract(text, ctx())
    assert ents(x).get(word) != "person", ents(x)


@pytest.mark.parametrize(("text", "word"), [
    ("Mark called me yesterday about the trip.", "Mark"),
    ("Yesterday I had lunch with Moose, he just moved back to Denver.", "Moose"),
])
def test_a_given_name_or_a_name_taken_up_by_he_stays_a_person(ex: LocalExtractor, text: str, word: str) -> None:
    x = ex.extract(text, ctx())
    assert ents(x).get(word) == "person", ents(x)


def test_a_place_the_name_finder_knows_is_not_a_tool(ex: LocalExtractor) -> None:
    x = ex.extract("Oh man, they are amazing! I love the Miami vibe, it's perfect for the vid.", ctx())
    assert ents(x).get("Miami") != "tool" or "Miami" not in speaker_objects(x), (ents(x), rels(x))


def test_names_listed_with_a_pet_are_pets(ex: LocalExtractor) -> None:
    x = ex.extract("Last Friday I started introducing Biscuit, Pepper and the new pup Olli. They're adapting.", ctx())
    kinds = {e.name: (e.type, e.attributes.get("kind")) for e in x.entities}
    assert kinds.get("Biscuit") == ("entity", "pet") and kinds.get("Pepper") == ("entity", "pet"), kinds
    assert not {r for r in rels(x) if r[1] in ("KNOWS", "WORKS_WITH")}, rels(x)


def test_a_series_finished_is_read_not_made(ex: LocalExtractor) -> None:
    x = ex.extract("Yep, I just finished this amazing fantasy series. It was a wild ride.", ctx())
    assert not {r for r in rels(x) if r[1] == "WORKS_ON"}, rels(x)


def test_finishing_ones_own_work_is_still_work(ex: LocalExtractor) -> None:
    x = ex.extract("I finally finished my first novel last week!", ctx())
    assert ("ME", "WORKS_ON", "first novel") in rels(x), rels(x)


@pytest.mark.parametrize(("text", "cands"), [
    ("That's awesome! I'm sure you feel great knowing your students are doing so well with dance.", ("dance",)),
    ("Reminds me of living in my Japanese mansion with the epic cityscape.", ()),
    ("Lately I've been thinking about what makes me happy, and I'm really drawn to the gaming industry.",
     ("gaming",)),
])
def test_a_modifier_or_someone_elses_activity_is_not_the_speakers(ex: LocalExtractor, text: str,
                                                                  cands: tuple[str, ...]) -> None:
    x = ex.extract(text, ctx(candidates=known(*cands)))
    assert not {r for r in rels(x) if r[0] == "ME" and r[1] != "KNOWS" and r[2] != "CS:GO"}, rels(x)


def test_a_taste_for_a_thing_named_in_an_earlier_sentence_is_checked_there(ex: LocalExtractor) -> None:
    """ "... a Japanese mansion ... It's my sanctuary ... why I love music": the adjective stays no taste."""
    cands = [CandidateEntity(id="t0", name="Japanese", type="tool"), *known("music")]
    text = ("Yeah, I'm working on this project to transform a Japanese mansion into a recording studio. It's been "
            "my dream to have a space for creating music with other artists. It's my sanctuary that reminds me "
            "why I love music.")
    x = ex.extract(text, ctx(candidates=cands))
    assert "Japanese" not in speaker_objects(x), rels(x)


# ---- an entity needs evidence of being a named thing of its type (chat3) -------------------------


@pytest.mark.parametrize(("text", "word"), [
    ("Marble is so satisfying to carve, honestly.", "Marble"),
    ("Snowboarding is my escape from everything.", "Snowboarding"),
    ("Thanks, Dara! Setbacks will come, keep your chin up.", "Setbacks"),
])
def test_a_sentence_opening_word_with_only_the_name_finders_guess_is_no_entity(ex: LocalExtractor, text: str,
                                                                               word: str) -> None:
    assert word not in ents(ex.extract(text, ctx()))


def test_a_counted_lower_case_word_is_not_the_product_of_that_name(ex: LocalExtractor) -> None:
    x = ex.extract("My grandmother read to us from a storybook every night.", ctx())
    assert "Storybook" not in ents(x)


@pytest.mark.parametrize("text", [
    "Baking bread on Sundays is a total mood-lifter.",
    "The last exam was kinda jaw-dropping.",
])
def test_a_modified_hyphenated_word_is_no_software_name(ex: LocalExtractor, text: str) -> None:
    assert ents(ex.extract(text, ctx())) == {}


@pytest.mark.parametrize("text", [
    "It's great to have such an encouraging crew around you.",
    "You're lucky to have a thoughtful group like that.",
])
def test_a_group_described_by_praise_is_no_organisation(ex: LocalExtractor, text: str) -> None:
    assert not [n for n, t in ents(ex.extract(text, ctx())).items() if t == "organization"]


def test_plural_people_are_no_organisation(ex: LocalExtractor) -> None:
    for text in ("I picked up a few tricks from seasoned climbers at the gym.",
                 "Learning from experienced climbers really helps."):
        assert not [n for n in ents(ex.extract(text, ctx())) if "climbers" in n]


def test_an_idea_said_in_passing_is_no_entity(ex: LocalExtractor) -> None:
    for text in ("The twins were fascinated by volcanoes and the guide was wonderful.",
                 "My nieces love reading about volcanoes and the guides were lovely."):
        assert "volcanoes" not in ents(ex.extract(text, ctx()))


def test_someone_named_with_a_given_name_is_a_person(ex: LocalExtractor) -> None:
    x = ex.extract("On the ferry I chatted with an old sailor named Bartholomew.", ctx())
    assert ents(x).get("Bartholomew") == "person"


@pytest.mark.parametrize(("text", "pet"), [
    ("We just adopted a rabbit called Nutmeg. She's tiny!", "Nutmeg"),
    ("Got a puppy last month! Her name's Juniper and she chews everything.", "Juniper"),
])
def test_a_pet_called_or_named_is_a_pet(ex: LocalExtractor, text: str, pet: str) -> None:
    x = ex.extract(text, ctx())
    (e,) = [e for e in x.entities if e.name == pet]
    assert (e.type, e.attributes.get("kind")) == ("entity", "pet")


def test_a_capital_that_only_qualifies_a_noun_is_no_entity(ex: LocalExtractor) -> None:
    assert "Brightwater" not in ents(ex.extract("We finally got Brightwater tiles for the bathroom.", ctx()))
    assert "Lantern" not in ents(ex.extract("We loved the Lantern parade downtown.", ctx()))


@pytest.mark.parametrize(("text", "title"), [
    ("My nephew plays Kingdom Quest: Shadow Realm every day.", "Kingdom Quest: Shadow Realm"),
    ("I'm a big fan of Children of the Salt Sea, the whole trilogy.", "Children of the Salt Sea"),
])
def test_a_title_with_a_subtitle_or_of_is_one_name(ex: LocalExtractor, text: str, title: str) -> None:
    names = set(ents(ex.extract(text, ctx())))
    assert title in names and not names - {title}


@pytest.mark.parametrize(("text", "title"), [
    ("Last night my cousins and I played Tidebound until midnight.", "Tidebound"),
    ("We watched a film called Paper Orchards and cried.", "Paper Orchards"),
    ("I keep going back to board games like Hexmoor.", "Hexmoor"),
])
def test_a_game_film_or_book_with_a_work_cue_is_a_work(ex: LocalExtractor, text: str, title: str) -> None:
    x = ex.extract(text, ctx())
    (e,) = [e for e in x.entities if e.name == title]
    assert (e.type, e.attributes.get("kind")) == ("entity", "work")


def test_writing_a_novel_of_ones_own_is_still_a_project(ex: LocalExtractor) -> None:
    x = ex.extract("I'm drafting Salt Lanterns, a novel about lighthouse keepers.", ctx())
    assert ents(x).get("Salt Lanterns") == "project"


def test_a_place_named_in_apposition_is_left_out(ex: LocalExtractor) -> None:
    for text in ("We stopped in Ashcombe, a tiny village on the coast.",
                 "My family loves Thornbury, a quiet village by the sea.",
                 "Thornbury is a lovely trail for a Sunday walk."):
        assert not [n for n in ents(ex.extract(text, ctx())) if n in ("Ashcombe", "Thornbury")], text


@pytest.mark.parametrize(("text", "bad"), [
    ("And Priyanka said the cake was perfect.", "And Priyanka"),
    ("Learning Portuguese has been slow but fun.", "Learning Portuguese"),
])
def test_a_word_opening_the_sentence_is_not_part_of_the_name(ex: LocalExtractor, text: str, bad: str) -> None:
    assert bad not in ents(ex.extract(text, ctx()))


@pytest.mark.parametrize(("text", "word"), [
    ("The bakery got bought by some giant Conglomerate last spring.", "Conglomerate"),
    ("It helps to have a fellow Chef around when the orders pile up.", "Chef"),
])
def test_a_counted_capitalised_word_is_a_thing_not_its_name(ex: LocalExtractor, text: str, word: str) -> None:
    assert word not in ents(ex.extract(text, ctx()))


@pytest.mark.parametrize(("text", "name"), [
    ("I love listening to Tove Berglund while I paint.", "Tove Berglund"),
    ("I can't wait to see Reykjavik again.", "Reykjavik"),
])
def test_a_name_only_the_name_finder_calls_an_organisation_needs_a_fact(ex: LocalExtractor, text: str,
                                                                         name: str) -> None:
    assert ents(ex.extract(text, ctx())).get(name) != "organization"


def test_a_brand_named_by_its_kind_is_an_organisation(ex: LocalExtractor) -> None:
    x = ex.extract("I'm comparing outdoor brands like Fjellrev and Norrbotten.", ctx())
    assert ents(x).get("Fjellrev") == "organization"


# ---- a time phrase dates what it belongs to (chat3) ----------------------------------------------


def relation_to(x: Extraction, name: str) -> Any:
    ref = next(e.ref for e in x.entities if e.name == name)
    return next(r for r in x.relations if r.target == ref)


def test_a_time_phrase_on_a_side_event_does_not_date_the_fact(ex: LocalExtractor) -> None:
    x = ex.extract("That photo is from a cruise we took last year for my brother Tobias's wedding.", ctx())
    assert relation_to(x, "Tobias").valid_at is None


def test_a_past_time_of_another_clause_does_not_date_what_goes_on_now(ex: LocalExtractor) -> None:
    x = ex.extract("I'm really getting into birdwatching — spotted a heron by the canal last Sunday!", ctx())
    assert relation_to(x, "birdwatching").valid_at is None


def test_a_time_phrase_before_a_dash_dates_the_news_after_it(ex: LocalExtractor) -> None:
    x = ex.extract("On Monday, I got wonderful news - I'm finally in the art residency program I applied for!", ctx())
    rel = next(r for r in x.relations if r.source == SPEAKER)
    assert rel.valid_at is not None and rel.valid_at.date() == datetime(2024, 6, 10).date()
    x = ex.extract("Yesterday I got the call: I'm officially in the mentoring program!", ctx())
    rel = next(r for r in x.relations if r.source == SPEAKER)
    assert rel.valid_at is not None and rel.valid_at.date() == datetime(2024, 6, 11).date()


def test_finishing_ones_work_on_a_day_ends_it_that_day(ex: LocalExtractor) -> None:
    x = ex.extract("Yay! I finally finished my first novel and mailed it off last Thursday.", ctx())
    rel = next(r for r in x.relations if r.type == "WORKS_ON")
    assert rel.invalid_at is not None and rel.invalid_at.date() == datetime(2024, 6, 6).date()


def test_a_word_capitalised_by_its_place_is_not_a_product_spelled_otherwise(ex: LocalExtractor) -> None:
    x = ex.extract("Enjoy the hills, Dave! Safe travels home.", ctx())
    assert "SAFe" not in ents(x)


def test_a_place_exclaimed_is_not_a_person_addressed(ex: LocalExtractor) -> None:
    x = ex.extract("Oh, Portugal! I've always wanted to go there.", ctx())
    assert "Portugal" not in ents(x) and x.relations == []


def test_an_auxiliary_opening_a_question_is_not_part_of_the_name(ex: LocalExtractor) -> None:
    x = ex.extract("Does Biscuit still chase the neighbour's cat?", ctx())
    assert "Does Biscuit" not in ents(x)


def test_teams_in_a_match_are_not_works(ex: LocalExtractor) -> None:
    x = ex.extract("Did you catch the Harrowgate vs Millwick match on Saturday?", ctx())
    assert not [e for e in x.entities if e.attributes.get("kind") == "work"]


def test_things_they_are_called_are_not_projects(ex: LocalExtractor) -> None:
    x = ex.extract("They're called Moonflower Bells. Aren't the petals lovely?", ctx())
    assert ents(x).get("Moonflower Bells") != "project"


def test_an_everyday_word_inside_a_longer_name_is_not_a_product(ex: LocalExtractor) -> None:
    x = ex.extract("Sadly I lost my job at Fleet Dash this spring.", ctx())
    assert "Dash" not in ents(x)
    assert not [r for r in rels(x) if r[1] == "PART_OF"]  # losing a job there is no membership


def test_a_name_known_as_a_person_called_a_pet_here_is_no_person_known(ex: LocalExtractor) -> None:
    x = ex.extract("My sleepy furry friend Clementine curled up on my lap all evening.",
                   ctx(candidates=[CandidateEntity(id="c1", name="Clementine", type="person")]))
    assert not [r for r in rels(x) if r[1] == "KNOWS"]


def test_work_thought_back_on_is_not_current(ex: LocalExtractor) -> None:
    x = ex.extract("Thinking back to the hard weeks finishing my quilt made me grateful.", ctx())
    assert not [r for r in rels(x) if r[1] == "WORKS_ON"]


def test_a_weekday_in_a_past_tense_clause_is_past_even_if_the_message_plans_ahead(ex: LocalExtractor) -> None:
    x = ex.extract("On Monday I joined the Brackenford Chess Club! Next month I start competing.", ctx())
    rel = next(r for r in x.relations if r.type == "PART_OF")
    assert rel.valid_at is not None and rel.valid_at.date() == datetime(2024, 6, 10).date()


def test_names_given_in_answer_to_a_question_about_pets_are_pets(ex: LocalExtractor) -> None:
    from loregraph.extract.base import PreviousEpisode

    asked = PreviousEpisode(id="p1", content="So cute! What are your kittens' names?", valid_at=NOW)
    x = ex.extract("Zuzu and Juno! They never stop playing.", ctx(previous_episodes=[asked]))
    assert {e.name: (e.type, e.attributes.get("kind")) for e in x.entities} == {
        "Zuzu": ("entity", "pet"), "Juno": ("entity", "pet")}
    assert not [r for r in rels(x) if r[1] == "KNOWS"]


# ---- chat4: typing classes (languages, breeds, methods, titles with a year, pets by copula) -------


def test_a_language_learned_is_no_tool(ex: LocalExtractor) -> None:
    x = ex.extract("I use Italian with my grandparents every Sunday. My brother is trying Swahili this year.", ctx())
    assert "Italian" not in ents(x) and "Swahili" not in ents(x)


@pytest.mark.parametrize(("text", "breed"), [
    ("Both of ours are Jack Terrier mixes and they never sit still.", "Jack Terrier"),
    ("Honestly, Bernese Shepherds love the snow.", "Bernese Shepherds"),
])
def test_a_breed_is_no_person(ex: LocalExtractor, text: str, breed: str) -> None:
    assert breed not in ents(ex.extract(text, ctx()))


def test_a_named_method_is_a_concept(ex: LocalExtractor) -> None:
    x = ex.extract("I've been using the Feynman Technique to revise for my exams.", ctx())
    assert ents(x).get("Feynman Technique") == "concept"


def test_a_year_after_a_title_is_part_of_it(ex: LocalExtractor) -> None:
    x = ex.extract("Last night I tried Starfall 2099 with my cousin and I'm hooked on Starfall 2099 now.", ctx())
    assert "Starfall" not in ents(x)


def test_a_pet_named_by_the_copula(ex: LocalExtractor) -> None:
    x = ex.extract("Biscotti is my grandma's cat, she's twelve now.", ctx())
    assert ents(x).get("Biscotti") == "entity"
    assert not any(r.type == "KNOWS" for r in x.relations)


# ---- chat4: activities loved or taken up ----------------------------------------------------------


@pytest.mark.parametrize(("text", "fact"), [
    ("Honestly, I love kayaking with my nephews.", ("ME", "PREFERS", "kayaking")),
    ("We really enjoy gardening on slow Sundays.", ("ME", "PREFERS", "gardening")),
    ("I started fencing in the spring and it's great.", ("ME", "USES", "fencing")),
    ("A while back I took up crocheting, it calms me.", ("ME", "USES", "crocheting")),
    ("Then I began volunteering at the food bank.", ("ME", "USES", "volunteering")),
])
def test_an_activity_loved_or_taken_up_is_a_fact(ex: LocalExtractor, text: str, fact: tuple[str, str, str]) -> None:
    assert fact in rels(ex.extract(text, ctx()))


@pytest.mark.parametrize("text", [
    "I love being around my old classmates.",
    "I love finding little cafes in new towns.",
    "I took up most of the afternoon with chores.",
    "Do you love sailing?",
])
def test_a_light_verb_or_a_question_names_no_activity(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    assert not any(r.type in ("PREFERS", "USES") for r in x.relations)


@pytest.mark.parametrize(("text", "group"), [
    ("Guess what? I joined a pottery club on Monday!", "pottery club"),
    ("Last spring I joined a community choir.", "community choir"),
])
def test_a_club_joined_is_membership(ex: LocalExtractor, text: str, group: str) -> None:
    assert ("ME", "PART_OF", group) in rels(ex.extract(text, ctx()))


def test_a_club_only_praised_is_no_membership(ex: LocalExtractor) -> None:
    x = ex.extract("I joined a lovely club, and the old chess club nearby closed.", ctx())
    assert not any(r.type == "PART_OF" for r in x.relations)


@pytest.mark.parametrize(("text", "thing"), [
    ("These days I've been sketching a lot on the train.", "sketching"),
    ("I signed up for a ceramics class at the community centre.", "ceramics"),
    ("My wife and I are taking a salsa dancing course on Thursdays.", "salsa dancing"),
    ("I started an evening watercolor class last month.", "watercolor"),
])
def test_a_pastime_practised_or_a_class_taken_is_used(ex: LocalExtractor, text: str, thing: str) -> None:
    assert ("ME", "USES", thing) in rels(ex.extract(text, ctx()))


@pytest.mark.parametrize("text", [
    "I dropped my niece off at a ballet class.",
    "I've been feeling tired all week.",
    "Have you been sketching lately?",
])
def test_someone_elses_class_or_a_feeling_is_no_pastime(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "USES" for r in ex.extract(text, ctx()).relations)


@pytest.mark.parametrize(("text", "fact"), [
    ("Honestly I love westerns, they never get old.", ("ME", "PREFERS", "westerns")),
    ("We really enjoy spicy food.", ("ME", "PREFERS", "spicy food")),
    ("I play the banjo on weekends.", ("ME", "USES", "banjo")),
    ("I'm learning to play the harp with a tutor.", ("ME", "USES", "harp")),
])
def test_a_taste_for_a_kind_of_thing_or_an_instrument_played(ex: LocalExtractor, text: str,
                                                             fact: tuple[str, str, str]) -> None:
    assert fact in rels(ex.extract(text, ctx()))


@pytest.mark.parametrize("text", [
    "I love the view from up here.",
    "I love things that glow in the dark.",
    "My nephew plays the trumpet.",
    "Do you play the harp?",
])
def test_a_particular_thing_or_someone_elses_instrument_is_no_taste(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    assert not any(r.source == SPEAKER and r.type in ("PREFERS", "USES") for r in x.relations)


# ---- chat4: commands, groups of a kind, names given in answer --------------------------------------


def test_a_word_opening_a_command_is_no_name(ex: LocalExtractor) -> None:
    x = ex.extract("There's a line I love: \"Turn up the music and dance.\"", ctx())
    assert "Turn" not in ents(x)


def test_a_group_of_a_kind_without_a_fact_is_no_entity(ex: LocalExtractor) -> None:
    x = ex.extract("Honestly, having a loyal hockey team makes all the difference.", ctx())
    assert "loyal hockey team" not in ents(x) and "hockey team" not in ents(x)
    x = ex.extract("I joined a hockey team in March.", ctx())
    assert ("ME", "PART_OF", "hockey team") in rels(x)


def test_a_name_given_for_a_pet_asked_about_is_a_pet(ex: LocalExtractor) -> None:
    from loregraph.extract.base import PreviousEpisode

    asked = PreviousEpisode("p1", "That kitten looks so fluffy! What's her name?", NOW)
    x = ex.extract("Her name is Pumpernickel.", ctx(previous_episodes=[asked]))
    assert ents(x).get("Pumpernickel") == "entity"


def test_quite_the_compound_is_no_code_name(ex: LocalExtractor) -> None:
    x = ex.extract("Your cat seems like quite the show-stealer!", ctx())
    assert "show-stealer" not in ents(x)


def test_a_light_gerund_is_no_taste(ex: LocalExtractor) -> None:
    x = ex.extract("We loved spending time with the lambs and it was fun.", ctx())
    assert "spending time" not in ents(x)


def test_a_known_taste_met_in_passing_is_no_use(ex: LocalExtractor) -> None:
    x = ex.extract("I baked it with oat milk and honey.", ctx(candidates=known("oat milk")))
    assert not any(r.type == "USES" for r in x.relations)
    x = ex.extract("These days I do yoga every morning.", ctx(candidates=known("yoga")))
    assert ("ME", "USES", "yoga") in rels(x)


# ---- chat5: titles, modifiers, pets without a cue in the turn, shipped names that name nothing here --------


def previous(*texts: str) -> list[PreviousEpisode]:
    return [PreviousEpisode(id=f"p{i}", content=t, valid_at=NOW) for i, t in enumerate(texts)]


def known_things(*names: str) -> list[CandidateEntity]:
    return [CandidateEntity(id=f"t{i}", name=n, type="entity") for i, n in enumerate(names)]


@pytest.mark.parametrize(("text", "title"), [
    ("Look at this old cartridge with the game Zorbo on it.", "Zorbo"),
    ("Back then I'd play The Legend of Moonrise for hours.", "Legend of Moonrise"),
    ("Starfall Harbor: Second Tide is really relaxing and sweet.", "Starfall Harbor: Second Tide"),
    ("Yesterday I tried Skyreach 2. What a game!", "Skyreach 2"),
    ("I'm totally hooked on The Drowned Kings 3 lately.", "Drowned Kings 3"),
])
def test_a_title_by_its_shape_or_its_noun_is_a_work(ex: LocalExtractor, text: str, title: str) -> None:
    x = ex.extract(text, ctx())
    assert ents(x).get(title) == "entity"
    assert next(e for e in x.entities if e.name == title).attributes.get("kind") == "work"


def test_every_title_after_games_like_is_a_work_when_the_first_is_known(ex: LocalExtractor) -> None:
    x = ex.extract("I adore board games like Hexmoor and Tidewars.", ctx(candidates=known_things("Hexmoor")))
    assert ents(x).get("Tidewars") == "entity"


def test_an_app_praised_in_the_next_sentence_stays_a_tool(ex: LocalExtractor) -> None:
    x = ex.extract("I tried Notion yesterday. Great app, so handy.", ctx())
    assert ents(x).get("Notion") == "tool"


@pytest.mark.parametrize(("text", "word"), [
    ("We had so much fun at the Lantern fest last spring.", "Lantern"),
    ("I've been volunteering at an LGBTQ+ youth shelter on weekends.", "LGBTQ+"),
    ("My cousin started a Star Wars fan podcast with her roommate.", "Star Wars"),
    ("On our trip we hit all the MCU spots we could find.", "MCU"),
    ("I heard great things about The Marigolds!", "Marigolds"),
    ("We cheered all day at the NYC pride parade.", "NYC"),
    ("Venice was built on wooden piles, my guide said.", "Venice"),
])
def test_a_capital_that_only_qualifies_a_noun_or_an_article_is_no_entity(ex: LocalExtractor, text: str,
                                                                         word: str) -> None:
    assert word not in ents(ex.extract(text, ctx()))


@pytest.mark.parametrize(("text", "name", "etype"), [
    ("We launched the Orion web app last week.", "Orion web app", "project"),
    ("We met at the HR team offsite.", "HR team", "organization"),
])
def test_a_named_head_keeps_its_name(ex: LocalExtractor, text: str, name: str, etype: str) -> None:
    assert ents(ex.extract(text, ctx())).get(name) == etype


@pytest.mark.parametrize(("before", "text", "pet"), [
    (("We finally adopted a rescue pup on Saturday!", "What did you call him?"),
     "I named him Nugget because he's a little nugget of joy.", "Nugget"),
    (("My cats are curled up on the windowsill, Luna is the grey one.", "So cute! And the other one's name?"),
     "Pickle! He's a rascal.", "Pickle"),
    ((), "It took ages, but we went with 'Juniper' for our kitten.", "Juniper"),
])
def test_a_pet_named_without_a_pet_noun_in_the_turn(ex: LocalExtractor, before: tuple[str, ...], text: str,
                                                    pet: str) -> None:
    x = ex.extract(text, ctx(previous_episodes=previous(*before)))
    assert ents(x).get(pet) == "entity"
    assert next(e for e in x.entities if e.name == pet).attributes.get("kind") == "pet"


def test_names_beside_a_known_pet_in_listed_clauses_are_pets(ex: LocalExtractor) -> None:
    x = ex.extract("They each have a spot. Mochi naps on the sofa, Pixel curls up in her basket, Waffles has his "
                   "blanket, and Tofu guards the door!", ctx(candidates=known_things("Pixel")))
    kinds = {e.name: e.attributes.get("kind") for e in x.entities}
    assert kinds.get("Waffles") == "pet" and kinds.get("Tofu") == "pet"
    assert "person" not in ents(x).values()


@pytest.mark.parametrize(("text", "name"), [
    ("We named her Sara after my grandmother.", "Sara"),
    ("Greta runs her bakery and Pixel sleeps all day.", "Greta"),
])
def test_a_person_named_near_pets_stays_a_person(ex: LocalExtractor, text: str, name: str) -> None:
    x = ex.extract(text, ctx(candidates=known_things("Pixel"),
                             previous_episodes=previous("Our old dog loved the beach.")))
    assert ents(x).get(name) == "person"


@pytest.mark.parametrize(("text", "word"), [
    ("What's the dog's name in your Facebook photo?", "Meta"),
    ("Storm knocked out the power all night.", "Storm"),
    ("We blended banana icecream for dessert.", "icecream"),
    ("Your icecream beats anything from the shop!", "icecream"),
    ("Nice! Lovin' Metallica.", "Lovin' Metallica"),
    ("I'm loving tinkering with recipes lately.", "tinkering"),
])
def test_a_shipped_name_or_a_word_that_names_nothing_here_is_no_entity(ex: LocalExtractor, text: str,
                                                                       word: str) -> None:
    assert word not in ents(ex.extract(text, ctx()))


def test_a_brand_the_speaker_uses_stays(ex: LocalExtractor) -> None:
    assert ents(ex.extract("I use Facebook for the shop.", ctx())).get("Meta") == "organization"


@pytest.mark.parametrize("cands", [[], known_things("Skyreach")])
def test_a_favourite_title_in_apposition_is_a_taste_not_ones_own_work(ex: LocalExtractor,
                                                                       cands: list[CandidateEntity]) -> None:
    x = ex.extract("We ran a charity stream for our favourite game, Skyreach, last month.", ctx(candidates=cands))
    assert ents(x).get("Skyreach", "entity") == "entity"
    assert ("ME", "WORKS_ON", "Skyreach") not in rels(x)


@pytest.mark.parametrize("text", [
    "We went to the Norwich craft festival on Saturday.",
    "She dragged me to a Bristol design conference last month.",
    "I've been reading about birds and forests and I'm hooked.",
])
def test_an_event_attended_or_common_nouns_before_and_i_name_no_one(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    assert not any(e.type in ("project", "person") for e in x.entities)


# ---- hobbies and favourites named by plain nouns or gerunds (constructions with a 'concepts' node) ----------


@pytest.mark.parametrize("text,things", [
    ("Board games and baking bread are my main hobbies.", ["board games", "baking bread"]),
    ("My hobbies are gardening and chess.", ["gardening", "chess"]),
    ("Chess is my passion.", ["chess"]),
])
def test_what_the_speaker_calls_a_hobby_is_practised(ex: LocalExtractor, text: str, things: list[str]) -> None:
    x = ex.extract(text, ctx())
    for thing in things:
        assert ents(x).get(thing) == "concept"
        assert ("ME", "USES", thing) in rels(x)


@pytest.mark.parametrize("text,thing", [
    ("One of my favorite dishes is shakshuka!", "shakshuka"),
    ("My favorite sport is curling.", "curling"),
    ("I'm passionate about dancing and it brings me joy.", "dancing"),
    ("Hiking is a huge part of my life.", "hiking"),
    ('I\'m a huge fan of "The Expanse"!', "Expanse"),
])
def test_a_favourite_or_a_passion_is_a_taste(ex: LocalExtractor, text: str, thing: str) -> None:
    x = ex.extract(text, ctx())
    assert ("ME", "PREFERS", thing) in rels(x)
    assert ("ME", "USES", thing) not in rels(x)  # a favourite dish is no tool in use


@pytest.mark.parametrize("text", [
    "His hobbies are golf and fishing.",
    "Your favorite dish is lasagna, right?",
    "You're so passionate about dance.",
    "These are my hobbies.",
    "My hobby is my kids.",
    "I'm passionate about helping people.",
    "Acting was my first passion, but now I mostly write.",
    "My hobbies were golf and darts back then.",
])
def test_someone_elses_or_a_past_hobby_or_one_that_names_nothing_is_no_fact(ex: LocalExtractor, text: str) -> None:
    assert not any(s == "ME" and t in ("USES", "PREFERS") for s, t, _ in rels(ex.extract(text, ctx())))


def test_my_favourite_thing_is_a_taste_not_a_thing_in_use(ex: LocalExtractor) -> None:
    from loregraph.extract.base import CandidateEntity
    c = ctx()
    c.candidates = [CandidateEntity(id="c1", name="dumplings", type="concept")]
    x = ex.extract("Cool, but my favorite thing is dumplings. Sweet and salty!", c)
    assert not any(t == "USES" for _, t, _ in rels(x))


def test_a_word_of_a_known_groups_name_is_not_that_group(ex: LocalExtractor) -> None:
    from loregraph.extract.base import CandidateEntity
    c = ctx()
    c.candidates = [CandidateEntity(id="o1", name="LGBTQ support group", type="organization")]
    x = ex.extract("Last weekend I joined a mentorship program for LGBTQ youth.", c)
    assert not any(e.existing_id == "o1" for e in x.entities)


def test_a_named_persons_present_taste_is_theirs(ex: LocalExtractor) -> None:
    assert ("Samantha", "PREFERS", "theater") in rels(ex.extract("Samantha loves theater.", ctx()))


@pytest.mark.parametrize("text", ["Samantha loved theater as a kid.", "Does Samantha love theater?"])
def test_a_past_or_asked_taste_of_a_named_person_is_no_fact(ex: LocalExtractor, text: str) -> None:
    assert not any(t == "PREFERS" for _, t, _ in rels(ex.extract(text, ctx())))


def test_a_game_in_a_photo_is_no_one_known(ex: LocalExtractor) -> None:
    x = ex.extract("Here is a photo of this console with the game Mario. Funny gamepad, isn't it?", ctx())
    assert not any(t == "KNOWS" for _, t, _ in rels(x))


def test_someone_pictured_with_the_speaker_is_known_since_before_the_photo(ex: LocalExtractor) -> None:
    x = ex.extract("Here's a pic with Odile from the trip last week.", ctx())
    (r,) = [r for r in x.relations if r.type == "KNOWS"]
    assert r.valid_at is None  # the message time: "last week" dates the trip, not knowing her
    assert ("ME", "KNOWS", "Odile") in rels(x)


def test_when_we_were_somewhere_is_no_past_life_but_when_we_were_kids_is(ex: LocalExtractor) -> None:
    x = ex.extract("Yesterday, when we were at the cinema, Samantha loves theater, I asked her out.", ctx())
    assert ("Samantha", "PREFERS", "theater") in rels(x)
    assert not any(t == "PREFERS" for _, t, _ in rels(ex.extract("When we were kids we loved camping.", ctx())))
