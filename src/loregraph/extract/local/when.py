"""Stage 3b, time words: "yesterday", "last Friday", "two weeks ago", "in May", "next month" found in a
message and resolved against the message time with ``dateparser`` (its ``RELATIVE_BASE``).

Finding a phrase is a small grammar over word classes (``time_words`` in ``word_classes.json``): a relative
word ("yesterday"), a shifter and a unit ("last week", "this past Friday"), a count and "ago", a preposition
and a month. Resolving it is dateparser's job; what it cannot read ("last weekend", "a few days ago") is
first rewritten into a form it reads (``time_words.rewrite``). The raw phrase is kept with the date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from loregraph.extract.local.words import TIME_WORDS

_W = TIME_WORDS
_UNITS = "|".join(sorted(_W["units"], key=len, reverse=True))
_DAYS = "|".join(sorted(_W["weekdays"], key=len, reverse=True))
_MONTHS = "|".join(sorted(_W["months"], key=len, reverse=True))
_COUNTS = "|".join(sorted(_W["counts"], key=len, reverse=True))
_RELATIVE = "|".join(sorted(_W["relative"], key=len, reverse=True))
_SHIFT = "|".join(sorted(_W["shifters"], key=len, reverse=True))
_MONTH_PREPS = "|".join(sorted(_W["month_prepositions"], key=len, reverse=True))

_PHRASE = re.compile(
    rf"\b(?:(?P<rel>{_RELATIVE})"
    rf"|(?P<ago>(?:{_COUNTS}|\d+)\s+(?:{_UNITS}|{_DAYS})s?\s+ago)"
    rf"|(?P<in>in\s+(?:{_COUNTS}|\d+)\s+(?:{_UNITS})s?)"
    rf"|(?P<shift>(?:{_SHIFT})\s+(?:{_UNITS}|{_DAYS}|{_MONTHS})s?)"
    rf"|(?P<on>on\s+(?:{_DAYS}))"
    rf"|(?P<month>(?:{_MONTH_PREPS})\s+(?:{_MONTHS})(?:\s+\d{{4}})?)"
    rf"|(?P<year>(?:{_MONTH_PREPS}|since|from)\s+(?:19[5-9]\d|20[0-4]\d)(?![\d%]|\s*(?:'s|’s)))"
    rf")\b(?!\s*(?:'s|’s))",
    re.I)
_NOT_BEFORE = re.compile(r"(?:n't|n’t|\bnot|\bnever)\s+(?:\w+\s+){0,3}$", re.I)
_HABIT = re.compile(rf"\b(?:every|each)\s+(?:{_DAYS}|{_UNITS})\b|\bon\s+(?:{_DAYS})s\b", re.I)


@dataclass(frozen=True, slots=True)
class TimeWord:
    """A time phrase of the message: its character span, the raw phrase and the date it names."""

    start: int
    end: int
    phrase: str
    when: datetime
    future: bool


def _rewrite(phrase: str) -> str:
    out = phrase.lower()
    for a, b in _W["rewrite"]:
        out = re.sub(rf"\b{re.escape(a)}\b", b, out)
    return out


_MONTH_ONLY = re.compile(rf"^(?:{_MONTHS})(?:\s+\d{{4}})?$", re.I)
_YEAR_ONLY = re.compile(r"^(?:\D+\s)?(\d{4})$")


@lru_cache(maxsize=4096)
def _parse(text: str, base: datetime, prefer: str) -> datetime | None:
    import dateparser  # lazy: its import takes a moment

    settings: dict[str, object] = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer,
                                   "RETURN_AS_TIMEZONE_AWARE": False}
    if _MONTH_ONLY.match(text):
        settings["PREFER_DAY_OF_MONTH"] = "first"  # "in May": the month, from its first day
    try:
        got = dateparser.parse(text, languages=["en"], settings=settings)
    except Exception:  # dateparser raises on odd input; an unread phrase is just not a date
        return None
    return got


def resolve_phrase(phrase: str, reference: datetime, future: bool = False) -> datetime | None:
    """The date ``phrase`` names, read against ``reference`` (past dates preferred unless ``future``)."""
    ref = reference.astimezone(UTC).replace(tzinfo=None) if reference.tzinfo else reference
    text = _rewrite(phrase)
    year = _YEAR_ONLY.match(text)
    if year:
        return datetime(int(year.group(1)), 1, 1, tzinfo=UTC)  # "since 2019": from the year's first day
    if text.startswith("on "):
        text = text[3:]
    for prep in sorted(_W["month_prepositions"], key=len, reverse=True):
        if text.startswith(prep + " ") and _MONTH_ONLY.match(text[len(prep) + 1:]):
            text = text[len(prep) + 1:]  # "back in March" → "March"; "last March" is read as it is
            break
    got = _parse(text, ref, "future" if future else "past")
    if got is None:
        return None
    return got.replace(tzinfo=UTC)


def find_time_words(text: str, reference: datetime, future_text: bool = False) -> list[TimeWord]:
    """Time phrases of ``text`` with the dates they name (habits such as "every Friday" are not dates)."""
    out = []
    habits = [(m.start(), m.end()) for m in _HABIT.finditer(text)]
    for m in _PHRASE.finditer(text):
        if any(a <= m.start() < b for a, b in habits):
            continue
        if m.group("in") and _NOT_BEFORE.search(text[:m.start()]):
            continue  # "haven't talked in a few days": how long something has not happened, no date
        phrase = m.group(0)
        low = phrase.lower()
        future = bool(m.group("in")) or low.split()[0] in _W["future_shifters"] or low in _W["future_relative"] \
            or (future_text and bool(m.group("on") or m.group("month")))
        when = resolve_phrase(phrase, reference, future=future)
        if when is not None:
            out.append(TimeWord(m.start(), m.end(), phrase, when, future))
    return out


def _phrase_tokens(doc: Any, w: TimeWord) -> list[Any]:
    return [t for t in doc if w.start <= t.idx < w.end]


def side_event(doc: Any, w: TimeWord) -> bool:
    """The phrase dates a thing or a side event, not the sentence's main verb: it hangs from a noun ("an epic
    trip last year") or from the verb of a clause that describes a noun ("a trip we took last year")."""
    toks = _phrase_tokens(doc, w)
    if not toks:
        return False
    inside = {t.i for t in toks}
    top = next((t for t in toks if t.head.i not in inside), toks[-1])
    head = top.head
    if head.pos_ in ("NOUN", "PROPN") and head.i not in inside:
        return True
    if head.dep_ in ("relcl", "acl"):
        return True
    subj = [c for c in head.children if c.dep_ == "nsubj" and c.i < head.i]
    # "a cruise we took last year": a clause set right after a noun, without "that" (the parser may miss it)
    return bool(subj and subj[0].i > 0 and doc[subj[0].i - 1].pos_ == "NOUN" and subj[0].pos_ == "PRON"
                and subj[0].i - 1 not in inside)


def progressive(doc: Any, start: int, end: int) -> bool:
    """The clause is in the present progressive ("I'm getting into pottery"): it says what goes on now, and a
    past time phrase of another clause does not date it."""
    for t in doc[start:end]:
        if t.tag_ == "VBG" and t.pos_ == "VERB" and any(
                c.dep_ == "aux" and c.lower_ in ("am", "'m", "’m", "is", "'s", "’s", "are", "'re", "’re")
                for c in t.children):
            return True
    return False


def continued_times(doc: Any, sent: Any, times: list[TimeWord]) -> list[TimeWord]:
    """The time phrases of the sentence before ``sent`` when it ended on a dash or a colon ("On Friday I got
    news - I'm in!"): the parser's sentence split, not the writer's."""
    if sent.start == 0:
        return []
    last = doc[sent.start - 1]
    if last.text not in ("-", "—", "–", ":"):
        return []
    prev = last.sent
    return [w for w in times if prev.start_char <= w.start < prev.end_char]


_PAST_TAGS = frozenset({"VBD"})


def settle_tense(doc: Any, start: int, end: int, w: TimeWord, reference: datetime) -> TimeWord:
    """A weekday or month read as future because the message speaks of the future elsewhere ("On Friday I got
    news - next month I'm off"), in a clause told in the past tense ("I got"): the past one."""
    if not w.future or w.when <= (reference if reference.tzinfo else reference.replace(tzinfo=UTC)):
        return w
    if not any(t.tag_ in _PAST_TAGS for t in doc[start:end]) or w.phrase.lower().split()[0] in _W["future_shifters"]:
        return w
    when = resolve_phrase(w.phrase, reference, future=False)
    return TimeWord(w.start, w.end, w.phrase, when, False) if when is not None else w
