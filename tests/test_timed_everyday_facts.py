"""Everyday facts that carry their own time (issue 21): a pastime started years ago, a person met and named,
a project finished, a group joined or called one's own, with ``valid_at`` / ``invalid_at`` read from the time
phrase (or left to the message time where the phrase dates another event). Real spaCy model; every sentence
here was written for these tests."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from loregraph.extract.base import SPEAKER, CandidateEntity, ExtractedRelation, Extraction, ExtractionContext
from loregraph.extract.local import LocalExtractor
from loregraph.extract.local.when import find_time_words

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)  # a Wednesday
YESTERDAY = date(2024, 6, 11)


def ctx() -> ExtractionContext:
    return ExtractionContext(group_id="g", reference_time=NOW, role_type="user", role="Rosa")


def facts(x: Extraction) -> dict[tuple[str, str, str], ExtractedRelation]:
    name = {e.ref: e.name for e in x.entities}
    name[SPEAKER] = "ME"
    return {(name[r.source], r.type, name[r.target]): r for r in x.relations}


# ---- a pastime started N years ago goes on -------------------------------------------------------


@pytest.mark.parametrize(("text", "activity", "year"), [
    ("I started rowing about three years ago and it has been a joy.", "rowing", 2021),
    ("We took up sailing two years ago and it's been wonderful.", "sailing", 2022),
])
def test_a_pastime_started_years_ago_is_used_since_then(ex: LocalExtractor, text: str, activity: str,
                                                        year: int) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "USES", activity))
    assert r is not None
    assert r.valid_at is not None and r.valid_at.year == year
    assert r.invalid_at is None


def test_years_ago_with_a_childhood_marker_is_still_a_past_life(ex: LocalExtractor) -> None:
    x = ex.extract("When I was a kid I started skating, years ago.", ctx())
    assert not any(r.type == "USES" for r in x.relations)


# ---- a person met and named beside the noun that introduces them --------------------------------


def test_a_person_met_and_named_in_apposition_is_known_from_that_day(ex: LocalExtractor) -> None:
    x = ex.extract("While hiking yesterday, I met this lovely guy, Teodor, who runs a bakery.", ctx())
    r = facts(x).get(("ME", "KNOWS", "Teodor"))
    assert r is not None and r.valid_at is not None and r.valid_at.date() == YESTERDAY


def test_a_person_met_and_named_without_a_time_is_known(ex: LocalExtractor) -> None:
    x = ex.extract("At the market I met a kind woman, Odile.", ctx())
    assert ("ME", "KNOWS", "Odile") in facts(x)


# ---- a project finished, said with "a" ----------------------------------------------------------


@pytest.mark.parametrize(("text", "project", "day"), [
    ("I wrapped up a plumbing project last week - it's finished now.", "plumbing project", date(2024, 6, 5)),
    ("I finished a garden project on Sunday.", "garden project", date(2024, 6, 9)),
])
def test_a_project_finished_is_ones_own_work_ended_that_day(ex: LocalExtractor, text: str, project: str,
                                                            day: date) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "WORKS_ON", project))
    assert r is not None
    assert r.invalid_at is not None and r.invalid_at.date() == day


def test_a_series_finished_with_an_article_is_still_no_work_of_ones_own(ex: LocalExtractor) -> None:
    x = ex.extract("I just finished this amazing fantasy series.", ctx())
    assert not any(r.type == "WORKS_ON" for r in x.relations)


# ---- groups joined, told or called one's own ----------------------------------------------------


@pytest.mark.parametrize(("text", "group"), [
    ("Just wanted to tell you that we joined a running club!", "running club"),
    ("I wanted to let you know I joined a quilting circle.", "quilting circle"),
])
def test_news_told_after_wanting_to_tell_is_a_fact(ex: LocalExtractor, text: str, group: str) -> None:
    assert ("ME", "PART_OF", group) in facts(ex.extract(text, ctx()))


def test_a_wish_to_tell_of_a_plan_stays_a_plan(ex: LocalExtractor) -> None:
    x = ex.extract("I want to tell you that I might join a chess club.", ctx())
    assert not any(r.type == "PART_OF" for r in x.relations)


def test_a_forum_joined_last_night_is_a_group_joined_then(ex: LocalExtractor) -> None:
    r = facts(ex.extract("Just last night I joined a chess forum online.", ctx())).get(("ME", "PART_OF", "chess forum"))
    assert r is not None and r.valid_at is not None and r.valid_at.date() == YESTERDAY


def test_my_group_is_membership_dated_by_the_message_not_the_event(ex: LocalExtractor) -> None:
    x = ex.extract("I baked bread for everyone in my knitting group last week.", ctx())
    r = facts(x).get(("ME", "PART_OF", "knitting group"))
    assert r is not None
    assert r.valid_at is None  # the message time: "last week" dates the baking, not the membership


@pytest.mark.parametrize("text", [
    "My son's football team won last week.",
    "Is your book club still meeting?",
    "My old hiking group sent me a card.",
])
def test_a_group_of_someone_else_or_of_the_past_is_no_membership(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "PART_OF" for r in ex.extract(text, ctx()).relations)


# ---- "That's why I'm so into X" ------------------------------------------------------------------


def test_a_taste_after_thats_why_with_an_intensifier_is_stated(ex: LocalExtractor) -> None:
    x = ex.extract("The reef trip was amazing. That's why I'm so into marine biology.", ctx())
    assert ("ME", "PREFERS", "marine biology") in facts(x)


# ---- how long something has not happened is no date ---------------------------------------------


def test_not_in_a_few_days_is_no_date_but_in_two_weeks_is(ex: LocalExtractor) -> None:
    assert find_time_words("We haven't talked in a few days, how are you?", NOW) == []
    (later,) = find_time_words("I'm moving to Porto in two weeks.", NOW)
    assert later.future and later.when.date() == date(2024, 6, 26)


# ---- a business opened, a work of one's own --------------------------------------------------------


def test_a_business_of_ones_own_opened_is_ones_own_from_that_day(ex: LocalExtractor) -> None:
    r = facts(ex.extract("We opened our bakery last month!", ctx())).get(("ME", "PART_OF", "bakery"))
    assert r is not None and r.valid_at is not None and r.valid_at.date() == date(2024, 5, 12)


def test_a_business_opened_keeps_its_whole_name_without_own(ex: LocalExtractor) -> None:
    x = ex.extract("I finally opened my own bike repair shop!", ctx())
    assert ("ME", "PART_OF", "bike repair shop") in facts(x)


def test_a_shop_someone_else_opened_is_not_the_speakers(ex: LocalExtractor) -> None:
    assert not any(r.type == "PART_OF" for r in ex.extract("They opened their shop in May.", ctx()).relations)


def test_my_album_is_my_work_dated_by_the_message(ex: LocalExtractor) -> None:
    x = ex.extract("I picked the cover art for my new album yesterday.", ctx())
    r = facts(x).get(("ME", "WORKS_ON", "album"))
    assert r is not None and r.valid_at is None  # "yesterday" dates the cover art, not the album


@pytest.mark.parametrize("text", ["I lost my photo album on the train.", "Have you heard my podcast?"])
def test_an_album_of_photos_or_a_question_is_no_work_of_ones_own(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "WORKS_ON" for r in ex.extract(text, ctx()).relations)


@pytest.mark.parametrize(("text", "work"), [
    ("I had a breakthrough with my robotics project on Monday.", "robotics project"),
    ("I was a guest on my own cooking show.", "cooking show"),
    ("Last week I talked about it on my own podcast.", "podcast"),
    ("We are building our own board game.", "board game"),
])
def test_a_project_or_a_work_called_ones_own_is_ones_work(ex: LocalExtractor, text: str, work: str) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "WORKS_ON", work))
    assert r is not None and r.valid_at is None  # dated by the message, not by the breakthrough or the talk


@pytest.mark.parametrize("text", ["My brother's garden project is huge.", "I finished my game last night."])
def test_someone_elses_project_or_a_game_finished_is_no_work_of_ones_own(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "WORKS_ON" for r in ex.extract(text, ctx()).relations)


@pytest.mark.parametrize("text", ["I'm working on my novel and it's almost finished.",
                                  "I'm working on my novel and it is nearly done."])
def test_almost_finished_is_not_finished(ex: LocalExtractor, text: str) -> None:
    x = ex.extract(text, ctx())
    r = facts(x).get(("ME", "WORKS_ON", "novel"))
    assert r is not None and r.invalid_at is None
    assert x.endings == []


# ---- a pastime loved "to do" or done as a habit ---------------------------------------------------


@pytest.mark.parametrize(("text", "activity"), [
    ("I also love to travel. Last spring we saw Lisbon.", "traveling"),
    ("We really enjoy to hike.", "hiking"),
])
def test_a_pastime_loved_to_do_is_a_taste_named_by_its_gerund(ex: LocalExtractor, text: str, activity: str) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "PREFERS", activity))
    assert r is not None and r.valid_at is None  # the taste holds now; "last spring" dates the trip


@pytest.mark.parametrize("text", ["I'd love to travel.", "I love to travel there.", "Do you love to swim?"])
def test_a_wish_or_a_place_or_a_question_is_no_taste(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "PREFERS" for r in ex.extract(text, ctx()).relations)


def test_a_pastime_done_as_a_habit_is_practised(ex: LocalExtractor) -> None:
    x = ex.extract("In the evening, I read, do yoga, and cook.", ctx())
    assert ("ME", "USES", "yoga") in facts(x)


@pytest.mark.parametrize("text", ["I did yoga last Friday.", "I don't do yoga.", "Do you do yoga?"])
def test_one_session_or_a_denial_or_a_question_is_no_practice(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "USES" for r in ex.extract(text, ctx()).relations)


@pytest.mark.parametrize(("text", "group"), [
    ("I love the knitting circle we joined.", "knitting circle"),
    ("I got so much advice from the grief support group I attend.", "grief support group"),
])
def test_a_group_the_speaker_joined_or_attends_said_after_it_is_membership(ex: LocalExtractor, text: str,
                                                                          group: str) -> None:
    assert ("ME", "PART_OF", group) in facts(ex.extract(text, ctx()))


@pytest.mark.parametrize("text", ["The chess club they joined is fun.", "The choir I never joined is great."])
def test_a_group_others_joined_or_never_joined_is_no_membership(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "PART_OF" for r in ex.extract(text, ctx()).relations)


# ---- an activity got into, picked up or practised in class; a community group joined --------------


@pytest.mark.parametrize(("text", "activity", "day"), [
    ("I got into bouldering a couple of years ago.", "bouldering", date(2022, 6, 12)),
    ("We got into rock climbing last summer and now we go every week.", "rock climbing", None),
])
def test_an_activity_got_into_is_a_taste_from_then(ex: LocalExtractor, text: str, activity: str,
                                                  day: date | None) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "PREFERS", activity))
    assert r is not None
    if day is not None:
        assert r.valid_at is not None and r.valid_at.date() == day


@pytest.mark.parametrize("text", [
    "We got into trouble with the landlord last week.",
    "My cousin got me into crocheting.",
    "I got into an argument with my neighbour.",
])
def test_trouble_got_into_or_someone_else_getting_you_into_it_is_no_taste_of_the_subject(
        ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "PREFERS" and r.source != SPEAKER for r in ex.extract(text, ctx()).relations)
    assert not any(r.type == "PREFERS" and "trouble" in r.fact + "argument" for r in
                   ex.extract(text, ctx()).relations)


def test_an_activity_picked_up_is_practised_not_decided(ex: LocalExtractor) -> None:
    x = facts(ex.extract("I picked up crocheting over the holidays.", ctx()))
    assert ("ME", "USES", "crocheting") in x
    assert not any(t == "DECIDED" for (_, t, _) in x)


def test_things_picked_up_are_no_activity(ex: LocalExtractor) -> None:
    assert ex.extract("I picked up the kids from school yesterday.", ctx()).relations == []


@pytest.mark.parametrize(("text", "activity"), [
    ("I went to a yoga class last week and loved it.", "yoga"),
    ("I made this little bowl in ceramics class yesterday.", "ceramics"),
    ("Last Friday at salsa class with my roommates I felt so free.", "salsa"),
])
def test_a_class_gone_to_or_worked_in_teaches_what_the_speaker_practises(ex: LocalExtractor, text: str,
                                                                          activity: str) -> None:
    assert ("ME", "USES", activity) in facts(ex.extract(text, ctx()))


@pytest.mark.parametrize("text", [
    "I took my nephew to a swimming class on Sunday.",
    "I picked her up at her ballet class.",
    "She teaches at a pottery class downtown.",
    "I finally got to go to a car workshop in Oakland.",
])
def test_someone_elses_class_is_not_the_speakers_practice(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "USES" and r.source == SPEAKER for r in ex.extract(text, ctx()).relations)


def test_a_workshop_gone_to_teaches_nothing_even_of_a_known_concept(ex: LocalExtractor) -> None:
    known = [CandidateEntity(id="c1", name="engine repair", type="concept")]
    x = ex.extract("Last week I went to an engine repair workshop.", ExtractionContext(
        group_id="g", reference_time=NOW, role_type="user", role="Rosa", candidates=known))
    assert not any(r.type == "USES" for r in x.relations)


@pytest.mark.parametrize(("text", "group", "day"), [
    ("Just yesterday I joined a nearby choir.", "choir", YESTERDAY),
    ("I joined a gym last week!", "gym", date(2024, 6, 5)),
])
def test_a_community_group_joined_needs_no_name(ex: LocalExtractor, text: str, group: str, day: date) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "PART_OF", group))
    assert r is not None and r.valid_at is not None and r.valid_at.date() == day


@pytest.mark.parametrize("text", ["I joined his band for one song.", "We joined the team last month."])
def test_someone_elses_band_or_a_bare_team_joined_is_no_community_group(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "PART_OF" for r in ex.extract(text, ctx()).relations)


def test_a_business_of_ones_own_launched_is_ones_own(ex: LocalExtractor) -> None:
    r = facts(ex.extract("Last month I launched my own candle business.", ctx())).get(
        ("ME", "PART_OF", "candle business"))
    assert r is not None and r.valid_at is not None and r.valid_at.date() == date(2024, 5, 12)


# ---- a work taken in and praised is a taste; a pastime begun after some event -----------------------


@pytest.mark.parametrize(("text", "work"), [
    ('I watched "Arrival" last night and loved it.', "Arrival"),
    ("Yesterday I tried Hades. Great game, so addictive!", "Hades"),
    ('We played "Wingspan" on Sunday, what an amazing game.', "Wingspan"),
])
def test_a_work_taken_in_and_praised_is_a_taste_from_then(ex: LocalExtractor, text: str, work: str) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "PREFERS", work))
    assert r is not None and r.valid_at is not None and r.valid_at.date() < NOW.date()


@pytest.mark.parametrize("text", [
    'I watched "Cats" last night. It wasn\'t great.',
    'I read "Dune" last week. My sister Ana is amazing at recommending books.',
    'I watched "Heat" last night because my dad asked me to.',
])
def test_a_work_taken_in_without_praise_of_it_is_no_taste(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "PREFERS" for r in ex.extract(text, ctx()).relations)


def test_a_pastime_started_after_some_event_is_practised(ex: LocalExtractor) -> None:
    r = facts(ex.extract("I started volunteering here about a year ago after a hard winter.", ctx())).get(
        ("ME", "USES", "volunteering"))
    assert r is not None and r.valid_at is not None and r.valid_at.year == 2023


@pytest.mark.parametrize(("text", "activity"), [
    ("I started lifting weights one year ago and it's been a journey.", "lifting weights"),
    ("Last year I began running marathons.", "running marathons"),
])
def test_a_pastime_started_with_its_object_is_practised_since(ex: LocalExtractor, text: str, activity: str) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "USES", activity))
    assert r is not None and r.valid_at is not None and r.valid_at.year == 2023


def test_errands_run_are_no_pastime(ex: LocalExtractor) -> None:
    assert ex.extract("I started running errands for my gran last month.", ctx()).relations == []


# ---- the speaker's own pet: the generic relation with the context "pet" -------------------------------------


@pytest.mark.parametrize(("text", "pet", "day"), [
    ("Guess what - I got a puppy two weeks ago! Her name's Pickle and she's adorable.", "Pickle", date(2024, 5, 29)),
    ("I adopted a pup from a shelter last week and I'm so happy. I named it Bruno.", "Bruno", date(2024, 6, 5)),
    ("Our dog Bailey loves the beach.", "Bailey", None),
    ("Bruno, my pup, hates baths.", "Bruno", None),
])
def test_the_speakers_pet_is_related_with_the_context_pet(ex: LocalExtractor, text: str, pet: str,
                                                          day: date | None) -> None:
    r = facts(ex.extract(text, ctx())).get(("ME", "RELATED_TO", pet))
    assert r is not None and r.attributes.get("context") == "pet"
    assert (r.valid_at.date() if r.valid_at else None) == day


@pytest.mark.parametrize("text", [
    "Her dog Bailey loves the beach.",
    "My sister's cat Miso is so fluffy.",
    "Ana got a kitten last week. She named her Tofu.",
    "Would you ever get a puppy? I'd call it Pickle.",
    "That one is Max, my childhood dog. He loved fetch.",
])
def test_someone_elses_a_wished_or_a_past_pet_is_not_the_speakers(ex: LocalExtractor, text: str) -> None:
    assert not any(r.type == "RELATED_TO" for r in ex.extract(text, ctx()).relations)


def test_a_lesson_tried_once_is_no_practice(ex: LocalExtractor) -> None:
    x = ex.extract("We tried a paddleboarding lesson last Friday and loved it!", ctx())
    assert not any(r.type == "USES" for r in x.relations)
