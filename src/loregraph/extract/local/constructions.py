"""Stage 2b/4c, constructions: English constructions matched on the dependency parse with spaCy's
``DependencyMatcher``. The patterns and what each one says are data (``extract/data/constructions.json``);
this module only runs them.

A construction can give typing evidence (votes, before the types are decided: :func:`vote_constructions`),
turn a plain noun naming a group into an organisation mention ("Tomas from accounting"), and state a
relation or end one (per clause, with the other relation stages: :func:`relate_constructions`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from loregraph.extract.base import SPEAKER
from loregraph.extract.local.kinds import (
    CONCEPT,
    DECIDED,
    DEPENDS_ON,
    ORGANIZATION,
    PART_OF,
    PERSON,
    PREFERS,
    PROJECT,
    TOOL,
    USES,
    WORKS_ON,
    WORKS_WITH,
)
from loregraph.extract.local.state import Clause, Mention, Parse, resolve_person
from loregraph.extract.local.words import (
    EVALUATIVE_ADJ,
    GENERIC_ADJ,
    GENERIC_NOUNS,
    LIGHT_GERUNDS,
    ORG_NOUNS,
    PLACE_HEADS,
    PROJECT_HEADS,
    TEAM_HEADS,
    first_name,
    word_class,
)

CONSTRUCTIONS_FILE = Path(__file__).resolve().parent.parent / "data" / "constructions.json"
# the entity types a relation's source and target may have, per relation type
_TYPES_OF_NODE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    PART_OF: (frozenset({PERSON, ORGANIZATION, PROJECT}), frozenset({ORGANIZATION})),
    WORKS_ON: (frozenset({PERSON}), frozenset({PROJECT})),
    WORKS_WITH: (frozenset({PERSON}), frozenset({PERSON})),
    DEPENDS_ON: (frozenset({PROJECT, TOOL}), frozenset({TOOL, CONCEPT, PROJECT})),
    USES: (frozenset({PERSON, PROJECT, ORGANIZATION}), frozenset({TOOL, CONCEPT})),
    DECIDED: (frozenset({PERSON, ORGANIZATION}), frozenset({TOOL, CONCEPT, PROJECT, ORGANIZATION})),
    PREFERS: (frozenset({PERSON, ORGANIZATION, PROJECT}), frozenset({TOOL, CONCEPT, PROJECT})),
}
_NAMED_BY_COMPOUND = PROJECT_HEADS | TEAM_HEADS | ORG_NOUNS  # not "the Python bindings": those are no Python
_BY_TYPE = {TOOL: USES, CONCEPT: USES, ORGANIZATION: PART_OF, PROJECT: WORKS_ON}
_KNOWN_SOURCES = frozenset({"lexicon", "candidate", "packages"})


@dataclass(frozen=True, slots=True)
class Construction:
    """One entry of the constructions file."""

    id: str
    says: str
    pattern: list[dict[str, Any]]
    votes: dict[str, tuple[str, float]] = field(default_factory=dict)
    group: str = ""
    concepts: tuple[str, ...] = ()  # nodes that may be a plain noun or gerund naming a pastime or taste
    relations: list[dict[str, Any]] = field(default_factory=list)
    endings: list[dict[str, Any]] = field(default_factory=list)
    asserts: bool = False  # a fact even in a clause that reads as a plan ("X needs Y to run")
    places: tuple[str, ...] = ()  # nodes naming a place or an event, never an entity ("met X at <Summit>")
    negated: bool = False  # the construction's own meaning carries a negation ("can't live without X")
    not_given_names: tuple[str, ...] = ()  # nodes that void the match when a lone given name ("Priya depends on …")
    speakers_own: tuple[str, ...] = ()  # nodes that void the match when someone else's ("my sister's bakery runs …")
    not_places: tuple[str, ...] = ()  # nodes that void the match when the name finder calls them a place ("Colombia")


@dataclass(frozen=True, slots=True)
class Match:
    """A construction found in one message: its node names mapped to token indices."""

    construction: Construction
    nodes: dict[str, int]


def _resolve_classes(value: Any) -> Any:
    """``{"IN": "@job_verbs"}`` → ``{"IN": [...the word class...]}`` (recursively)."""
    if isinstance(value, str) and value.startswith("@"):
        return sorted(word_class(value[1:]))
    if isinstance(value, dict):
        return {k: _resolve_classes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_classes(v) for v in value]
    return value


def load_constructions(path: Path = CONSTRUCTIONS_FILE) -> list[Construction]:
    """The constructions of the data file, word-class references resolved."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for c in raw["constructions"]:
        out.append(Construction(
            id=c["id"], says=c.get("says", ""), pattern=_resolve_classes(c["pattern"]),
            votes={k: (v[0], float(v[1])) for k, v in c.get("votes", {}).items()},
            group=c.get("group", ""), concepts=tuple(c.get("concepts", ())),
            relations=c.get("relations", []), endings=c.get("endings", []),
            asserts=bool(c.get("asserts", False)), places=tuple(c.get("places", ())),
            negated=bool(c.get("negated", False)), not_given_names=tuple(c.get("not_given_names", ())),
            speakers_own=tuple(c.get("speakers_own", ())), not_places=tuple(c.get("not_places", ()))))
    return out


class ConstructionMatcher:
    """A ``DependencyMatcher`` over all constructions, built once per spaCy vocabulary."""

    _cache: ClassVar[dict[int, ConstructionMatcher]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, vocab: Any, constructions: list[Construction] | None = None) -> None:
        from spacy.matcher import DependencyMatcher

        self.constructions = {c.id: c for c in (constructions or load_constructions())}
        self._matcher = DependencyMatcher(vocab)
        for c in self.constructions.values():
            self._matcher.add(c.id, [c.pattern])

    @classmethod
    def for_vocab(cls, vocab: Any) -> ConstructionMatcher:
        with cls._lock:
            m = cls._cache.get(id(vocab))
            if m is None:
                m = cls._cache[id(vocab)] = cls(vocab)
            return m

    def __call__(self, doc: Any) -> list[Match]:
        out = []
        for match_id, token_ids in self._matcher(doc):
            c = self.constructions[doc.vocab.strings[match_id]]
            names = [row["RIGHT_ID"] for row in c.pattern]
            out.append(Match(c, dict(zip(names, token_ids, strict=True))))
        return out


# ---------------------------------------------------------------------------------------------
# typing evidence (before types are decided)
# ---------------------------------------------------------------------------------------------


def _group_mention(st: Parse, head: int) -> Mention | None:
    """A plain noun (with its compounds) naming a group: "accounting", "the platform squad"."""
    doc = st.doc
    tok = doc[head]
    if tok.pos_ not in ("NOUN", "ADJ", "VERB") or tok.is_stop or not tok.is_alpha or tok.lower_ in PLACE_HEADS:
        return None  # "from legal", "from marketing" name departments; "from down the street" no group
    start = head
    while start - 1 >= 0 and doc[start - 1].dep_ in ("compound", "amod") and start <= doc[start - 1].head.i <= head \
            and doc[start - 1].pos_ in ("NOUN", "PROPN", "ADJ") and st.at[start - 1] == -1 \
            and doc[start - 1].lower_ != "own":
        start -= 1  # "my own car repair shop": the car repair shop
    if any(st.at[k] != -1 for k in range(start, head + 1)):
        return None
    return _add_mention(st, Mention(start, head + 1, doc[start:head + 1].text, source="np-strong"))


def _add_mention(st: Parse, m: Mention) -> Mention:
    st.mentions.append(m)
    st.mentions.sort(key=lambda x: x.start)
    st.at = [-1] * len(st.doc)
    for idx, x in enumerate(st.mentions):
        for k in range(x.start, x.end):
            st.at[k] = idx
    return m


def _capitalised_by_place(st: Parse, i: int) -> bool:
    """The mention at ``i`` is one common noun capitalised only because it opens the sentence ("Chess ...")."""
    m = st.mentions[st.at[i]]
    tok = st.doc[i]
    return m.source == "cap" and m.end - m.start == 1 and tok.is_sent_start and tok.pos_ == "NOUN"


def _concept_mention(st: Parse, head: int) -> Mention | None:
    """A plain noun or gerund naming a pastime or a taste, with its compounds: "board games", "shakshuka",
    "baking bread" (a gerund and its one-noun object); not a pronoun, a light gerund or an everyday noun."""
    doc = st.doc
    tok = doc[head]
    gerund = tok.tag_ == "VBG"
    if not (tok.pos_ == "NOUN" or gerund) or tok.is_stop or not tok.is_alpha or tok.lower_ in LIGHT_GERUNDS \
            or (tok.lower_ in PLACE_HEADS and any(c.dep_ in ("det", "poss") for c in tok.children)) \
            or (not tok.is_lower and tok.i != tok.sent.start):  # ("loves theater" is a taste, "the theater" a place)
        return None
    start = head
    while start - 1 >= 0 and doc[start - 1].dep_ in ("compound", "amod") and doc[start - 1].head.i == head \
            and (doc[start - 1].is_lower or start - 1 == tok.sent.start) and doc[start - 1].is_alpha \
            and st.at[start - 1] == -1 \
            and doc[start - 1].lower_ not in EVALUATIVE_ADJ | GENERIC_ADJ:
        start -= 1  # "board games", "live music"; not "my main hobbies"
    if start == head and tok.lower_ in GENERIC_NOUNS:
        return None  # "games" alone names nothing; "board games" does
    end = head + 1
    objs = [c for c in tok.children if c.dep_ == "dobj"]
    if gerund and objs:
        if len(objs) != 1 or objs[0].i != head + 1 or objs[0].pos_ != "NOUN" or list(objs[0].children):
            return None  # "baking bread"; not "making the most of it"
        end = head + 2
    if any(st.at[k] != -1 for k in range(start, end)):
        return None
    name = doc[start:end].text
    if start == doc[start].sent.start and doc[start].pos_ != "PROPN":
        name = name[:1].lower() + name[1:]  # "Board games are my hobby": capitalised by its place only
    m = Mention(start, end, name, source="np")
    m.vote(CONCEPT, 1.0)
    return _add_mention(st, m)


def _lone_given_name(st: Parse, i: int | None) -> bool:
    """The token is a one-word name that is a known given name ("Priya", not "Atlas" or "Priya's Bakery")."""
    if i is None or st.at[i] == -1:
        return False
    m = st.mentions[st.at[i]]
    return m.end - m.start == 1 and m.source not in _KNOWN_SOURCES and first_name(m.name)


def _a_place(st: Parse, i: int | None) -> bool:
    """The name finder calls the token a place ("my coffee comes from Colombia"); it runs here only when asked."""
    if i is None or st.ner is None:
        return False
    if not st.notes.get("ner"):
        st.ner(st.doc)
        st.notes["ner"] = True
    return st.doc[i].ent_type_ in ("GPE", "LOC")


def _someone_elses(st: Parse, i: int | None) -> bool:
    """The token has an owner other than the speaker ("my sister's", "his", "Dana's"; not "my" or "our"), or is
    a share of what has one ("most of her stock")."""
    if i is None:
        return False
    heads = [st.doc[i]] + [o for p in st.doc[i].children if p.dep_ == "prep" and p.lower_ == "of"
                           for o in p.children if o.dep_ == "pobj"]
    return any(c.dep_ == "poss" and c.lower_ not in ("my", "our") for t in heads for c in t.children)


def vote_constructions(st: Parse) -> list[Match]:
    """Find the constructions of the message and add their typing evidence; returns the matches."""
    matches = [mt for mt in ConstructionMatcher.for_vocab(st.doc.vocab)(st.doc)
               if not any(_lone_given_name(st, mt.nodes.get(n)) for n in mt.construction.not_given_names)
               and not any(_someone_elses(st, mt.nodes.get(n)) for n in mt.construction.speakers_own)
               and not any(_a_place(st, mt.nodes.get(n)) for n in mt.construction.not_places)]
    for mt in matches:
        c = mt.construction
        if c.group and c.group in mt.nodes and st.at[mt.nodes[c.group]] == -1:
            _group_mention(st, mt.nodes[c.group])
        for node in c.concepts:
            for k in _with_conjuncts(st, mt.nodes[node]) if node in mt.nodes else []:
                if st.at[k] == -1:
                    _concept_mention(st, k)
                elif _capitalised_by_place(st, k):
                    first = st.mentions[st.at[k]]  # "Chess is my passion": a common noun, first in its sentence
                    first.name = first.name.lower()
                    first.vote(CONCEPT, 1.0)
        for node in c.places:
            i = mt.nodes.get(node)
            if i is not None and st.at[i] != -1 and st.mentions[st.at[i]].source not in _KNOWN_SOURCES:
                st.mentions[st.at[i]].place = True
        for node, (etype, weight) in c.votes.items():
            i = mt.nodes.get(node)
            if i is not None and st.at[i] != -1 and st.mentions[st.at[i]].source not in _KNOWN_SOURCES:
                m = st.mentions[st.at[i]]
                if etype == ORGANIZATION and m.end - m.start == 1 and first_name(m.name):
                    continue  # "Dana's design team": a given name alone is no organisation's
                m.vote(etype, weight)  # known names (lexicon, graph) keep their type
    return matches


# ---------------------------------------------------------------------------------------------
# relations (per clause)
# ---------------------------------------------------------------------------------------------


def _entity(st: Parse, i: int) -> Any:
    """The speaker, a mention, or a person a pronoun stands for, at token ``i``; None if none."""
    tok = st.doc[i]
    low = tok.lower_
    if low in ("i", "we", "me", "us") or (low in ("my", "our", "mine", "ours") and tok.dep_ in ("poss", "attr")):
        return SPEAKER if st.speaker_ok else None
    if low in ("his", "her") and tok.dep_ == "poss":
        # "Wen took his spot": the owner is someone said before, not the verb's own subject
        subj = {c.i for c in tok.head.head.children if c.dep_ in ("nsubj", "nsubjpass")}
        for m in reversed(st.mentions):
            if m.end <= i and m.type == PERSON and m.ref and not any(k in subj for k in range(m.start, m.end)):
                return m
        return None
    if low in ("he", "she", "him", "her"):
        return resolve_person(st, i)
    if st.at[i] == -1 and low in _NAMED_BY_COMPOUND:  # "the Fernhill project": the name is a compound of it
        i = next((c.i for c in tok.children if c.dep_ == "compound" and st.at[c.i] != -1), i)
    elif st.at[i] == -1 and tok.pos_ not in ("NOUN", "PROPN", "PRON"):
        # "a job at Carrow Hospital uptown": the parser heads the name with the adverb after it
        i = next((c.i for c in tok.children if c.dep_ == "compound" and st.at[c.i] != -1
                  and st.mentions[st.at[c.i]].end == tok.i), i)
    if st.at[i] == -1 and tok.pos_ == "NOUN":
        # "the Python bindings, brindle-py, need ...": a common noun with its name in apposition
        i = next((c.i for c in tok.children if c.dep_ == "appos" and st.at[c.i] != -1), i)
    if st.at[i] != -1:
        m = st.mentions[st.at[i]]
        return m if m.type and m.ref else None
    return None


def _subject_of(st: Parse, i: int) -> Any:
    """The subject of the verb at ``i``, or of the verbs it hangs from ("quit to open ...")."""
    tok = st.doc[i]
    for _ in range(4):
        subj = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")]
        if subj:
            return _entity(st, subj[0].i)
        if tok.dep_ in ("xcomp", "advcl", "conj", "ccomp") and tok.head.i != tok.i:
            tok = tok.head
            continue
        break
    return None


def _with_conjuncts(st: Parse, i: int) -> list[int]:
    """The token and the tokens coordinated with it ("X and Y")."""
    out = [i]
    for c in st.doc[i].conjuncts:
        if c.i > i:
            out.append(c.i)
    return out


def _fits(rtype: str, s: Any, o: Any) -> bool:
    want = _TYPES_OF_NODE.get(rtype)
    if want is None:
        return True
    stype = PERSON if s is SPEAKER else s.type
    if rtype == PART_OF and stype == PROJECT and getattr(o, "type", "") == PROJECT:
        return True  # "Kestrel is a sub-project of Atlas": a part of a bigger piece of work
    if rtype == DEPENDS_ON and getattr(o, "type", "") == ORGANIZATION:
        return stype in (PERSON, ORGANIZATION, PROJECT)  # "our flour comes from Hollow Mill": a supplier
    return stype in want[0] and getattr(o, "type", "") in want[1]


def _under_a_condition(st: Parse, cl: Clause) -> bool:
    """The clause's sentence sets a condition before or in it ("if", "unless", "whether")."""
    sent = st.doc[cl.start].sent
    return any(t.lower_ in ("if", "unless", "whether") for t in st.doc[sent.start:cl.end])


def _node(st: Parse, cl: Clause, mt: Match, ref: str) -> Any:
    """What an effect's source or target names: a node of the match, ``@subject`` or ``@speaker``."""
    if ref == "@speaker":
        return SPEAKER if st.speaker_ok else None
    if ref == "@antecedent_person":
        return _antecedent(st, mt, PERSON)
    if ref == "@antecedent_group":
        return _antecedent(st, mt, ORGANIZATION, PROJECT)
    if ref == "@antecedent_project":
        return _antecedent(st, mt, PROJECT)
    if ref == "@subject":
        s = _subject_of(st, mt.nodes["verb"])
        if s is not None and s is not SPEAKER and not (cl.start <= s.start < cl.end) and SPEAKER in cl.subj \
                and st.speaker_ok:
            s = SPEAKER  # "moved X into Y this week, Marguerite didn't notice": the subject of another clause
        if s is None and st.speaker_ok and (SPEAKER in cl.subj or _unsaid_i_have(st, mt.nodes["verb"])):
            s = SPEAKER  # "Swapped X for Y", "Haven't opened X since May": the speaker, left unsaid
        return s
    return _entity(st, mt.nodes[ref])


def _unsaid_i_have(st: Parse, i: int) -> bool:
    """A sentence opening with the perfect's 'have' and no subject: "Haven't opened Strava since May"."""
    verb = st.doc[i]
    if any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in verb.children):
        return False
    first = next((t for t in verb.sent if not t.is_punct and t.pos_ not in ("ADV", "INTJ")), None)
    return first is not None and first.dep_ == "aux" and first.head.i == i and first.lower_ in ("have", "haven't")


def _antecedent_tool(st: Parse, mt: Match) -> Any:
    """The last tool named before a subjectless comparison, not the one it is compared with."""
    better = st.doc[mt.nodes["better"]]
    heads = (*better.children, *better.head.children) if better.head.lemma_ == "be" or better.dep_ in (
        "acomp", "ROOT") else tuple(better.children)  # (not "I write in X, way nicer than Y": an aside on X)
    if any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in heads):
        return None  # "Height is nicer than Asana": the subject is what is praised (the rules' case)
    than = st.doc[mt.nodes["than"]]
    compared = {t.i for t in than.subtree} | {t.i for t in st.doc[than.i:min(len(st.doc), than.i + 3)]}
    for m in reversed(st.mentions):
        if m.end <= better.i and m.type in (TOOL, CONCEPT) and m.ref and m.start not in compared:
            return m
    return None


def _antecedent(st: Parse, mt: Match, *etypes: str) -> Any:
    """The last entity of one of ``etypes`` named before the match ("... and I quit the band", "but we're
    still ...")."""
    first = min(mt.nodes.values())
    return next((m for m in reversed(st.mentions) if m.end <= first and m.type in etypes and m.ref
                 and not m.is_speaker and not m.addressed), None)  # "Hey Calvin! ... we": not the listener


def _targets(st: Parse, cl: Clause, mt: Match, ref: str) -> list[Any]:
    if ref == "@antecedent_tool":
        return [_antecedent_tool(st, mt)]
    if ref == "@antecedent_org":
        return [_antecedent(st, mt, ORGANIZATION)]
    if ref == "@antecedent_person":
        return [_antecedent(st, mt, PERSON)]
    if ref == "@antecedent_tool_any":
        return [_antecedent(st, mt, TOOL)]
    if ref == "@antecedent_project":
        return [_antecedent(st, mt, PROJECT)]
    if ref.startswith("@"):
        return [_node(st, cl, mt, ref)]
    return [_entity(st, i) for i in _with_conjuncts(st, mt.nodes[ref])]


def _said(st: Parse, cl: Clause, effect: dict[str, Any]) -> bool:
    words, unless = effect.get("when_said"), effect.get("unless_said")
    if not words and not unless:
        return True
    span = st.doc[cl.start:cl.end] if effect.get("within") == "clause" else st.doc[cl.start].sent
    text = " " + " ".join(t.lower_ for t in span) + " "
    if unless and any(f" {w} " in text for w in unless):
        return False
    return not words or any(f" {w} " in text for w in words)


def relate_constructions(st: Parse, cl: Clause, matches: list[Match]) -> None:
    """Relations (and endings) stated by the constructions anchored in ``cl``."""
    if cl.question:
        return
    for mt in matches:
        c = mt.construction
        if cl.negated and not c.negated:
            continue
        if not (cl.start <= min(mt.nodes.values()) < cl.end) or (cl.hypothetical and not c.asserts):
            continue
        if c.asserts and cl.hypothetical and _under_a_condition(st, cl):
            continue  # "If Rahul wants to switch to Grafana, ...": a plan may assert; a condition does not
        trace = f"construction: {c.id}"
        # what the construction relates is never what it ends ("his" read as the newcomer: nothing ends)
        kept = {(id(_node(st, cl, mt, r["source"])), id(o)) for r in c.relations
                for o in _targets(st, cl, mt, r["target"]) if o is not None}
        for e in c.endings:
            s = _node(st, cl, mt, e["source"])
            if s is None or not _said(st, cl, e):
                continue
            for o in _targets(st, cl, mt, e["target"]):
                if o is not None and o is not SPEAKER and o is not s and (id(s), id(o)) not in kept:
                    st.out.end(s, e.get("type"), o, reason=e.get("reason", "construction"))
        for r in c.relations:
            s = _node(st, cl, mt, r["source"])
            if s is None or not _said(st, cl, r) or (cl.ended and s is SPEAKER and not c.endings):
                continue
            if "source_types" in r and (s is SPEAKER or s.type not in r["source_types"]):
                continue  # "Reddit recommends Obsidian": a wish only a person has
            for o in _targets(st, cl, mt, r["target"]):
                if o is None or o is s or (o is SPEAKER and s is SPEAKER):
                    continue
                rt = _BY_TYPE.get(getattr(o, "type", ""), "") if r["type"] == "@by_type" else r["type"]
                if not rt or (rt == USES and getattr(o, "type", "") not in (TOOL, CONCEPT)):
                    continue
                if o is not SPEAKER and not _fits(rt, s, o):
                    continue
                if not st.out.has(s, rt, o):
                    st.out.cancel_end(s, o)  # "left A in May for a post at B": the rules ended B too
                    st.out.add(s, rt, o, None if r.get("undated") else cl, 0.8, trace=trace)
