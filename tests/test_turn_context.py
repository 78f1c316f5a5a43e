"""Issue 16 part 1: candidate messages are rescored with their conversation (neighbouring turns, session strength)
and with the day or month a question names (search.turns, search.dates), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loregraph.graph.types import Episode
from loregraph.memory import Memory, Message
from loregraph.search.dates import FOLLOWING_DAYS, Window, named_window
from loregraph.search.hybrid import EVIDENCE_CONTEXT_RANK, WHOLE_CONTEXT_FROM_K, ScoredEpisode, SearchResults
from loregraph.search.turns import (
    ANSWER_POOL,
    ANSWER_WEIGHT,
    CONTEXT_WEIGHT,
    DATE_BOOST,
    NAME_ANSWER_BOOST,
    NAME_ANSWER_POOL,
    QUESTION_PENALTY,
    SESSION_WEIGHT,
    TIME_ANSWER_BOOST,
    TIME_ANSWER_FUSED_BOOST,
    TIME_ANSWER_FUSED_POOL,
    TIME_ANSWER_POOL,
    TOLD_IN_WINDOW_BOOST,
    asks,
    asks_name,
    asks_when,
    holds_question,
    lift_fused_time_answers,
    lift_name_answers,
    lift_time_answers,
    lift_told_in_window,
    lower_questions,
    names_something,
    rank_turns,
    rescore_turns,
    tells_time,
)

T0 = datetime(2022, 3, 17, 14, 0, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def test_named_days_and_months_become_windows_that_run_a_week_on():
    week = timedelta(days=FOLLOWING_DAYS)
    assert named_window("What did Audrey eat for dinner on October 24, 2023?") == \
        Window(day(2023, 10, 24), day(2023, 10, 25) + week)
    assert named_window("Which activity was James pursuing on 16 March 2022?") == \
        Window(day(2022, 3, 16), day(2022, 3, 17) + week)
    assert named_window("Did Andrew have a pet dog during March 2023?") == \
        Window(day(2023, 3, 1), day(2023, 4, 1) + week)
    assert named_window("Where did they travel in Dec, 2023?") == Window(day(2023, 12, 1), day(2024, 1, 1) + week)
    assert named_window("Where was the picture John shared on December 1,2023 taken?") == \
        Window(day(2023, 12, 1), day(2023, 12, 2) + week)


def test_a_period_placed_against_a_date_is_told_of_on_that_date():
    """ "The week before August 3" is told of on August 3 ("last week I..."), "the Saturday after" as a plan."""
    week = timedelta(days=FOLLOWING_DAYS)
    assert named_window("What did John do the week before August 3, 2023 with his kids?") == \
        Window(day(2023, 8, 3), day(2023, 8, 4) + week)
    assert named_window("What did Audrey do over the weekend before 4th October, 2023?") == \
        Window(day(2023, 10, 4), day(2023, 10, 5) + week)
    assert named_window("What did they plan for the Saturday after October 28, 2023?") == \
        Window(day(2023, 10, 28), day(2023, 10, 29) + week)
    assert named_window("What was Jolene working on in the week as of 1 February, 2023?") is None  # a bound


def test_a_month_named_without_its_year_matches_it_in_any_year():
    june = named_window("When did Melanie go camping in June?")
    assert june == Window(month=6)
    assert day(2023, 6, 27) in june and day(2021, 6, 1) in june and day(2023, 7, 5) in june  # and the week after
    assert day(2023, 7, 9) not in june and day(2023, 5, 31) not in june
    assert named_window("When did Melanie go camping in June 2023?") == \
        Window(day(2023, 6, 1), day(2023, 7, 1) + week())
    assert named_window("What did she do in June, after the move?") is None  # a bound


def week() -> timedelta:
    return timedelta(days=FOLLOWING_DAYS)


def test_a_range_of_days_or_months_becomes_one_window():
    """ "Between August 11 and August 15 2023": from the first day to the last, the first taking the year of the
    second; a range of months the same; a "between" of no dates is no range."""
    assert named_window("Where was John between August 11 and August 15 2023?") == \
        Window(day(2023, 8, 11), day(2023, 8, 16) + week())
    assert named_window("Did they meet in Boston between August and November 2023? Answer yes or no.") == \
        Window(day(2023, 8, 1), day(2023, 12, 1) + week())
    assert named_window("What did she paint between 3 March and 5 April, 2022?") == \
        Window(day(2022, 3, 3), day(2022, 4, 6) + week())
    assert named_window("How many months passed between Andrew adopting Toby and Buddy?") is None


@pytest.mark.parametrize("text", ["How many pets did Andrew have, as of September 2023?",  # a bound, not a window
                                  "What changed after May 3, 2023?", "What did Mark 2022 do?",  # no month
                                  "Who called on February 30, 2023?",  # not a date
                                  "When did Caroline go to the support group?"])
def test_bounds_non_dates_and_undated_questions_get_no_window(text):
    assert named_window(text) is None


def test_a_turn_is_lifted_by_its_neighbours_and_its_session():
    """An answer that shares no word with the question ("Three years now") follows the question it answers: its
    neighbour's score lifts it over a lone turn of a weaker conversation that scored a little higher alone."""
    places = {"ask": ("s1", T0), "answer": ("s1", T0 + timedelta(seconds=1)), "lone": ("s2", T0 + timedelta(days=9))}
    ranked = [("ask", 1.0), ("lone", 0.30), ("answer", 0.25)]
    got = dict(rescore_turns(ranked, places, None))
    assert got["answer"] == pytest.approx(0.25 + CONTEXT_WEIGHT * 1.0 + SESSION_WEIGHT * 1.0)
    s1 = (1.0 + CONTEXT_WEIGHT * 0.25 + 0.25 + CONTEXT_WEIGHT * 1.0) / 3
    assert got["lone"] == pytest.approx(0.30 + SESSION_WEIGHT * (0.30 / 3) / s1)
    assert [i for i, _ in rescore_turns(ranked, places, None)] == ["ask", "answer", "lone"]
    # filtered-out candidates (no place) are dropped; a turn without a conversation keeps its own score
    alone = rescore_turns([("x", 0.5), ("gone", 0.9)], {"x": (None, T0)}, None)
    assert alone == [("x", 0.5)]


def test_a_reply_is_lifted_by_the_question_right_before_it():
    """ "What's your favourite game?" matches the question; the reply naming the game shares no word with it. The
    turn right after an asking turn gets ANSWER_WEIGHT x the question's score; a turn after a statement does not."""
    places = {"ask": ("s1", T0), "reply": ("s1", T0 + timedelta(seconds=1)),
              "said": ("s2", T0 + timedelta(days=3)), "after": ("s2", T0 + timedelta(days=3, seconds=1))}
    ranked = [("ask", 1.0), ("said", 1.0), ("after", 0.2), ("reply", 0.2)]
    plain = dict(rescore_turns(ranked, places, None))
    got = dict(rescore_turns(ranked, places, None, {"reply": "ask"}))
    assert plain["reply"] == pytest.approx(plain["after"])
    assert got["reply"] == pytest.approx(plain["reply"] + ANSWER_WEIGHT * 1.0)  # its session stays the strongest
    assert got["reply"] > got["after"] and got["after"] < plain["after"]  # s2 is now weaker than s1


def test_turns_that_ask_are_lowered_among_the_best():
    # a question anywhere lifts the reply (answer term); only a turn that ends asking is lowered
    assert holds_question("Are they yours? They're so graceful!") and not asks("Are they yours? They're so graceful!")
    assert asks("What is it? ") and not holds_question("I love it.")
    texts = {"ask": "What is your favourite game?  ", "tell": "Xenoblade, for sure.", "far": "Do you play?"}
    scored = [("ask", 0.9), ("tell", 0.8)] + [(f"x{n}", 0.5) for n in range(TIME_ANSWER_POOL - 2)] + [("far", 0.4)]
    lowered = lower_questions(scored, texts)
    assert lowered[0] == ("tell", 0.8) and lowered[1] == ("ask", pytest.approx(0.9 - QUESTION_PENALTY))
    assert lowered[-1] == ("far", 0.4) and len(lowered) == len(scored)  # beyond the pool: not looked at


def test_a_turn_said_in_the_named_window_is_lifted():
    places = {"then": ("s1", T0), "later": ("s2", T0 + timedelta(days=90))}
    window = named_window("What did James do on March 16, 2022?")
    got = dict(rescore_turns([("later", 0.6), ("then", 0.5)], places, window))
    plain = dict(rescore_turns([("later", 0.6), ("then", 0.5)], places, None))
    assert got["then"] == pytest.approx(plain["then"] + DATE_BOOST) and got["later"] == pytest.approx(plain["later"])
    assert got["then"] > got["later"]


def test_a_when_question_lifts_the_turns_that_tell_a_time():
    assert asks_when("When did Audrey move to a new place?") and asks_when("How long has John played drums?")
    assert asks_when("What year did they meet?") and not asks_when("What did Audrey eat for dinner?")
    assert asks_when("How many weeks passed between Maria adopting Coco and Shadow?")
    assert not asks_when("How many dogs does Audrey have?")
    assert tells_time("Woohoo! I moved last week, bigger backyard!") and tells_time("I've had them 3 years ago")
    assert not tells_time("I love my new place with a bigger backyard.")
    texts = {"place": "Audrey(user): I love my new place.", "moved": "Audrey(user): Yesterday I moved to a new place!",
             "far": "Audrey(user): Last week was fun."}
    scored = [("place", 0.9), ("moved", 0.8)] + [(f"x{n}", 0.5) for n in range(TIME_ANSWER_POOL - 2)] + [("far", 0.1)]
    lifted = lift_time_answers(scored, texts)
    assert lifted[0] == ("moved", pytest.approx(0.8 + TIME_ANSWER_BOOST))
    assert lifted[1] == ("place", 0.9) and lifted[-1] == ("far", 0.1)  # beyond the pool: not looked at
    assert len(lifted) == len(scored)


def test_a_when_question_lifts_a_turn_that_tells_a_time_and_fell_out_of_the_best_after_rescoring():
    """ "When did Priya go kayaking?": the session opener "Went kayaking on the lake last Sunday!" was among the best
    fused candidates, but its neighbours say little and the rescoring put it below the best ``TIME_ANSWER_POOL``: it
    rises; a turn of the best that tells a time (lifted already), one that tells no time and one that was never
    among the best fused candidates do not."""
    texts = {"opener": "Priya(user): Went kayaking on the lake last Sunday!", "plain": "Priya(user): Kayaks are fun.",
             "head": "Priya(user): Yesterday was my day off.", "deep": "Priya(user): Last year I sold my kayak."}
    filler = [(f"x{n}", 1.0 - n / 100) for n in range(TIME_ANSWER_POOL - 1)]
    scored = [("head", 1.2), *filler, ("plain", 0.6), ("opener", 0.55), ("deep", 0.5)]
    fused = ["opener", "plain", "head"] + [f"x{n}" for n in range(TIME_ANSWER_FUSED_POOL - 3)] + ["deep"]
    lifted = dict(lift_fused_time_answers(scored, fused, texts))
    assert lifted["opener"] == pytest.approx(0.55 + TIME_ANSWER_FUSED_BOOST)
    assert lifted["plain"] == 0.6 and lifted["head"] == 1.2 and lifted["deep"] == 0.5
    order = [i for i, _ in lift_fused_time_answers(scored, fused, texts)]
    assert order.index("opener") < TIME_ANSWER_POOL and len(order) == len(scored)
    assert lift_fused_time_answers(scored, ["plain", "head"], texts) == scored


def test_rank_turns_lifts_a_fused_turn_that_tells_a_time_for_a_when_question_only():
    """The stage reads the text of the best fused candidates it has not loaded (speaker and content only) and loads
    a turn that rises into the best ``limit``."""
    texts = {"opener": ("Priya", "Priya(user): Went kayaking on the lake last Sunday!")}
    texts.update({f"x{n}": ("Ravi", f"Ravi(user): Kayak story {n}.") for n in range(40)})
    # the opener leads the fused list but sits alone in its session; the others share theirs and lift each other
    ranked = [("opener", 0.9)] + [(f"x{n}", 0.6 - n / 1000) for n in range(40)]
    places = {"opener": ("s-opener", T0)}
    places.update({f"x{n}": ("s-busy", T0 + timedelta(seconds=n)) for n in range(40)})
    read: list[list[str]] = []

    def load(ids: list[str]) -> dict[str, Episode]:
        return {i: Episode(id=i, group_id="g", name=i, content=texts[i][1], source="message", valid_at=places[i][1],
                           role=texts[i][0]) for i in ids}

    def load_texts(ids: list[str]) -> dict[str, tuple[str | None, str]]:
        read.append(list(ids))
        return {i: texts[i] for i in ids}

    chosen, eps = rank_turns(None, "When did Priya go kayaking?", ranked, places, 5, load,  # type: ignore[arg-type]
                             load_texts)
    assert chosen[0][0] == "opener" and "opener" in eps
    assert read and "opener" in read[0]
    plain, _ = rank_turns(None, "Where did Priya go kayaking?", ranked, places, 5, load,  # type: ignore[arg-type]
                          load_texts)
    assert "opener" not in [i for i, _ in plain[:5]]


def test_a_turn_told_in_the_named_window_that_tells_a_time_is_lifted():
    """ "What did James do on March 16?": the turn said in the window that tells a time ("yesterday I...") rises;
    a turn of the window that tells no time, one that tells a time outside it, and any beyond the pool do not."""
    window = named_window("Which sport was James playing on March 16, 2022?")
    assert window is not None
    later = T0 + timedelta(days=60)
    places = {"plain": ("s1", T0), "told": ("s1", T0), "outside": ("s2", later), "far": ("s1", T0)}
    texts = {"plain": "James(user): Bowling is my favourite sport.", "told": "James(user): Yesterday I went bowling!",
             "outside": "James(user): Last week I went bowling again.", "far": "James(user): Yesterday was fun."}
    places.update({f"x{n}": ("s3", later) for n in range(TIME_ANSWER_POOL - 3)})
    scored = [("plain", 0.9), ("outside", 0.85), ("told", 0.8)] + [(f"x{n}", 0.5) for n in range(TIME_ANSWER_POOL - 3)]
    scored.append(("far", 0.1))
    lifted = lift_told_in_window(scored, texts, places, window)
    assert lifted[0] == ("told", pytest.approx(0.8 + TOLD_IN_WINDOW_BOOST))
    assert lifted[1] == ("plain", 0.9) and lifted[2] == ("outside", 0.85)
    assert lifted[-1] == ("far", 0.1) and len(lifted) == len(scored)  # beyond the pool: not looked at


def test_a_question_answered_by_a_name_lifts_the_turns_that_name_something():
    """ "Which city...", "Who...", "Where...": the turn that names a place, a person or a title rises among the best;
    a turn whose only capitalised words start a sentence or name a speaker, a weekday or a month does not."""
    assert asks_name("Which city did Priya fly to?") and asks_name("Who did Priya go hiking with?")
    assert asks_name("Where did Priya spend the winter?") and asks_name("What books has Priya read?")
    assert asks_name("What is the name of Priya's cat?")
    assert not asks_name("What did Priya cook?") and not asks_name("When did Priya fly?")
    assert not asks_name("Which activity does Priya like best?")
    assert names_something("Priya(user): We landed in Osaka at dawn.") and names_something('Tom(user): I read "Dune".')
    assert not names_something("Priya(user): Great trip. Loved it, Tom! On Monday in March we flew.", {"Priya", "Tom"})
    assert not names_something("Priya(user): I flew there. It was nice.")
    said = {"trip": ("Priya", "Priya(user): Thanks Tom! The trip was long, the flight was long."),
            "named": ("Priya", "Priya(user): We landed in Osaka at dawn."),
            "far": ("Tom", "Tom(user): I hear Kyoto is lovely.")}
    scored = [("trip", 0.9), ("named", 0.8)] + [(f"x{n}", 0.5) for n in range(NAME_ANSWER_POOL - 2)] + [("far", 0.1)]
    lifted = lift_name_answers(scored, said)
    assert lifted[0] == ("named", pytest.approx(0.8 + NAME_ANSWER_BOOST)) and lifted[1] == ("trip", 0.9)
    assert lifted[-1] == ("far", 0.1) and len(lifted) == len(scored)  # beyond the pool: not looked at


def test_the_name_term_reads_only_speaker_and_content_beyond_the_loaded_turns():
    """Beyond the turns already loaded, the name term reads speaker and content alone (a light read); a turn it lifts
    into the best ``limit`` is then loaded, so that the search can show it."""
    ids = [f"t{n}" for n in range(60)]
    places = {i: ("s1", T0 + timedelta(seconds=n)) for n, i in enumerate(ids)}
    said = {i: ("Priya", f"Priya(user): that was fun, number {n}.") for n, i in enumerate(ids)}
    said["t45"] = ("Priya", "Priya(user): we stayed in Porto.")
    episodes = {i: Episode(id=i, group_id="g1", content=c, role=r, valid_at=places[i][1]) for i, (r, c) in said.items()}
    loaded: list[str] = []
    light: list[str] = []

    def load(wanted: list[str]) -> dict[str, Episode]:
        loaded.extend(wanted)
        return {i: episodes[i] for i in wanted}

    def load_texts(wanted: list[str]) -> dict[str, tuple[str | None, str]]:
        light.extend(wanted)
        return {i: said[i] for i in wanted}

    ranked = [(i, 1.0 - 0.002 * n) for n, i in enumerate(ids)]
    chosen, eps = rank_turns(None, "Which city did Priya visit?", ranked, places, 3, load, load_texts)  # type: ignore[arg-type]
    assert chosen[0][0] == "t45" and "t45" in eps
    # the first ANSWER_POOL (fused) are loaded for the answer term; the rest of the name term's pool is read lightly
    assert set(light) == set(ids[ANSWER_POOL:NAME_ANSWER_POOL])
    assert set(loaded) - set(ids[:ANSWER_POOL]) == {"t45"}  # and only the lifted turn loaded from there


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_the_store_reads_speaker_and_content_of_episodes_by_id(backend, request, tmp_path):
    db_url = request.getfixturevalue("pg_db") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(db_url) as m:
        await m.add_messages("g1", [Message(content="We stayed in Porto.", role_type="user", role="Priya",
                                            timestamp=T0)], conversation_id="s1")
        (ep,) = await m.get_episodes("g1", last_n=5)
        assert m.store.episode_texts("g1", [ep.id, "missing"]) == {ep.id: ("Priya", ep.content)}
        assert "Porto" in ep.content and m.store.episode_texts("other", [ep.id]) == {}  # scoped by group


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_search_puts_the_turn_naming_the_city_first(backend, request, tmp_path, monkeypatch):
    """Asked which city, the turn that names one comes first, though another turn matches the question's words
    better (without the name term it does not)."""
    db_url = request.getfixturevalue("pg_db") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(db_url) as m:
        chat = {"s0": (T0 - timedelta(days=3), ["I baked bread this morning.", "Nice, what kind?",
                                                  "Sourdough with seeds.", "Yum, send me a slice.",
                                                  "Work was busy today.", "Hope it calms down.",
                                                  "Me too, long week.", "Rest up this weekend."]),
                "s1": (T0, ["The city trip I had was fun.", "Glad you enjoyed it.",
                            "The trip took us to Porto, a city by the sea.", "Sounds lovely."])}
        for conv, (start, texts) in chat.items():
            for n, text in enumerate(texts):
                await m.add_messages("g1", [Message(content=text, role_type="user", role=["Priya", "Tom"][n % 2],
                                                    timestamp=start + timedelta(seconds=n))], conversation_id=conv)
        question = "Which city did Priya visit on her trip?"
        found = await m.search(question, "g1", limit=2, include=["episodes"])
        assert "Porto" in found.episodes[0].episode.content
        monkeypatch.setattr("loregraph.search.turns.NAME_ANSWER_BOOST", 0.0)
        without = await m.search(question, "g1", limit=2, include=["episodes"])
        assert "The city trip" in without.episodes[0].episode.content
        assert (await m.search(question, "other", limit=2, include=["episodes"])).episodes == []


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_search_puts_the_turn_telling_of_the_named_day_first(backend, request, tmp_path, monkeypatch):
    """The session after the named day holds two turns on bowling; the one that tells when ("yesterday") comes
    first, though the other matches the question's words better (without the told-in-window term it does not)."""
    db_url = request.getfixturevalue("pg_db") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(db_url) as m:
        texts = ["Oh I went bowling with friends, James.", "Nice! Good for you.",
                 "Yesterday I went bowling with friends.", "Sounds like fun."]
        for n, text in enumerate(texts):
            await m.add_messages("g1", [Message(content=text, role_type="user", role=["James", "John"][n % 2],
                                                timestamp=T0 + timedelta(seconds=n))], conversation_id="s1")
        question = "Where did James go with friends on March 16, 2022?"
        found = await m.search(question, "g1", limit=2, include=["episodes"])
        assert "Yesterday I went bowling" in found.episodes[0].episode.content
        monkeypatch.setattr("loregraph.search.turns.TOLD_IN_WINDOW_BOOST", 0.0)
        without = await m.search(question, "g1", limit=2, include=["episodes"])
        assert "Oh I went bowling" in without.episodes[0].episode.content
        assert (await m.search(question, "other", limit=2, include=["episodes"])).episodes == []


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_search_finds_the_turn_of_the_named_day_and_can_turn_it_off(backend, request, tmp_path):
    """Two sessions tell of bowling; the question names the day before the first one ("yesterday I went bowling"),
    so that session's turn comes first, though the later one matches the words better."""
    db_url = request.getfixturevalue("pg_db") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(db_url) as m:
        sessions = {"s1": (T0, ["Yesterday I went bowling and got two strikes.", "Nice, well done!"]),
                    "s2": (T0 + timedelta(days=80), ["Bowling again: I love bowling, strikes and bowling nights.",
                                                    "You really love it."])}
        for conv, (start, texts) in sessions.items():
            for n, text in enumerate(texts):
                await m.add_messages("g1", [Message(content=text, role_type="user", role=["James", "John"][n % 2],
                                                    timestamp=start + timedelta(seconds=n))], conversation_id=conv)
        question = "Which bowling strikes did James get on March 16, 2022?"
        dated = await m.search(question, "g1", limit=4, include=["episodes"])
        assert "Yesterday I went bowling" in dated.episodes[0].episode.content
        alone = await m.search(question, "g1", limit=4, include=["episodes"], turn_context=False)
        assert "Bowling again" in alone.episodes[0].episode.content
        # the group scope holds: another group sees none of it
        assert (await m.search(question, "other", limit=4, include=["episodes"])).episodes == []


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_search_finds_the_reply_to_the_question_it_matches(backend, request, tmp_path, monkeypatch):
    """The question a user asks matches an earlier question in the conversation; its reply, which names the game
    and nothing of the question, is found among the first two (without the answer term it falls behind turns that
    share the question's words)."""
    db_url = request.getfixturevalue("pg_db") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(db_url) as m:
        chat = [("s1", ["Do you play any video games at all?", "Sometimes, video games on weekends.",
                        "Which video game do you like best?", "Xenoblade Chronicles, no contest!",
                        "Cool, I will look it up."]),
                ("s2", ["I bought a new video game console, video games all week.", "Any good video game deals?",
                        "No deals, but the video game shop was busy.", "Games shops always are."])]
        for day_n, (conv, texts) in enumerate(chat):
            for n, text in enumerate(texts):
                await m.add_messages("g1", [Message(content=text, role_type="user", role=["Nate", "Joanna"][n % 2],
                                                    timestamp=T0 + timedelta(days=day_n, seconds=n))],
                                     conversation_id=conv)
        question = "Which video game does Joanna like best?"
        found = await m.search(question, "g1", limit=3, include=["episodes"])
        assert "Xenoblade" in " ".join(e.episode.content for e in found.episodes[:2])
        monkeypatch.setattr("loregraph.search.turns.ANSWER_WEIGHT", 0.0)
        without = await m.search(question, "g1", limit=3, include=["episodes"])
        assert "Xenoblade" not in " ".join(e.episode.content for e in without.episodes[:2])
        assert (await m.search(question, "other", limit=3, include=["episodes"])).episodes == []


def test_evidence_below_ten_shows_the_best_turn_without_its_context():
    """At k = 5 the best turn's context turns give way to the next best hits (their scores already carry the
    context), but for its reply when the best turn asks; from k = 10 the context comes right after the best turn."""
    def turn(name: str, seconds: int) -> Episode:
        return Episode(group_id="g1", name=name, content=name, role="user", conversation_id="s1",
                       valid_at=T0 + timedelta(seconds=seconds))
    best, before, after = turn("best", 10), turn("before", 9), turn("after", 11)
    hits = [turn(f"hit{n}", 100 + n) for n in range(10)]
    res = SearchResults(episodes=[ScoredEpisode(best, 1.0)] + [ScoredEpisode(h, 0.9 - n / 100) for n, h in
                                                                enumerate(hits)],
                        context={best.id: [before, after]})
    assert [e.episode.name for e in res.evidence(3)] == ["best", "hit0", "hit1"]
    assert [e.episode.name for e in res.evidence(10)][:4] == ["best", "before", "after", "hit0"]
    assert len(res.evidence(10)) == 10
    # a best turn that asks brings its reply, the turn after it
    asking = best.model_copy(update={"content": "Which game do you like best?"})
    res.episodes[0] = ScoredEpisode(asking, 1.0)
    assert [e.episode.name for e in res.evidence(3)] == ["best", "after", "hit0"]


def test_evidence_from_ten_shows_only_the_context_turns_among_the_best_candidates():
    """From k = 10 a context turn of the best turn comes with it only when the rescoring put it among the best
    ``EVIDENCE_CONTEXT_RANK`` candidates; a neighbour nothing supports gives its slot to the next hit."""
    def turn(name: str, seconds: int) -> Episode:
        return Episode(group_id="g1", name=name, content=name, role="user", conversation_id="s1",
                       valid_at=T0 + timedelta(seconds=seconds))
    best, before, after = turn("best", 10), turn("before", 9), turn("after", 11)
    hits = [turn(f"hit{n}", 100 + n) for n in range(10)]
    episodes = [ScoredEpisode(best, 1.0)] + [ScoredEpisode(h, 0.9 - n / 100) for n, h in enumerate(hits)]
    filler = [f"other{n}" for n in range(EVIDENCE_CONTEXT_RANK)]
    ranked = [best.id] + [h.id for h in hits] + [after.id] + filler  # "before" is not among the best
    res = SearchResults(episodes=episodes, context={best.id: [before, after]},
                        top_candidates=ranked[:EVIDENCE_CONTEXT_RANK])
    assert [e.episode.name for e in res.evidence(10)][:3] == ["best", "after", "hit0"]
    assert "before" not in [e.episode.name for e in res.evidence(10)]
    # a list as long as k = WHOLE_CONTEXT_FROM_K keeps all the context
    assert [e.episode.name for e in res.evidence(WHOLE_CONTEXT_FROM_K)][:3] == ["best", "before", "after"]
    # without the rescored candidates (turn_context off, or results built by hand) all the context is shown
    res.top_candidates = []
    assert [e.episode.name for e in res.evidence(10)][:3] == ["best", "before", "after"]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_search_keeps_the_best_candidates_for_the_evidence_context(backend, request, tmp_path):
    """A search with turn context records its best rescored candidates (at most ``EVIDENCE_CONTEXT_RANK``, best
    first, the shown episodes among them); without turn context none."""
    db_url = request.getfixturevalue("pg_db") if backend == "postgres" else f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(db_url) as m:
        texts = [f"Turn {n}: we talked about bowling and games, round {n}." for n in range(EVIDENCE_CONTEXT_RANK + 6)]
        for n, text in enumerate(texts):
            await m.add_messages("g1", [Message(content=text, role_type="user", role=["James", "John"][n % 2],
                                                timestamp=T0 + timedelta(seconds=n))], conversation_id="s1")
        res = await m.search("What did they say about bowling?", "g1", limit=10, include=["episodes"])
        assert len(res.top_candidates) == EVIDENCE_CONTEXT_RANK
        assert [e.episode.id for e in res.episodes] == res.top_candidates[:len(res.episodes)]
        plain = await m.search("What did they say about bowling?", "g1", limit=10, include=["episodes"],
                               turn_context=False)
        assert plain.top_candidates == []
