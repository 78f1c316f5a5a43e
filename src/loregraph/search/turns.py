"""Rescoring of candidate messages (episodes) with their conversation around them and the date a question names.

A message alone is a weak unit: an answer ("I've had them for 3 years!") carries little of the question it
answers, and the news of a conversation spreads over several turns. Three terms are added to a candidate's
fused BM25 + vector score:

- context: ``CONTEXT_WEIGHT`` x the best score of the closest candidates before and after it in the same
  conversation (the turns a message answers or is answered by);
- session: ``SESSION_WEIGHT`` x the strength of its conversation, the mean of the conversation's top
  ``SESSION_TOP`` scores, relative to the strongest conversation (a session-level unit);
- date: ``DATE_BOOST`` when the question names a day or month (``search.dates``) and the message was said in
  that window.

Weights tuned on LoCoMo conversations 0-4 (paper recall@10 0.744 -> 0.778), confirmed on 5-9 (0.695 -> 0.745),
see docs/retrieval.md. Messages without a conversation id get the date term only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

CONTEXT_WEIGHT = 0.2
SESSION_WEIGHT = 0.4
SESSION_TOP = 3
DATE_BOOST = 0.4


def rescore_turns(ranked: list[tuple[str, float]], places: Mapping[str, tuple[str | None, datetime]],
                  window: tuple[datetime, datetime] | None) -> list[tuple[str, float]]:
    """``ranked`` (episode id, fused score) rescored with context, session and date terms; best first.
    ``places``: each candidate's conversation id and ``valid_at``; ids missing from it (filtered out) are dropped."""
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
        top = sorted((score[i] for i in ids), reverse=True)[:SESSION_TOP]
        strength[conv] = sum(top) / SESSION_TOP
    strongest = max(strength.values(), default=0.0) or 1.0
    for conv, ids in by_conversation.items():
        for i in ids:
            score[i] += SESSION_WEIGHT * strength[conv] / strongest
    if window is not None:
        start, end = window
        for i in score:
            if start <= places[i][1] < end:
                score[i] += DATE_BOOST
    return sorted(score.items(), key=lambda kv: -kv[1])
