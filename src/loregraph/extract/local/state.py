"""The shared state of one extraction: the parse, its mentions and clauses, and queries over them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from loregraph.extract.base import SPEAKER, ExtractedEntity, ExtractionContext
from loregraph.extract.lexicon import Lexicon
from loregraph.extract.local.collector import Collector
from loregraph.extract.local.kinds import ORGANIZATION, PERSON, PROJECT
from loregraph.extract.local.words import (
    ALL_VERBS,
    GENERIC_CAPS,
    HONORIFICS,
    MOVING_VERBS,
    PROJECT_HEADS,
    STOP_CAPS,
    SUBJ_PRONOUNS,
    TEAM_HEADS,
    word_class,
)

VERB_PREFIXES = word_class("verb_prefixes")


@dataclass(slots=True)
class Mention:
    start: int
    end: int  # token index, exclusive
    name: str
    votes: dict[str, float] = field(default_factory=dict)
    source: str = "cap"  # candidate | lexicon | cap | np
    existing_id: str | None = None
    aliases: list[str] = field(default_factory=list)
    ambiguous: bool = False
    ner: str = ""
    type: str = ""
    conf: float = 0.0
    ref: str = ""
    in_question: bool = False
    role: str = ""  # role noun in front of it ("designer" in "my designer Maya")
    owned: bool = False  # the speaker's own work item ("my plugin X", "X, our app")
    is_speaker: bool = False  # the speaker's own name ("I'm Marcus, a data scientist")
    place: bool = False  # a place ("the Lisbon office"): never typed
    addressed: bool = False  # a person the speaker talks to by name ("Hey Nate, ...")
    weak: bool = False  # a lone capital at a sentence start: a name only with other evidence (NER, cues)
    kind: str = ""  # what a generic entity is ("pet", "work")
    thin: bool = False  # typed by the name finder alone: an entity only if a fact names it
    rejected: bool = False  # no evidence of being a named thing ("Clay is ...", "the Pride fest"): never typed later
    guessed: bool = False  # typed by the learned name typer alone (``name_model``): a later stage may retype it

    def vote(self, etype: str, weight: float) -> None:
        self.votes[etype] = self.votes.get(etype, 0.0) + weight


@dataclass(slots=True)
class Clause:
    start: int
    end: int
    subj: list[Any] = field(default_factory=list)  # SPEAKER or Mention
    subj_role: str = ""  # "designer" for "my (new) designer is X"
    verbs: list[Any] = field(default_factory=list)  # spaCy tokens
    question: bool = False
    hypothetical: bool = False
    negated: bool = False
    ended: bool = False
    hedged: bool = False
    alone: bool = False
    inherited: bool = False
    introduction: bool = False  # "Backend engineer at X here": the speaker's role, with no verb
    on_work: bool = False  # "now on the Scorecard project with Wen": the speaker's current work, with no verb
    preference: bool = False  # "I'd take X over Y": the first object is preferred
    when: Any = None  # the clause's time phrase (``when.TimeWord``): "yesterday", "last Friday"


@dataclass(slots=True)
class Parse:
    """One message's spaCy parse with its mentions (``at[i]`` = index of the mention covering token i)."""

    doc: Any
    ctx: ExtractionContext
    lex: Lexicon
    ner: Any
    out: Collector
    speaker_ok: bool
    speaker_name: str
    mentions: list[Mention] = field(default_factory=list)
    at: list[int] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    entities: list[ExtractedEntity] = field(default_factory=list)  # the output entities, once refs are given
    times: list[Any] = field(default_factory=list)  # time phrases of the message (``when.TimeWord``)
    in_time: list[bool] = field(default_factory=list)  # in_time[i]: token i is part of a time phrase


# ---------------------------------------------------------------------------------------------
# token helpers
# ---------------------------------------------------------------------------------------------


def is_capish(tok: Any) -> bool:
    t = tok.text
    if t[:1].isdigit() and sum(c.isalpha() for c in t) >= 3 and any(c.isupper() for c in t[1:]) and t.isalnum():
        return True  # "7Sage", "1Password": a brand that opens with a digit (not "3D", "4K", "10x")
    if not t or not (t[0].isalpha() or t[0] in ".#"):
        return False
    if t.lower() in GENERIC_CAPS:
        return False
    if t.lower() in STOP_CAPS and not any(c.isupper() for c in t[1:]):
        return False
    return t[0].isupper() or any(c.isupper() for c in t[1:])


_CO_VERBS = frozenset({"found", "author", "maintain", "write", "host", "lead", "own", "create", "direct", "chair",
                       "teach", "edit", "report", "produce", "organize", "organise", "manage", "run", "sign", "star"})


def verb_after_prefix(word: str) -> bool:
    """A verb written with a prefix and a hyphen ("live-code", "hand-coding", "self-hosted")."""
    head, _, rest = word.lower().partition("-")
    return head in VERB_PREFIXES and _co_verb(rest) in ALL_VERBS


def _co_verb(rest: str) -> str:
    """Base form of the verb after "co-" ("founded" → "found", "writing" → "write")."""
    for suf, rep in (("ing", "e"), ("ing", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("es", ""), ("s", ""), ("", "")):
        if rest.endswith(suf):
            cand = rest[: len(rest) - len(suf)] + rep if suf else rest
            if cand in _CO_VERBS or cand in ALL_VERBS:
                return cand
            if suf in ("ing", "ed") and not rep and len(cand) > 2 and cand[-1] == cand[-2] \
                    and (cand[:-1] in _CO_VERBS or cand[:-1] in ALL_VERBS):
                return cand[:-1]  # "running" → "run", "planned" → "plan"
    return rest


_LEMMA_SLIPS = {"coding": "code", "coded": "code", "installed": "install", "installing": "install"}  # the
# lemmatizer's "cod", "instal"


def lemma(tok: Any) -> str:
    lem = tok.lemma_.lower()
    low = tok.lower_
    if low in _LEMMA_SLIPS:
        return _LEMMA_SLIPS[low]
    if low in {"'m", "'re", "'s", "am", "are", "is", "was", "were", "be", "been", "being"}:
        return "be"
    if low in {"left", "leaving"}:
        return "leave"
    if low.startswith("co-") and len(low) > 5:
        return "co-" + _co_verb(low[3:])
    if "-" in low and low.split("-", 1)[0] in VERB_PREFIXES:
        return _co_verb(low.split("-", 1)[1])  # "live-code", "hand-code", "self-host": the verb after the prefix
    if lem == low and tok.pos_ != "VERB":
        # the tagger sometimes misses verbs ("talks" as a noun): strip simple inflections
        for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ing", "")):
            if low.endswith(suf) and len(low) > len(suf) + 2:
                cand = low[: -len(suf)] + rep
                if cand in ALL_VERBS:
                    return cand
    return lem



def norm_key(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip(" \t\"'.,;:!?()[]")


def camel(text: str) -> bool:
    return any(c.isupper() for c in text[1:]) or any(c.isdigit() for c in text)


def best_type(votes: dict[str, float]) -> str | None:
    if not votes:
        return None
    return max(votes.items(), key=lambda kv: kv[1])[0]


def is_team(name: str) -> bool:
    return name.lower().rsplit(" ", 1)[-1] in TEAM_HEADS


def clean_name(name: str) -> str:
    name = re.sub(r"\s+", " ", name).strip(" \t\"'.,;:!?()[]")
    for art in ("the ", "a ", "an ", "our ", "my "):
        if name.lower().startswith(art):
            name = name[len(art):]
    if name.lower().startswith("project ") and len(name) > 8:
        name = name[8:]
    first, _, rest = name.partition(" ")
    if rest and first.lower().rstrip(".") in HONORIFICS and " " in rest.strip():
        name = rest  # "Dr Farouk Haddad" is Farouk Haddad; "Mrs Adeyemi" is known by the title and surname
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    return name.strip()


def chunk_governor(chunk: Any) -> tuple[str, str] | None:
    """(governing word lemma, preposition) for a noun chunk: ("believer", "in"), ("follow", "")."""
    root = chunk.root
    while root.dep_ == "conj" and root.head.i < root.i and root.head.pos_ in ("NOUN", "PROPN"):
        root = root.head  # "took over the audit and the checklist": the second object shares the first's verb
    if root.dep_ == "pobj":
        prep = root.head
        return prep.head.lemma_.lower(), prep.lower_
    if root.dep_ in ("dobj", "attr", "oprd"):
        return root.head.lemma_.lower(), ""
    return None


def joined_by_speaker(head: Any) -> bool:
    """ "the knitting circle we joined", "this support group I attend": a group the speaker says, in a clause set
    after it, they joined or attend."""
    return any(c.dep_ == "relcl" and c.lemma_.lower() in ("join", "attend") and not any(
        k.dep_ == "neg" for k in c.children) and any(
        k.dep_ == "nsubj" and k.lower_ in ("i", "we") for k in c.children) for c in head.children)


def nearest_verb_before(doc: Any, i: int) -> Any:
    """The nearest verb before token i in the same sentence (linear; the parser errs on names)."""
    sent_start = doc[i].sent.start
    for k in range(i - 1, sent_start - 1, -1):
        t = doc[k]
        if t.pos_ == "VERB" or (t.pos_ == "AUX" and t.lemma_ == "be"):
            return t
        if t.text in (";",):
            return None
    return None


# ---------------------------------------------------------------------------------------------
# queries over the parse
# ---------------------------------------------------------------------------------------------


def after_adverbs(doc: Any, k: int, most: int = 2) -> int:
    """The index after at most ``most`` lower-case adverbs at ``k`` ("Eliza *still* uses X")."""
    for _ in range(most):
        if k < len(doc) and doc[k].pos_ == "ADV" and doc[k].dep_ == "advmod" and doc[k].is_lower:
            k += 1
    return k


def is_verb(st: Parse, t: Any) -> bool:
    if st.at[t.i] != -1 and not _capitalised_verb(st, t):
        return False
    if t.dep_ == "ROOT" and t.pos_ != "VERB" and verb_after_prefix(t.lower_):
        return True  # "I live-code with X": the tagger does not know the prefixed verb
    if t.pos_ == "VERB":
        # gerunds after prepositions ("for caching") and participles used as adjectives
        if t.tag_ == "VBG" and t.i > 0 and st.doc[t.i - 1].pos_ == "ADP" and t.dep_ == "pcomp":
            return False
        if t.tag_ == "VBG" and t.dep_ in ("nsubj", "nsubjpass"):
            return False  # "alerting goes through PagerDuty": a gerund as the subject
        return t.dep_ != "amod"
    if t.pos_ == "AUX" and lemma(t) == "be":
        # copula if no main verb follows it directly
        nxt = st.doc[t.i + 1] if t.i + 1 < len(st.doc) else None
        k = t.i + 1
        while nxt is not None and (nxt.pos_ in ("ADV", "PART") or nxt.lower_ in ("not", "n't")):
            k += 1
            nxt = st.doc[k] if k < len(st.doc) else None
        return nxt is None or not (nxt.pos_ == "VERB" and nxt.tag_ in ("VBG", "VBN"))
    # "talks", "prefers" mis-tagged as nouns
    return t.pos_ in ("NOUN", "ADJ") and lemma(t) in ALL_VERBS and t.tag_ in ("NNS", "VBZ") and (
        t.dep_ in ("conj", "ROOT") or (t.i > 0 and (st.at[t.i - 1] != -1
                                                     or st.doc[t.i - 1].lower_ in SUBJ_PRONOUNS)))


def _capitalised_verb(st: Parse, t: Any) -> bool:
    """ "Switched from X to Y.": a verb that opens a sentence, taken for a name by its capital and then found to
    name nothing (untyped), is the verb it looks like."""
    m = st.mentions[st.at[t.i]]
    return m.weak and not m.type and m.end - m.start == 1 and t.pos_ == "VERB" and t.tag_ in ("VBD", "VBN", "VBG")


_ITEM_OPENERS = frozenset({",", ":", ";", "-", "–", "—", "(", "plus", "and", "then", "also", "&", "+"})
_NOT_TASKS = frozenset({"me", "us", "him", "her", "them", "you", "it", "now", "years", "ages", "months", "weeks",
                        "days", "while", "ever", "good", "sure", "real", "free", "once", "example", "instance"})


_ROUTINES = ("all day", "every day", "everyday", "daily", "day to day", "most days", "these days", "all the time",
             "24/7", "every morning", "every night", "every week", "all week", "when i", "when we", "whenever")


def _opens_an_item(doc: Any, start: int, end: int) -> bool:
    """The name opens a sentence or a list item, and no verb governs it."""
    if start > doc[start].sent.start and doc[start - 1].lower_ not in _ITEM_OPENERS:
        return False
    return doc[end - 1].dep_ not in ("nsubj", "nsubjpass", "dobj", "pobj", "attr", "dative", "oprd")


def named_with_a_routine(doc: Any, start: int, end: int) -> bool:
    """ "Photoshop all day, plus Lightroom when I need it", "Teams every day": a name opening a sentence or a list
    item, with no verb, said with how often (or when) it is at work."""
    after = " ".join(t.lower_ for t in doc[end:end + 3])
    return any(after == r or after.startswith(r + " ") for r in _ROUTINES) and _opens_an_item(doc, start, end)


def named_for_a_task(doc: Any, start: int, end: int) -> bool:
    """ "Revit for everything, Navisworks for clash", "Backups: Restic for the laptops": a name that opens a
    sentence or a list item, with no verb governing it, said to be for a task (not "thanks for", not "X for
    years", not "Ana for me")."""
    if end + 1 >= len(doc) or doc[end].lower_ != "for" or not _opens_an_item(doc, start, end):
        return False
    k = end + 1
    while k < len(doc) and (doc[k].dep_ in ("det", "poss", "amod", "compound", "nummod")
                            or doc[k].pos_ in ("DET", "ADJ")) and doc[k].pos_ != "NOUN":
        k += 1
    if k >= len(doc):
        return False
    task = doc[k]
    return task.lower_ not in _NOT_TASKS and (task.pos_ in ("NOUN", "PROPN") or task.tag_ == "VBG"
                                              or task.lower_ in ("everything", "anything", "all"))


def mention_head(st: Parse, m: Mention) -> Any:
    """The mention's syntactic head: its token whose head lies outside it."""
    doc = st.doc
    for k in range(m.start, m.end):
        h = doc[k].head
        if h.i == k or not (m.start <= h.i < m.end):
            return doc[k]
    return doc[m.end - 1]


def in_prep_phrase(st: Parse, m: Mention, lo: int) -> bool:
    doc = st.doc
    k = m.start - 1
    while k >= lo and (doc[k].pos_ in ("DET", "ADJ") or doc[k].dep_ == "poss"):
        k -= 1
    return k >= lo and doc[k].pos_ == "ADP" and doc[k].lower_ not in ("and",)


def resolve_person(st: Parse, i: int) -> Mention | None:
    """The person "he" or "she" at ``i`` stands for: the nearest before it, passing over a name that only qualifies
    a noun ("my lead Tomasz wants it done before the Skyreach slice. he's been ...": Tomasz)."""
    fallback = None
    for m in reversed(st.mentions):
        if m.end <= i and m.type == PERSON:
            if st.doc[m.end - 1].dep_ in ("compound", "nmod", "amod") and st.doc[m.end - 1].head.i >= m.end:
                fallback = fallback or m
                continue
            return m
    return fallback


def resolve_it(st: Parse, i: int) -> Mention | None:
    for m in reversed(st.mentions):
        if m.end <= i and (m.type == PROJECT or (m.type == ORGANIZATION and is_team(m.name))):
            return m
    return None


def clause_mentions(st: Parse, cl: Clause) -> list[Mention]:
    seen = []
    for k in range(cl.start, cl.end):
        if st.at[k] != -1:
            m = st.mentions[st.at[k]]
            if m not in seen:
                seen.append(m)
    return seen


def prep_before(st: Parse, m: Mention, cl: Clause) -> str:
    """The preposition that governs the mention's noun phrase ("" for a direct object)."""
    doc = st.doc
    named = doc[m.end - 1]
    if named.dep_ == "appos" and named.head.i < m.start and named.head.pos_ == "NOUN":
        owner = named.head  # "I play for a local club, the Ravens": the name renames the object of "for"
        return owner.head.lower_ if owner.dep_ == "pobj" and owner.head.dep_ == "prep" else ""
    k = m.start - 1
    while k >= cl.start:
        t = doc[k]
        if st.at[k] != -1 and st.at[k] != st.at[m.start]:
            other = st.mentions[st.at[k]]
            # list partner: take its preposition ("from X and Y")
            between = doc[other.end:m.start].text.strip().lower()
            if between in ("and", "or", ",", ", and", ", or"):
                return prep_before(st, other, cl)
            return ""
        if t.pos_ in ("DET", "ADJ", "NUM") or t.dep_ in ("poss", "amod", "compound", "det", "nummod") \
                or t.lower_ in ("'s", "more", "mostly", "all", "the") or t.lower_ in PROJECT_HEADS:
            k -= 1
            continue
        if t.lower_ in ("and", "or", ",", "&", "+") and k > cl.start and st.at[k - 1] != -1:
            k -= 1  # "with Jas and Becky": the list partner before it gives its preposition
            continue
        if t.lower_ == "of" and k > cl.start and doc[k - 1].lower_ == "instead":
            return "instead"  # "decided on X instead of Y": Y is what was not chosen
        if t.pos_ == "ADP" or t.dep_ in ("prep", "prt", "agent") or t.lower_ in ("to", "than", "vs"):
            return t.lower_
        if t.tag_ == "VBG" and k > cl.start and doc[k - 1].pos_ == "ADP" and doc[k - 1].lower_ != "by":
            return doc[k - 1].lower_ + "-ing"  # "for monitoring Beacon"
        return ""
    return ""


def clause_gov_verb(st: Parse, m: Mention, cl: Clause) -> Any:
    doc = st.doc
    for k in range(m.start - 1, cl.start - 1, -1):
        if is_verb(st, doc[k]):
            if doc[k].lemma_ in ("call", "name", "codename", "dub") and doc[k].tag_ == "VBN":
                continue  # "a new project called X": the verb before "project" governs X
            return doc[k]
    if cl.inherited and cl.verbs:
        return cl.verbs[-1]
    return None


def gov_lemma(st: Parse, m: Mention, cl: Clause) -> str:
    v = clause_gov_verb(st, m, cl)
    return lemma(v) if v is not None else ""


def unit_of(st: Parse, o: Mention) -> Mention | None:
    """The team an organisation's possessive introduces ("Kelham's night team"), if any."""
    k = o.end
    if k + 1 < len(st.doc) and st.doc[k].text in ("'s", "’s") and st.at[k + 1] != -1:
        unit = st.mentions[st.at[k + 1]]
        if unit.type == ORGANIZATION and unit.ref and unit.name.split()[-1].lower() in TEAM_HEADS:
            return unit
    return None


def controller(st: Parse, verb: Any) -> Any:
    """Who does an infinitive (or a gerund after "have"/"get") that hangs on a verb with an object: the object
    ("hired me to run X" → the speaker, "asked Tamsin to join X" → Tamsin, "has us all logging on X" → the
    speaker); None if there is no such object above it."""
    causative = verb.tag_ == "VBG" and verb.head.lemma_ in ("have", "get", "keep", "set")  # "has us logging on X"
    if verb.dep_ not in ("xcomp", "advcl", "ccomp") or not (causative or any(c.lower_ == "to" and c.dep_ == "aux"
                                                                             for c in verb.children)):
        return None
    obj = next((c for c in verb.head.children if c.dep_ == "dobj" and c.i < verb.i), None) \
        or next((c for c in verb.children if c.dep_ == "nsubj" and c.i < verb.i), None)
    if obj is None:
        return None
    if obj.lower_ in ("me", "us"):
        return SPEAKER if st.speaker_ok else None
    if st.at[obj.i] != -1:
        m = st.mentions[st.at[obj.i]]
        return m if m.type == PERSON and m.ref else None
    return None


def moves_a_thing(st: Parse, o: Mention, cl: Clause) -> bool:
    """"we moved the payroll files from Dropbox to Kestrel": the verb moves a thing to ``o``, not its subject
    (no membership)."""
    v = clause_gov_verb(st, o, cl)
    return v is not None and lemma(v) in MOVING_VERBS \
        and any(c.dep_ == "dobj" and not (o.start <= c.i < o.end) for c in v.children)

