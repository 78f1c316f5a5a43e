"""Rescoring of candidate messages (episodes) with their conversation around them and the date a question names.

A message alone is a weak unit: an answer ("I've had them for 3 years!") carries little of the question it
answers, and the news of a conversation spreads over several turns. These terms are added to a candidate's
fused BM25 + vector score:

- context: ``CONTEXT_WEIGHT`` x the best score of the closest candidates before and after it in the same
  conversation (the turns a message answers or is answered by);
- session: ``SESSION_WEIGHT`` x the strength of its conversation, the mean of the conversation's top
  ``SESSION_TOP`` scores, relative to the strongest conversation (a session-level unit);
- answer: ``ANSWER_WEIGHT`` x the fused score of the turn right before it when that turn holds a question
  (a "?") and is among the best ``ANSWER_POOL`` candidates: a reply answers what was asked. Not for
  when-questions, whose answer is lifted by the time it tells (below);
- date: ``DATE_BOOST`` when the question names a day or month (``search.dates``) and the message was said in
  that window;
- time answer: ``TIME_ANSWER_BOOST`` when the question asks when ("When did...", "How long...", "What year...")
  and one of the best ``TIME_ANSWER_POOL`` candidates tells a time ("yesterday", "last week", "3 years ago"):
  the turn that answers a when-question says when (``lift_time_answers``);
- time answer, before the rescoring: ``TIME_ANSWER_FUSED_BOOST`` for a when-question's candidate that tells a time
  and is among the best ``TIME_ANSWER_FUSED_POOL`` fused candidates but fell out of the best ``TIME_ANSWER_POOL``
  rescored ones: a session opener that tells news relatively has neighbours that say little and a session that says
  it once (``lift_fused_time_answers``);
- question: minus ``QUESTION_PENALTY`` for a turn that asks, among the best ``TIME_ANSWER_POOL``, when the
  question does not ask when (``lower_questions``);
- told in the window: ``TOLD_IN_WINDOW_BOOST`` when the question names a day or month without asking when ("What
  did James do on March 16, 2022?") and one of the best ``TIME_ANSWER_POOL`` was said in that window and tells a
  time ("yesterday I went bowling", said on the 17th): what happened on a named day is told relatively, shortly
  after it (``lift_told_in_window``).
- name: ``NAME_ANSWER_BOOST`` when the question is answered by a name ("Which city...", "Who...", "Where...", "What
  books...") and one of the best ``NAME_ANSWER_POOL`` names something other than the speakers (a capitalised word
  inside a sentence, a title in quotes: "The trip took us to Porto"; ``lift_name_answers``).

Weights tuned on LoCoMo conversations 0-4 (paper recall@10 0.745 -> 0.773 -> 0.804 with the answer and
question terms and the wider time words, @5 0.614 -> 0.667 -> 0.694), confirmed on 5-9 (@10 0.696 -> 0.750 ->
0.765, @5 0.588 -> 0.629 -> 0.648), see docs/retrieval.md. Messages without a conversation id get the date,
time-answer and question terms only. ``rank_turns`` runs the whole stage over a store.
"""

from __future__ import annotations

import calendar
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime

from loregraph.graph.types import Episode
from loregraph.search.dates import Window, named_window
from loregraph.store.base import Store

CONTEXT_WEIGHT = 0.2
SESSION_WEIGHT = 0.4
SESSION_TOP = 3
DATE_BOOST = 0.4
TIME_ANSWER_BOOST = 0.2  # LoCoMo 0-4: temporal recall@5 0.768 -> 0.812 (5-9: 0.555 -> 0.618), recall@10 the same
TIME_ANSWER_POOL = 20
# LoCoMo 0-4: recall@10 0.8347 -> 0.8357, @5 0.7566 -> 0.7576 (temporal @5 0.857 -> 0.864); 5-9, once: @10 0.8015 ->
# 0.8042 (temporal @10 0.751 -> 0.767), @5 0.7239 -> 0.7233 (temporal @5 0.675 -> 0.672). Best 20 / 40 / 60 fused:
# @10 0.8347 / 0.8347 / 0.8337; + 0.2 / 0.3 / 0.6 over 20: @10 0.8352 / 0.8347 / 0.8337
TIME_ANSWER_FUSED_POOL = 30
TIME_ANSWER_FUSED_BOOST = 0.4
# LoCoMo 0-4: recall@10 0.775 -> 0.790, @5 0.669 -> 0.690 (5-9: 0.751 -> 0.759, 0.630 -> 0.639); 0.6 no better,
# any question before a candidate (not only the turn right before it) 0.784; when-questions: temporal @5 -0.02
ANSWER_WEIGHT = 0.4
ANSWER_POOL = 30
# LoCoMo 0-4: recall@10 0.790 -> 0.798, @5 0.690 -> 0.693 (5-9: 0.759 -> 0.762, 0.639 -> 0.650); 0.15 / 0.25:
# 0.795 / 0.799; when-questions: @5 -0.001
QUESTION_PENALTY = 0.2
# LoCoMo 0-4: recall@10 0.823 -> 0.828, @5 0.746 -> 0.754 (5-9: 0.790 -> 0.794, 0.716 -> 0.717; id 2 @5 0.662 ->
# 0.675); 0.1 / 0.2 / 0.4 / 0.6: @10 0.827 / 0.828 / 0.828 / 0.826; over the best 10 / 30: 0.824 / 0.827
TOLD_IN_WINDOW_BOOST = 0.3
# LoCoMo 0-4: recall@10 0.8318 -> 0.8329, @5 0.7543 -> 0.7566 (5-9: 0.7982 -> 0.7993, @5 0.7173 -> 0.7249; multi-hop
# @10 0.420 -> 0.439); 0.1 / 0.2 / 0.4 / 0.6: @10 0.8320 / 0.8330 / 0.8329 / 0.8324, @5 0.7548 / 0.7548 / 0.7576 /
# 0.7581
NAME_ANSWER_BOOST = 0.3
# over the best 60 instead of 20: LoCoMo 0-4 recall@10 0.8329 -> 0.8347 (multi-hop 0.480 -> 0.493), @5 the same; 10 /
# 30 / 40 / 100: @10 0.8325 / 0.8332 / 0.8342 / 0.8347; with the best 60, + 0.2 / 0.4: @10 0.8330 / 0.8325
NAME_ANSWER_POOL = 60
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_TELLS_TIME = re.compile(
    r"\b(yesterday|tomorrow|tonight|today|recently|ago|since|"
    rf"last (week|night|month|year|weekend|time|summer|winter|spring|fall|{_DAYS})|"
    r"next (week|month|year|weekend|summer)|this (morning|week|weekend|month|year|summer)|"
    r"just (got|finished|started)|(days|weeks|months|years) back|"
    rf"on ({_DAYS})|"
    # a date or a span: "in 2013", "in June", "for 4 years", "a few weeks"; LoCoMo 0-4 recall@10 +0.002
    r"(19|20)\d\d|january|february|march|april|june|july|august|september|october|november|december|"
    r"\d+ (days?|weeks?|months?|years?)|(a|one|two|three|four|five|six|few|couple of) (days?|weeks?|months?|years?)|"
    r"weekend|when i was)\b", re.I)
# "How many weeks passed between...", "How many years...": a span of time is asked like "how long"
_ASKS_WHEN = re.compile(r"^\s*(when|what (year|month|date|day|time))\b|\bhow long\b|\bwhich (year|month)\b|"
                        r"\bhow many (days|weeks|months|years)\b", re.I)


# "Where...", "Who...", "Which city...", "What books...", "What is the name...": the answer is a name
_NAME_KINDS = (r"(city|cities|country|countries|state|states|place|places|town|towns|book|books|novel|novels|movie|"
               r"movies|film|films|show|shows|series|game|games|song|songs|band|bands|team|teams|author|authors|artist|"
               r"artists|company|companies|name|names)")
_ASKS_NAME = re.compile(rf"^\s*(where|who|whom|whose|which {_NAME_KINDS}|what {_NAME_KINDS}|what is the name)\b", re.I)
# a capitalised word inside a sentence (not after its start), or a span in double quotes (a title)
_INNER_CAPITAL = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+|\"[^\"]+\"")
_NOT_NAMES = frozenset(["I", "Hey", "Hi", "Thanks", "Wow", "Yeah", "Yes", "No", "Oh", "Congrats", "Awesome", "Great",
                        "Nice", *calendar.day_name, *calendar.month_name[1:]])
_SPEAKER_PREFIX = re.compile(r"^[^\n()]*\([^()\n]*\):\s*")  # spec 000: "{role}({role_type}): {content}"


def asks_name(question: str) -> bool:
    """A question answered by a name: "Where...", "Who...", "Which city...", "What books...", "What is the name..."."""
    return bool(_ASKS_NAME.search(question))


def names_something(text: str, speakers: Collection[str] = ()) -> bool:
    """A message that names something: a capitalised word inside a sentence that is no speaker's name, weekday or
    month ("I was in Chicago"), or a title in double quotes."""
    body = _SPEAKER_PREFIX.sub("", text, count=1)
    for m in _INNER_CAPITAL.finditer(body):
        word = m.group(0)
        if word.startswith('"') or (word not in _NOT_NAMES and word not in speakers):
            return True
    return False


def lift_name_answers(scored: list[tuple[str, float]], said: Mapping[str, tuple[str | None, str]]
                      ) -> list[tuple[str, float]]:
    """``scored`` (best first) with ``NAME_ANSWER_BOOST`` added to each candidate that ``names_something`` other than
    the speakers, among the first ``NAME_ANSWER_POOL``; for a question that ``asks_name``. ``said``: candidate id ->
    its speaker and content (the speakers are those of ``said``)."""
    speakers = {role for role, _ in said.values() if role}
    return _shift_head(scored, lambda i: i in said and names_something(said[i][1], speakers),
                       NAME_ANSWER_BOOST, NAME_ANSWER_POOL)


def asks_when(question: str) -> bool:
    """A question about the time of something: "When did...", "How long...", "What year...", "Which month...",
    "How many weeks..."."""
    return bool(_ASKS_WHEN.search(question))


def tells_time(text: str) -> bool:
    """A message that places something in time relative to when it was said ("yesterday", "last week", "ago")."""
    return bool(_TELLS_TIME.search(text))


def _shift_head(scored: list[tuple[str, float]], which: Callable[[str], bool],
                delta: float, pool: int | None = None) -> list[tuple[str, float]]:
    """``scored`` (best first) with ``delta`` added to those of the first ``pool`` (``TIME_ANSWER_POOL``) whose id
    is ``which``, sorted again; the rest as it was."""
    pool = TIME_ANSWER_POOL if pool is None else pool
    head = [(i, s + delta if which(i) else s) for i, s in scored[:pool]]
    return sorted(head, key=lambda kv: -kv[1]) + scored[pool:]


def lift_time_answers(scored: list[tuple[str, float]], texts: Mapping[str, str]) -> list[tuple[str, float]]:
    """``scored`` (best first) with ``TIME_ANSWER_BOOST`` added to each candidate whose text tells a time, among
    the first ``TIME_ANSWER_POOL``; for a question that ``asks_when``."""
    return _shift_head(scored, lambda i: tells_time(texts.get(i, "")), TIME_ANSWER_BOOST)


def lift_fused_time_answers(scored: list[tuple[str, float]], fused: Sequence[str], texts: Mapping[str, str]
                            ) -> list[tuple[str, float]]:
    """``scored`` (rescored, best first) with ``TIME_ANSWER_FUSED_BOOST`` added to each candidate that tells a time,
    is among the first ``TIME_ANSWER_FUSED_POOL`` of ``fused`` (ids best first before the rescoring) and outside the
    first ``TIME_ANSWER_POOL`` of ``scored`` (lifted by ``lift_time_answers`` already); sorted again. For a question
    that ``asks_when``."""
    head = {i for i, _ in scored[:TIME_ANSWER_POOL]}
    lifted = {i for i in fused[:TIME_ANSWER_FUSED_POOL] if i not in head and tells_time(texts.get(i, ""))}
    if not lifted:
        return scored
    return sorted(((i, s + TIME_ANSWER_FUSED_BOOST if i in lifted else s) for i, s in scored), key=lambda kv: -kv[1])


def lift_told_in_window(scored: list[tuple[str, float]], texts: Mapping[str, str],
                        places: Mapping[str, tuple[str | None, datetime]], window: Window) -> list[tuple[str, float]]:
    """``scored`` (best first) with ``TOLD_IN_WINDOW_BOOST`` added to each candidate said in ``window`` whose text
    tells a time, among the first ``TIME_ANSWER_POOL``; for a question that names a day or month without asking
    when ("yesterday I went bowling" answers "What did James do on March 16?")."""
    return _shift_head(scored, lambda i: i in places and places[i][1] in window and tells_time(texts.get(i, "")),
                       TOLD_IN_WINDOW_BOOST)


def lower_questions(scored: list[tuple[str, float]], texts: Mapping[str, str]) -> list[tuple[str, float]]:
    """``scored`` (best first) with ``QUESTION_PENALTY`` taken from each candidate that ``asks``, among the first
    ``TIME_ANSWER_POOL``: a turn that asks holds no answer (its reply is lifted by the answer term, and the best
    turn's neighbours still come with it)."""
    return _shift_head(scored, lambda i: asks(texts.get(i, "")), -QUESTION_PENALTY)


def asks(text: str) -> bool:
    """A message that asks something: it ends with a question mark."""
    return text.rstrip().endswith("?")


def holds_question(text: str) -> bool:
    """A message with a question in it, anywhere ("Are they yours? They're so graceful!")."""
    # anywhere rather than at the end: LoCoMo 0-4 recall@10 0.798 -> 0.804, @5 0.693 -> 0.694 (5-9: 0.762 ->
    # 0.765, 0.650 -> 0.648); about 10 adjacency reads a search instead of 8
    return "?" in text


def rescore_turns(ranked: list[tuple[str, float]], places: Mapping[str, tuple[str | None, datetime]],
                  window: Window | None, answers: Mapping[str, str] | None = None) -> list[tuple[str, float]]:
    """``ranked`` (episode id, fused score) rescored with context, answer, session and date terms; best first.
    ``places``: each candidate's conversation id and ``valid_at``; ids missing from it (filtered out) are dropped.
    ``answers``: candidate id -> the id of the question turn right before it (``answers_of``)."""
    base = {i: s for i, s in ranked if i in places}
    by_conversation: dict[str, list[str]] = defaultdict(list)
    for i in base:
        conv = places[i][0]
        if conv is not None:
            by_conversation[conv].append(i)
    score = dict(base)
    strength: dict[str, float] = {}
    for conv, ids in by_conversation.items():
        ids.sort(key=lambda i: (places[i][1], i))
        for n, i in enumerate(ids):
            around = [base[ids[j]] for j in (n - 1, n + 1) if 0 <= j < len(ids)]
            score[i] = base[i] + CONTEXT_WEIGHT * max(around, default=0.0)
            if answers and (question := answers.get(i)) in base:
                score[i] += ANSWER_WEIGHT * base[question]
        top = sorted((score[i] for i in ids), reverse=True)[:SESSION_TOP]
        strength[conv] = sum(top) / SESSION_TOP
    strongest = max(strength.values(), default=0.0) or 1.0
    for conv, ids in by_conversation.items():
        for i in ids:
            score[i] += SESSION_WEIGHT * strength[conv] / strongest
    if window is not None:
        for i in score:
            if places[i][1] in window:
                score[i] += DATE_BOOST
    return sorted(score.items(), key=lambda kv: -kv[1])


def answers_of(store: Store, questions: Sequence[Episode], places: Mapping[str, tuple[str | None, datetime]]
               ) -> dict[str, str]:
    """The candidates (ids in ``places``) that come right after a turn of ``questions`` that ``holds_question``, in
    the same conversation: answer id -> question id. One adjacency read per such turn."""
    out: dict[str, str] = {}
    for q in questions:
        if q.conversation_id is None or not holds_question(q.content):
            continue
        after = [e for e in store.adjacent_episodes(q.group_id, q.id, 1) if e.valid_at > q.valid_at]
        if after and after[0].id in places:
            out.setdefault(after[0].id, q.id)
    return out


def rank_turns(store: Store, query: str, ranked: list[tuple[str, float]],
               places: Mapping[str, tuple[str | None, datetime]], limit: int,
               load: Callable[[list[str]], dict[str, Episode]],
               load_texts: Callable[[list[str]], dict[str, tuple[str | None, str]]] | None = None
               ) -> tuple[list[tuple[str, float]], dict[str, Episode]]:
    """The episode stage with turn context: ``ranked`` (fused BM25 + vector, best first) rescored (answer,
    context, session, date and time-answer terms), and the loaded episodes of at least the best ``limit``.
    ``places``: the candidates that passed the filters; ``load``: ids -> episodes of the searched groups;
    ``load_texts``: ids -> their speaker and content (``Store.episode_texts``), for the name term's wider pool and the
    fused candidates of the time answer before the rescoring (None: ``load``)."""
    when = asks_when(query)
    eps = {} if when else load([i for i, _ in ranked if i in places][:ANSWER_POOL])
    answers = {} if when else answers_of(store, list(eps.values()), places)
    window = named_window(query)
    chosen = rescore_turns(ranked, places, window, answers)
    missing = [i for i, _ in chosen[:max(limit, TIME_ANSWER_POOL)] if i not in eps]
    if missing:
        eps.update(load(missing))
    texts = {i: e.content for i, e in eps.items()}
    # the turn answering a when-question says when; the answer to another question is no question
    chosen = lift_time_answers(chosen, texts) if when else lower_questions(chosen, texts)
    if when:  # a turn that tells when, pushed down by the rescoring
        fused = [i for i, _ in ranked if i in places][:TIME_ANSWER_FUSED_POOL]
        if unread := [i for i in fused if i not in texts]:  # a light read: speaker and content only
            got = load_texts(unread) if load_texts else {i: (e.role, e.content) for i, e in load(unread).items()}
            texts.update({i: content for i, (_, content) in got.items()})
        chosen = lift_fused_time_answers(chosen, fused, texts)
        if risen := [i for i, _ in chosen[:limit] if i not in eps]:  # risen from beyond the loaded ones
            eps.update(load(risen))
    if window is not None and not when:  # what happened on the named day is told in its window, relatively
        chosen = lift_told_in_window(chosen, texts, places, window)
    if asks_name(query):  # "Which city...": the answer names one
        said = {i: (e.role, e.content) for i, e in eps.items()}
        wider = [i for i, _ in chosen[:NAME_ANSWER_POOL] if i not in said]
        if wider:  # a light read: speaker and content only
            said.update(load_texts(wider) if load_texts else
                        {i: (e.role, e.content) for i, e in load(wider).items()})
        chosen = lift_name_answers(chosen, said)
        if lifted := [i for i, _ in chosen[:limit] if i not in eps]:  # risen from beyond the loaded ones
            eps.update(load(lifted))
    return chosen, eps
