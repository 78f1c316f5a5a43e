"""Word classes of ordinary English (pronouns, role nouns, verb classes, markers), loaded from
``extract/data/word_classes.json``. Names of things live in the lexicon, not here."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

_DATA = Path(__file__).resolve().parent.parent / "data" / "word_classes.json"


def _load() -> dict[str, Any]:
    return json.loads(_DATA.read_text(encoding="utf-8"))


_W = _load()


def _set(key: str) -> frozenset[str]:
    words = frozenset(_W[key])
    if key in _W.get("co_prefixed_classes", ()):  # "co-supervisor", "co-translator": a role shared is a role
        words |= {f"co-{w}" for w in words if w.isalpha() and not w.startswith("co")}
    return words


def _pairs(key: str) -> frozenset[tuple[str, str]]:
    return frozenset((a, b) for a, b in _W[key])


def word_class(key: str) -> frozenset[str]:
    """The word class ``key`` of ``word_classes.json`` (KeyError if there is none)."""
    return _set(key)


SPEAKER_WORDS = _set("speaker_words")
WE_WORDS = _set("we_words")
PERSON_PRONOUNS = _set("person_pronouns")
IT_WORDS = _set("it_words")
PRONOUNS = _set("pronouns")
ORG_SUFFIXES = _set("org_suffixes")
TEAM_HEADS = _set("team_heads")
GENERIC_ADJ = _set("generic_adj")
ORG_NOUNS = _set("org_nouns")
PROJECT_HEADS = _set("project_heads")
WORK_ITEM_HEADS = _set("work_item_heads")
PROJECT_APPOS_HEADS = _set("project_appos_heads")
TOOL_HEADS = _set("tool_heads")
CONCEPT_HEADS = _set("concept_heads")
ROLE_NOUNS = _set("role_nouns")
WORK_THINGS = _set("work_things")  # things of one's work kept in a tool: invoices, notes, test plans
ORG_ROLE_NOUNS = _set("org_role_nouns")
FRIEND_ROLES = _set("friend_roles")
HUMAN_AGENT_VERBS = _set("human_agent_verbs")
USE_VERBS = _set("use_verbs")
PREFER_VERBS = _set("prefer_verbs")
DECIDE_VERBS = _set("decide_verbs")
DEPEND_VERBS = _set("depend_verbs")
WORK_VERBS = _set("work_verbs")
SWITCH_VERBS = _set("switch_verbs")
LEAVE_VERBS = _set("leave_verbs")
STOP_VERBS = _set("stop_verbs")
KNOW_VERBS = _set("know_verbs")
NON_USE_VERBS = _set("non_use_verbs")
FOND_OF = _set("fond_of")
FOND_OF_PAIRS = _pairs("fond_of_pairs")
COLLAB_VERBS = _set("collab_verbs")
PERSON_SUBJ_VERBS = _set("person_subj_verbs")
PLAN_VERBS = _set("plan_verbs")
TELLING_VERBS = _set("telling_verbs")  # "I wanted to tell you (that) ...": the plan is the telling, not the news
MODALS = _set("modals")
HEDGES = _set("hedges")
FUTURE_MARKERS: tuple[str, ...] = tuple(_W["future_markers"])
ENDED_MARKERS: tuple[str, ...] = tuple(_W["ended_markers"])
ALONE_MARKERS: tuple[str, ...] = tuple(_W["alone_markers"])
CLAUSE_MARKERS = _set("clause_markers")
SUBJ_PRONOUNS = _set("subj_pronouns")
EVALUATIVE_ADJ = _set("evaluative_adj")
GENERIC_CAPS = _set("generic_caps")
HONORIFICS = _set("honorifics")
STOP_CAPS = _set("stop_caps")
ORG_OF_HEADS = _set("org_of_heads")
PEOPLE_NOUNS = _set("people_nouns")
PLACE_HEADS = _set("place_heads")
INTERJECTIONS = _set("interjections")
GREETING_WORDS = _set("greeting_words")
PET_NOUNS = _set("pet_nouns")
PET_ADJECTIVES = _set("pet_adjectives")
ACQUIRING_VERBS = _set("acquiring_verbs")  # "we adopted a kitten", "I got a puppy": a pet of one's own from then
HUMAN_LANGUAGES = _set("human_languages")  # "learning German": a language spoken, no tool
METHOD_HEADS = _set("method_heads")  # "the Pomodoro Technique": a method, a concept
BREED_NOUNS = _set("breed_nouns")  # "Jack Russell mixes": a breed, no name of one animal
LIGHT_GERUNDS = _set("light_gerunds")  # "I love being ...", "I love finding ...": no activity by themselves
PASTIMES = _set("pastimes")  # "I've been knitting a lot": a pastime, practised
CLASS_NOUNS = _set("class_nouns")  # "a pottery class": what it teaches is an activity
CLASS_TAKING_VERBS = _set("class_taking_verbs")  # "I'm taking / tried a pottery class": its pupil
PRACTICE_VERBS = _set("practice_verbs")  # "I do yoga", "keep up with X": verbs of practising a known taste
INSTRUMENTS = _set("instruments")  # "I play the cello": an instrument played, a practice
INSTRUMENT_VERBS = frozenset({"play", "learn", "practice", "practise"})  # what one does with an instrument
TASTE_PERSON_NOUNS = _set("taste_person_nouns")  # "a Rhino man", "a Trello gal": a person of some taste
TAKING_UP_VERBS = _set("taking_up_verbs")  # "I started surfing", "I took up knitting": an activity taken up
TAKING_UP_WITH_UP = _set("taking_up_with_up")  # "took up", "picked up": these take an activity up only with "up"
INTEREST_PAIRS = _pairs("interest_pairs")
USE_IMPLYING_PAIRS = _pairs("use_implying_pairs")
MOVING_VERBS = _set("moving_verbs")  # verbs that move a thing somewhere ("moved the files to X")
GROUP_RUNNING_VERBS = _set("group_running_verbs")  # running a club or a choir is belonging to it
FINISH_VERBS = _set("finish_verbs")
DONE_MARKERS: tuple[str, ...] = tuple(_W["done_markers"])
MEMBERSHIP_WORDS = _set("membership_words")
TIME_WORDS: dict[str, Any] = _W["time_words"]
GROUP_HEADS = _set("group_heads")
JOINABLE_HEADS = _set("joinable_heads")  # "I joined a chess forum": joined, a group like a club
COMMUNITY_HEADS = _set("community_heads")  # "I joined a choir", "we joined a gym": a group joined needs no name
# groups one belongs to beside one's work (a club, a band, a church): joining one ends no other membership, and
# moving to a new employer or group ends none of them
PASTIME_GROUP_HEADS = (_set("group_heads") | COMMUNITY_HEADS | _set("joinable_heads")) - _set("team_heads")
OWN_WORK_NOUNS = _set("own_work_nouns")  # "my album", "our podcast": a work the speaker makes
EDITION_WORDS = _set("edition_words")  # "my new album", "her debut novel": which one, not what kind
CREATIVE_HEADS = _set("creative_heads")
TASTE_KINDS = _set("taste_kinds")  # "my favourite dish is X": kinds of things one has a taste for
CONSUMING_VERBS = _set("consuming_verbs")  # "I watched X", "we played X": a work taken in
VERDICT_WORDS = _set("verdict_words")  # "It was awesome!", "Great game, so addictive!", "loved it": praise of it
GENERIC_NOUNS = _set("generic_nouns")
VISIT_VERBS = _set("visit_verbs")
WORK_OF_HEADS = _set("work_of_heads")
WORK_NOUNS = _set("work_nouns")
MAKING_VERBS = _set("making_verbs")
TOOL_SLOT_VERBS = _set("tool_slot_verbs")  # verbs whose "in"/"with" object can be a tool ("write in python")
SETUP_VERBS = _set("setup_verbs")  # verbs of running or keeping a part of one's setup ("billing runs on X")
WORK_VERBS_OF_TITLES = _set("title_verbs")
QUALITY_ADJ_SUFFIXES: tuple[str, ...] = tuple(_W["quality_adj_suffixes"])

ALL_VERBS = (USE_VERBS | PREFER_VERBS | DECIDE_VERBS | DEPEND_VERBS | WORK_VERBS | SWITCH_VERBS
             | LEAVE_VERBS | STOP_VERBS | KNOW_VERBS | COLLAB_VERBS | {"report"})

COMMON_ZIPF = 4.5  # Zipf frequency from which a word is an everyday word ("nature" 5.0; "reed" 4.1, "zofia" 2.0)


@functools.cache
def _name_list() -> Any:
    from gender_guesser.detector import Detector  # lazy: it reads its name list on first use

    return Detector(case_sensitive=False)


def first_name(word: str) -> bool:
    """A known given name ("Mark", "Chase", "Luna"; ``gender-guesser``'s list of about 40,000), whatever else the
    word means."""
    return bool(_name_list().get_gender(word) != "unknown")


NOUN_ZIPF = 3.5  # from it a word is known in general text ("sushi" 3.7, "garlic" 3.9; "zofia" 2.0)
OPENING_ZIPF = 3.0  # from it a capital opening a sentence, with only NER behind it, is a word ("setbacks" 3.2)
SHORT_NAME_ZIPF = 4.0  # below it a lower-case word can stand for a thing named with it ("churn" 3.1, "gaming" 4.4)


def common_word(word: str, zipf: float = COMMON_ZIPF) -> bool:
    """An everyday English word by its frequency in general text (``wordfreq``): Zipf ≥ ``zipf``."""
    from wordfreq import zipf_frequency  # lazy: it loads its word list on first use

    return bool(zipf_frequency(word, "en") >= zipf)


CODE_NAME_SUFFIXES = _set("code_name_suffixes")
WORD_PREFIXES = _set("word_prefixes")
CODE_NAME_HOLDERS = _set("code_name_holders")
CODE_NAME_ZIPF = 3.2  # a part rarer than this makes a lower-case hyphenated word a name ("quill-py", "tern-kt")
_CODE_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+$")


def code_name(text: str) -> bool:
    """A lower-case hyphenated or underscored name of software ("tally-core", "quill-go", "toml_edit"), not an
    English compound ("day-to-day", "follow-up", "real-time", "re-run"): a rare part or a code suffix, no part a
    function word or a one-letter piece, and no word prefix first."""
    if not _CODE_NAME.match(text):
        return False
    parts = re.split(r"[-_]", text)
    if any(len(p) < 2 for p in parts) or parts[0] in WORD_PREFIXES:
        return False
    if any(p in _FUNCTION_WORDS for p in parts):
        return False
    return parts[-1] in CODE_NAME_SUFFIXES or any(not common_word(p, CODE_NAME_ZIPF) for p in parts)


_FUNCTION_WORDS = frozenset({"a", "an", "and", "at", "by", "for", "in", "of", "on", "or", "the", "to", "up", "with",
                             "out", "off", "over", "down", "it", "be", "is", "as"})


# the precision gate's classes (stage 7)
OTHER_OWNER_WORDS = _set("other_owner_words")
OWN_OWNER_WORDS = _set("own_owner_words")
ADVICE_VERBS = _set("advice_verbs")
PAST_LIFE_MARKERS: tuple[str, ...] = tuple(_W["past_life_markers"])
DETERMINERS = _set("determiners")


def takes_up(verb: Any) -> bool:
    """The verb takes an activity up: "started", "began", "took up", "picked up" (not "took", "picked")."""
    lem = verb.lemma_.lower()
    return lem in TAKING_UP_VERBS and (
        lem not in TAKING_UP_WITH_UP or any(c.dep_ == "prt" and c.lower_ == "up" for c in verb.children))
