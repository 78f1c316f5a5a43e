"""Stage 2b, names the rules leave undecided: a small learned typer.

The context rules of ``entity_types`` type most names; some capitalised names keep no type, or only the name
finder's guess ("Vale is worth setting up", "interviews get transcribed with Otter", "Nornir instead of more
Ansible"). For those, a multinomial logistic regression over the name's shape and its context (the name
finder's label, the words around it, its place in the parse, the rules' votes) picks person, tool,
organization, project, concept or nothing. It was trained with ``bench/extraction/train_name_types.py`` on
open probe sets written for this project (never on the dev sets); its weights are data
(``extract/data/name_types.json``), applied here with numpy, so nothing is trained or downloaded at run time.
A type it gives is *thin*: the name becomes an entity only when a fact names it, unless the model is very
sure.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from loregraph.extract.local.entity_types import NOT_NAME_LABELS, PLACE_LABELS
from loregraph.extract.local.kinds import PERSON, TOOL
from loregraph.extract.local.state import Mention, Parse, camel, lemma, mention_head
from loregraph.extract.local.words import common_word, first_name, word_class

MODEL_FILE = Path(__file__).resolve().parent.parent / "data" / "name_types.json"
NONE = "none"
MIN_PROBABILITY = 0.55  # below this the model says nothing
SURE_PROBABILITY = 0.80  # at or above this the name is an entity even with no fact about it
# the types it may give: across held-out open sets its tools and persons were right most of the time, its
# organisations, projects and concepts seldom (the rules and the name finder keep deciding those)
GIVEN_TYPES = frozenset({TOOL, PERSON})
_TOOL_HEADS = word_class("tool_heads")
_ORG_SUFFIXES = word_class("org_suffixes")
_PROJECT_HEADS = word_class("project_heads")
_TEAM_HEADS = word_class("team_heads")
_HUMAN_LANGUAGES = word_class("human_languages")
_MOTION_VERBS = word_class("motion_verbs") | word_class("visit_verbs")
_SETUP_THINGS = word_class("setup_things")
_PEOPLE_NOUNS = word_class("people_nouns") | word_class("friend_roles")
_KIN_WORDS = word_class("friend_roles") | frozenset({"mum", "mom", "mam", "dad", "nan", "gran", "grandma", "grandad",
                                                   "grandpa", "auntie", "aunty", "uncle"})


def needs_a_type(st: Parse, m: Mention) -> bool:
    """A capitalised name the rules left without a type, or typed thinly by the name finder alone (and no short
    form of a longer known name)."""
    return _undecided(m) and not _set_aside(st, m) and not _part_of_a_known_name(st, m) \
        and not _a_place_gone_to(st, m)


def _undecided(m: Mention) -> bool:
    return m.source == "cap" and not m.place and not m.addressed and not m.kind and not m.is_speaker \
        and m.ner not in NOT_NAME_LABELS and (not m.type or m.thin)


def _set_aside(st: Parse, m: Mention) -> bool:
    """Names the rules set aside on purpose stay so: a language or a nationality ("learning German"), a town
    known to general text ("chose Lisbon"), a lone capital opening a sentence ("Dance is my therapy"),
    a lone word only the name finder calls a person ("obsessed with Ratatouille", "relying on Corvin"), a verb or
    a relative taken into a name ("Called Mum"), a release name after its tool ("ROS 2 Humble")."""
    first = m.name.split()[0].lower() if m.name.split() else ""
    if m.ner in ("NORP", "LANGUAGE") or first in _HUMAN_LANGUAGES:
        return True
    if m.ner in PLACE_LABELS and common_word(m.name.lower(), 1.0):
        return True
    if m.weak and m.end - m.start == 1:
        return True  # ("Gad to hear ...": a lone capital opening a sentence needs the rules' evidence)
    if st.doc[m.start].tag_ in ("VB", "VBD", "VBN", "VBG") or any(
            w.lower() in _KIN_WORDS for w in m.name.split()):
        return True  # "Called Mum for a chat": a verb, a relative
    k = m.start - 1
    if k >= 0 and st.at[k] != -1 and st.mentions[st.at[k]].type == TOOL:
        return True  # "ROS 2 Humble": a release name right after its tool's name
    return m.rejected and m.ner == "PERSON" and m.end - m.start == 1 and not camel(m.name)


def _a_place_gone_to(st: Parse, m: Mention) -> bool:
    """ "my cousin went through Harwick", "we drove to Kelso", "my bike lives in Hackney": a name someone or
    something goes to, through or lives in is a place (but "bookings go through MoeGo", "my notes live in X": the
    things of one's setup go through, or live in, a tool)."""
    head = st.doc[m.end - 1]
    verb = head.head.head
    if head.dep_ != "pobj" or lemma(verb) not in _MOTION_VERBS:
        return False
    subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    return subj is None or subj.pos_ in ("PRON", "PROPN") or subj.lower_ in _PEOPLE_NOUNS \
        or st.at[subj.i] != -1 or m.ner in PLACE_LABELS \
        or (subj.lower_ not in _SETUP_THINGS and lemma(subj) not in _SETUP_THINGS)  # ("my bike lives in X")


def _part_of_a_known_name(st: Parse, m: Mention) -> bool:
    """ "Femi" beside "Femi Adebayo" (in this message or known before): the short form of a name the later
    stages resolve; typing it here would make it a second entity."""
    words = m.name.casefold().split()
    n = len(words)
    names = [c.name for c in st.ctx.candidates] + [a for c in st.ctx.candidates for a in c.aliases] \
        + [o.name for o in st.mentions if o is not m]
    for name in names:
        other = name.casefold().split()
        if len(other) > n and any(other[i:i + n] == words for i in range(len(other) - n + 1)):
            return True
    return False


def _shape(text: str) -> str:
    if any(ch.isdigit() for ch in text):
        return "digit"
    if "-" in text:
        return "hyphen"
    if camel(text):
        return "camel"
    if text.isupper() and len(text) > 1:
        return "upper"
    if text[:1].isupper():
        return "title"
    return "lower"


def _bucket(v: float) -> str:
    return "lo" if v < 0.5 else "mid" if v < 1.0 else "hi"


def _word_class(low: str) -> str:
    for name, words in (("tool_head", _TOOL_HEADS), ("org_suffix", _ORG_SUFFIXES), ("project_head", _PROJECT_HEADS),
                        ("team_head", _TEAM_HEADS)):
        if low in words:
            return name
    return ""


def name_features(st: Parse, m: Mention) -> dict[str, float]:
    """Binary features of one mention (names of the form ``kind=value``)."""
    doc = st.doc
    words = m.name.split()
    f: dict[str, float] = {"bias": 1.0, f"ner={m.ner or '-'}": 1.0, f"ntok={min(len(words), 3)}": 1.0,
                           f"shape={_shape(m.name)}": 1.0}
    if words and first_name(words[0]):
        f["first_name"] = 1.0
    if words and common_word(words[0].lower()):
        f["common_first"] = 1.0
    if words and all(common_word(w.lower()) for w in words):
        f["common_all"] = 1.0
    if words:
        cls = _word_class(words[-1].lower())
        if cls:
            f[f"last={cls}"] = 1.0
    for k, name in ((m.start - 1, "prev1"), (m.start - 2, "prev2"), (m.end, "next1"), (m.end + 1, "next2")):
        if 0 <= k < len(doc):
            t = doc[k]
            f[f"{name}={t.lower_ if not t.is_punct or t.text in '(),:-' else 'punct'}"] = 1.0
            if st.at[k] != -1 and st.mentions[st.at[k]].type:
                f[f"{name}_type={st.mentions[st.at[k]].type}"] = 1.0
        else:
            f[f"{name}=<edge>"] = 1.0
    head = mention_head(st, m)
    f[f"dep={head.dep_}"] = 1.0
    gov = head.head
    if head.dep_ == "pobj":
        f[f"prep={gov.lower_}"] = 1.0
        f[f"prep_gov={lemma(gov.head)}"] = 1.0
    elif head.dep_ in ("nsubj", "nsubjpass"):
        f[f"subj_of={lemma(gov)}"] = 1.0
    elif head.dep_ in ("dobj", "attr", "appos", "conj", "compound"):
        f[f"{head.dep_}_of={lemma(gov)}"] = 1.0
    if doc[m.start].is_sent_start:
        f["sent_start"] = 1.0
    for t, v in m.votes.items():
        if v > 0:
            f[f"vote_{t}={_bucket(v)}"] = 1.0
    if m.rejected:
        f["rejected"] = 1.0
    sent = doc[m.start].sent
    if any(st.at[k] != -1 and st.mentions[st.at[k]].type == TOOL and st.mentions[st.at[k]] is not m
           for k in range(sent.start, sent.end)):
        f["sent_has_tool"] = 1.0
    return f


class NameTypeModel:
    """Weights of a multinomial logistic regression: one row of class weights per feature."""

    def __init__(self, classes: list[str], weights: dict[str, list[float]]) -> None:
        self.classes = classes
        self.weights = weights

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> NameTypeModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(list(data["classes"]), {k: list(v) for k, v in data["weights"].items()})

    def probabilities(self, features: dict[str, float]) -> dict[str, float]:
        scores = [0.0] * len(self.classes)
        for name, value in features.items():
            row = self.weights.get(name)
            if row is not None:
                for i, w in enumerate(row):
                    scores[i] += w * value
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return {c: e / total for c, e in zip(self.classes, exps, strict=True)}


@lru_cache(maxsize=1)
def default_model() -> NameTypeModel | None:
    return NameTypeModel.load() if MODEL_FILE.exists() else None


def type_undecided_names(st: Parse, model: Any = None) -> None:
    """Give the rules' undecided names the model's type, when it is sure enough."""
    model = model if model is not None else default_model()
    if model is None:
        return
    for m in st.mentions:
        if not needs_a_type(st, m):
            continue
        probs = model.probabilities(name_features(st, m))
        best = max(probs, key=lambda c: probs[c])
        if best not in GIVEN_TYPES or probs[best] < MIN_PROBABILITY:
            continue
        m.type, m.rejected, m.guessed = best, False, True
        m.thin = probs[best] < SURE_PROBABILITY
        m.conf = round(0.5 + 0.45 * probs[best], 2)
