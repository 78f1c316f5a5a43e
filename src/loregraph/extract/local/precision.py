"""Stage 7, the precision gate: relations that everyday chat makes look like facts but are not the speaker's.

Run once over the collected relations of a message, with the sentence each came from. A relation is held
back (precision first: better no fact than a wrong one) when

- its object belongs to someone else: the nearest owner above it in the parse is the listener or a third
  person ("I love *your* ice cream", "seeing *you* work on cars", "people *who* are passionate about X"),
  or it is what the speaker advises ("I'd recommend practising X");
- its sentence is about the speaker's past life ("when we were 10 we were into X", "used to hike");
- its subject is no name: a lower-case noun phrase or an everyday word that only opens the sentence
  ("Music really helps with ...", "the store is going good");
- its object is only a piece of a name or noun ("Lord" of "Lord of the Rings", "space" of "my yoga space") or
  a generic noun ("dreams", "the rush of X");
- it is work on a thing finished with an article, not "my" ("I finished this fantasy series": read, not made);
- it is a taste for a name that only qualifies a common noun ("I love the Miami vibe"): the taste is for
  the noun's thing;
- it says the speaker uses a lower-case concept named with an article or a demonstrative ("follow the
  necessary protocols", "check out a trail with a waterfall"): a thing met once, not a practice.

The word classes live in ``extract/data/word_classes.json``.
"""

from __future__ import annotations

import re
from typing import Any

from loregraph.extract.base import SPEAKER, ExtractedEnding, ExtractedEntity, ExtractedRelation
from loregraph.extract.local.kinds import CONCEPT, DECIDED, ORGANIZATION, PERSON, PREFERS, USES, WORKS_ON
from loregraph.extract.local.state import Mention, Parse
from loregraph.extract.local.words import (
    ADVICE_VERBS,
    CLASS_NOUNS,
    DETERMINERS,
    FINISH_VERBS,
    GENERIC_NOUNS,
    GROUP_HEADS,
    INSTRUMENT_VERBS,
    INSTRUMENTS,
    OTHER_OWNER_WORDS,
    OWN_OWNER_WORDS,
    PAST_LIFE_MARKERS,
    PEOPLE_NOUNS,
    PRACTICE_VERBS,
    PROJECT_HEADS,
    SPEAKER_WORDS,
    TASTE_PERSON_NOUNS,
    TEAM_HEADS,
    WE_WORDS,
    common_word,
    takes_up,
    word_class,
)

_OWNED_TYPES = frozenset({PREFERS, USES, WORKS_ON, DECIDED})  # what the speaker likes, uses, makes, chose
_OWNER_DEPS = frozenset({"nsubj", "nsubjpass", "poss", "agent", "csubj"})


def _root(st: Parse, m: Mention) -> Any:
    """The token of a mention whose head lies outside it (its syntactic head)."""
    doc = st.doc
    for i in range(m.start, m.end):
        h = doc[i].head.i
        if h < m.start or h >= m.end or doc[i].head.i == i:
            return doc[i]
    return doc[m.end - 1]


def someone_elses(st: Parse, m: Mention) -> bool:
    """The nearest owner above ``m`` (a subject or possessor of it or of a word governing it) is not the
    speaker, or ``m`` is governed by an advice verb."""
    start = tok = _root(st, m)
    prev = None
    seen = 0
    while seen < 12:
        seen += 1
        if tok.lemma_.lower() in ADVICE_VERBS and tok.i != start.i:
            return True
        if tok.lemma_.lower() in _PRESSING_VERBS and tok.i != start.i and _asked_to(tok, prev):
            return True  # "my accountant keeps telling me to move to Xero": what someone presses for, not done
        if any(c.dep_ == "dobj" and c.lower_ in ("me", "us") for c in tok.children):
            return False  # "they put me on Nimbus": what the speaker is put on is the speaker's
        for c in tok.children:
            if c.dep_ in _OWNER_DEPS or (c.dep_ == "dobj" and c.lower_ in OWN_OWNER_WORDS and c.i != tok.i):
                low = c.lower_
                if low in OWN_OWNER_WORDS or (c.dep_ in ("nsubj", "nsubjpass") and any(
                        g.lower_ in OWN_OWNER_WORDS for g in c.conjuncts)):
                    return False  # "he and I are rewriting it": the speaker's too
                if low == "you" and c.dep_ == "nsubj" and _impersonal_cant(tok):
                    return False  # "you can't beat Obsidian", "you can't go wrong with X": anyone, the speaker too
                if low in OTHER_OWNER_WORDS:
                    return True
                if c.dep_ in ("nsubj", "nsubjpass", "poss"):
                    # a named or nominal owner: the rules before decided about it, unless it is the listener's
                    # or someone else's ("your students are doing well with dance")
                    return any(g.dep_ == "poss" and g.lower_ in OTHER_OWNER_WORDS for g in c.children)
        if tok.head.i == tok.i:
            return False
        prev, tok = tok, tok.head
    return False


_PRESSING_VERBS = frozenset({"tell", "ask", "nag", "pester", "beg", "push", "encourage", "remind", "bug", "badger"})


def _asked_to(verb: Any, below: Any) -> bool:
    """``below`` is the infinitive the pressing verb keeps asking for ("keeps telling me to move", "always asks us
    to try"; not "my manager asked me to lead X": a past request, most often done)."""
    return below is not None and below.head.i == verb.i and below.dep_ in ("xcomp", "ccomp") \
        and verb.tag_ in ("VBG", "VBZ", "VBP") and any(c.dep_ == "aux" and c.lower_ == "to" for c in below.children)


def _impersonal_cant(verb: Any) -> bool:
    """ "you can't beat X", "you can't go wrong with X": a generic "you" under "can't", an idiom of praise."""
    return verb.lemma_ in ("beat", "top", "go") and any(c.dep_ == "aux" and c.lower_ in ("ca", "can", "cannot")
                                                        for c in verb.children) \
        and any(c.dep_ == "neg" or c.lower_ == "cannot" for c in verb.children)


def past_life(sentence: str) -> bool:
    """The sentence speaks of the speaker's past life ("when I was 10", "as a kid", "used to"); "when I was" /
    "when we were" only with an age after it ("when we were kids", not "when we were at the theater yesterday")."""
    low = " " + " ".join(sentence.lower().split()) + " "
    return any(f" {mk} " in low for mk in PAST_LIFE_MARKERS if mk not in _WHEN_I_WAS) or bool(_AT_AN_AGE.search(low))


_WHEN_I_WAS = frozenset({"when i was", "when we were"})
_AT_AN_AGE = re.compile(r"\bwhen (?:i was|we were) (?:(?:a|an|just|still|really|very|so) )?(?:\d+|"
                        + "|".join(re.escape(w) for w in sorted(word_class("past_life_ages"), key=len, reverse=True))
                        + r")\b")  # "when we were kids", "when I was 10", "when I was in college"


_COUNTED_PAST = frozenset({"years ago", "years back"})


def began_years_ago(sent: Any) -> bool:
    """ "I started rowing five years ago (and I still love it)": a count of years dates when the speaker took
    something up, which goes on; not a past life. Only when no other past-life marker is said ("when I was a kid
    I started skating" stays a past life)."""
    low = " " + " ".join(sent.text.lower().split()) + " "
    said = {mk for mk in PAST_LIFE_MARKERS if f" {mk} " in low}
    if not said or said - _COUNTED_PAST:
        return False
    return any(t.pos_ == "VERB" and takes_up(t)
               and any(c.dep_ == "nsubj" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in t.children)
               for t in sent)


def no_name(st: Parse, m: Mention, sent: Any) -> bool:
    """A subject mention that names nothing: a concept, or everyday words only, all lower case or capitalised
    only because they open the sentence ("the store", "Music really helps", "Classic rock has had")."""
    if m.type == CONCEPT:
        return True  # an idea does nothing: "baking helps with stress" is no fact about baking
    if m.source == "lexicon" or (m.type == PERSON and (m.ner == "PERSON" or m.existing_id or not st.notes.get("ner"))):
        return False
    words = [t for t in st.doc[m.start:m.end] if t.is_alpha]
    if not words or not all(common_word(t.lower_) for t in words):
        return False  # "quillmark", "insulin dosing chart": a rare word is a name
    if all(t.is_lower for t in words):
        return True
    opens = sent is not None and all(not t.is_alpha for t in st.doc[sent.start:words[0].i])
    return bool(opens and all(t.is_lower for t in words[1:]))


def met_once(st: Parse, m: Mention) -> bool:
    """A lower-case concept with an article or a demonstrative ("a rad waterfall", "the necessary protocols")."""
    if m.type != CONCEPT or any(ch.isupper() for ch in m.name):
        return False
    root = _root(st, m)
    if root.lower_ in INSTRUMENTS and root.head.lemma_.lower() in INSTRUMENT_VERBS:
        return False  # "I play the cello": the article of an instrument played names the practice
    return any(c.dep_ in ("det", "predet") and c.lower_ in DETERMINERS for c in root.children)


def known_taste_in_passing(st: Parse, m: Mention, r: ExtractedRelation) -> bool:
    """A lower-case concept known from before ("pizza", "turtles", "oat milk") met again as the object of a verb
    that is no practice ("made it with oat milk", "took my turtles to the beach"): no use of it."""
    if m.source != "candidate" or m.type != CONCEPT or not m.name.islower() or not r.trace.startswith("rules: "):
        return False
    verb = r.trace.split("(", 1)[1].split(" ", 1)[0] if "(" in r.trace else ""
    return verb not in PRACTICE_VERBS


def fragment(st: Parse, m: Mention) -> bool:
    """A mention that is only a piece of a longer name or noun: "Lord" of "Lord of the Rings", "CS" of "CS:GO",
    "space" of "my yoga space", "gaming" of "the gaming industry", an adjective ("my Japanese mansion"), or a
    generic noun ("dreams", "the rush of X") standing for what it qualifies."""
    doc = st.doc
    nxt = doc[m.end] if m.end < len(doc) else None
    if nxt is not None and nxt.text in (":", "-", "/") and not nxt.whitespace_ and not doc[m.end - 1].whitespace_ \
            and m.end + 1 < len(doc) and doc[m.end + 1].text[:1].isalnum():
        return True  # "CS:GO", "Spider-Man"
    if nxt is not None and nxt.lower_ == "of" and m.end + 1 < len(doc):
        k = m.end + 1 + (doc[m.end + 1].lower_ in ("the", "a"))
        if k < len(doc) and doc[k].text[:1].isupper() and m.name[:1].isupper():
            return True  # "Lord of the Rings", "House of Blues"
    k = m.start - 1 - (m.start > 0 and doc[m.start - 1].lower_ in ("the", "a"))
    if k > 0 and doc[k].lower_ == "of" and doc[k - 1].text[:1].isupper() and m.name[:1].isupper():
        return True  # "Rings" of "Lord of the Rings"
    root = _root(st, m)
    head = root.head
    if m.end < len(doc) and doc[m.end].lower_ in CLASS_NOUNS and head.i == m.end and m.name.islower():
        return False  # "a (weekend) pottery class", "a creative writing course": what the class teaches
    if root.dep_ == "amod" and head.pos_ == "NOUN" and not (m.start <= head.i < m.end) \
            and head.lower_ not in TASTE_PERSON_NOUNS:
        return True  # "my Japanese mansion": an adjective, not a thing ("a Rhino man" is a taste, read amod)
    if any(ch.isupper() for ch in m.name):
        return False
    if m.name.lower() in GENERIC_NOUNS:
        return True
    if root.dep_ == "compound" and head.pos_ == "NOUN" and not (m.start <= head.i < m.end):
        return True  # "the gaming industry" is not gaming
    if any(c.dep_ == "compound" and not (m.start <= c.i < m.end) for c in root.children):
        return True  # "my yoga space" is not space
    return bool(any(c.dep_ == "det" and c.lower_ == "the" for c in root.children)
                and any(c.dep_ == "prep" and c.lower_ == "of" for c in root.children))  # "the rush of cars"


def finished_someone_elses_work(st: Parse, m: Mention) -> bool:
    """ "I just finished this amazing fantasy series": a work finished with an article or a demonstrative, not
    "my"/"our", was read or watched, not made."""
    root = _root(st, m)
    if root.head.lemma_.lower() not in FINISH_VERBS or root.dep_ != "dobj":
        return False
    if root.lower_ in PROJECT_HEADS:
        return False  # "I finished an engineering project": a project finished was one's own work, not read
    kids = {c.lower_ for c in root.children if c.dep_ in ("det", "poss")}
    return bool(kids & DETERMINERS) and not kids & OWN_OWNER_WORDS


def modifier_only(st: Parse, m: Mention) -> bool:
    """A name used only to qualify a common noun ("the Miami vibe"): what is liked is the noun's thing."""
    root = _root(st, m)
    head = root.head
    return bool(root.dep_ == "compound" and not (m.start <= head.i < m.end) and head.pos_ == "NOUN"
                and head.is_lower and st.at[head.i] == -1)


def held(st: Parse, r: ExtractedRelation, targets: list[Mention], sources: list[Mention], sent: Any) -> bool:
    """Whether the relation ``r`` of sentence ``sent`` is held back (``targets``/``sources``: its ends' mentions
    in that sentence)."""
    if r.trace.endswith("an organisation's team is part of it"):
        return False  # "Hartwell's data team": the possessive names whose team it is
    if r.type in _OWNED_TYPES:
        if r.source == SPEAKER and targets and all(someone_elses(st, m) for m in targets):
            return True
        if r.type in (PREFERS, USES, WORKS_ON) and past_life(sent.text) and r.invalid_at is None \
                and not began_years_ago(sent):
            return True  # "as a kid I was into X", "thinking back to finishing my screenplay": not now
        if targets and all(fragment(st, m) for m in targets):
            return True
        if r.type == WORKS_ON and targets and all(finished_someone_elses_work(st, m) for m in targets):
            return True
        if r.type == USES and targets and all(met_once(st, m) for m in targets):
            return True
        if r.type == USES and targets and all(known_taste_in_passing(st, m, r) for m in targets):
            return True
        if r.type == PREFERS and r.trace.startswith(("rules: verb class", "meaning")) and targets \
                and all(modifier_only(st, m) for m in targets):
            return True
    if r.source != SPEAKER and sources and all(replaced(st, m) for m in sources):
        return True
    return bool(r.source != SPEAKER and sources and all(no_name(st, m, sent) for m in sources))


_REPLACING_VERBS = frozenset({"replace", "swap", "switch", "substitute", "supersede"})


def replaced(st: Parse, m: Mention) -> bool:
    """The mention is what a passive replacement replaced ("Jenkins was replaced by Buildkite", "Kafka got swapped
    out for Redpanda"): it is no subject of the successor's facts."""
    head = st.doc[m.end - 1]
    return head.dep_ == "nsubjpass" and head.head.lemma_ in _REPLACING_VERBS and any(
        c.dep_ in ("prep", "agent") and c.lower_ in ("by", "for", "with") for c in head.head.children)


def gate(st: Parse, origin: dict[int, Any]) -> list[ExtractedRelation]:
    """The relations of ``st.out`` that pass; ``origin`` maps ``id(relation)`` to its sentence span.
    The count held back is noted (``notes["gated"]``), never the words."""
    by_ref: dict[str, list[Mention]] = {}
    for m in st.mentions:
        if m.ref:
            by_ref.setdefault(m.ref, []).append(m)
    kept: list[ExtractedRelation] = []
    for r in st.out.relations:
        sent = origin.get(id(r))
        if sent is not None:
            targets = [m for m in by_ref.get(r.target, []) if sent.start <= m.start < sent.end] \
                or by_ref.get(r.target, [])  # "it"/"that" for a thing named in an earlier sentence
            sources = [m for m in by_ref.get(r.source, []) if sent.start <= m.start < sent.end] \
                or by_ref.get(r.source, [])  # "it" for a thing named in an earlier sentence
            if held(st, r, targets, sources, sent):
                continue
        kept.append(r)
    if len(kept) < len(st.out.relations):
        st.notes["gated"] = len(st.out.relations) - len(kept)
    return kept


def evidenced(st: Parse, entities: list[ExtractedEntity], relations: list[ExtractedRelation],
              endings: list[ExtractedEnding]) -> list[ExtractedEntity]:
    """The entities worth creating. A concept (an idea, a taste, a hobby) is evidenced only by a fact the message
    states about it: "dreams", "animals", "a waterfall" said in passing are no entities; a lower-case group of
    generic words ("loved ones", "experienced gamers") and one plain word typed a group ("apart from meetings")
    name nobody; a name typed only by the name finder, or by the meaning of a predicate, that then made no fact is
    left out too. Known entities (``existing_id``) always stay, and a concept spelled with a capital ("Bayesian
    methods") is a named idea and stays. The count left out is noted (``notes["unevidenced"]``)."""
    used = {x for r in relations for x in (r.source, r.target)} | {
        x for e in endings for x in (e.source, e.target) if x}
    generic = {m.ref for m in st.mentions if m.ref and _generic_words(st, m)}
    thin = {m.ref for m in st.mentions if m.ref and m.thin} - {m.ref for m in st.mentions if m.ref and not m.thin}
    generic |= thin  # named, but typed by the name finder alone: kept only when a fact names it
    kept = [e for e in entities if e.existing_id or e.ref in used
            or (e.type != CONCEPT and e.ref not in generic and not e.attributes.get("typed_by"))
            or (e.type == CONCEPT and e.name != e.name.lower())]
    if len(kept) < len(entities):
        st.notes["unevidenced"] = len(entities) - len(kept)
    return kept


def _generic_words(st: Parse, m: Mention) -> bool:
    """A lower-case noun phrase whose head is a generic noun or a plural of people ("loved ones", "experienced
    gamers" by its people noun "players"), not a named group."""
    if m.source not in ("np", "np-strong") or any(ch.isupper() for ch in m.name):
        return False
    head = st.doc[m.end - 1]
    if m.end - m.start == 1 and m.type == ORGANIZATION:
        return True  # "apart from meetings", "from the food": one plain word is no group's name
    if m.type == ORGANIZATION and m.start > 0 and any(t.lower_ in ("a", "an") and t.dep_ == "det"
                                                       for t in st.doc[m.start - 3:m.start] if t.head.i == m.end - 1):
        return True  # "joining a new gaming team", "like having a cheer team": a group introduced as any one of
        # its kind names no particular group unless a fact ties someone to it
    low, lem = head.lower_, head.lemma_.lower()
    if low in TEAM_HEADS or low in GROUP_HEADS:
        return False  # "the data science team", "a running group": a group by its kind
    return low in GENERIC_NOUNS or (head.tag_ == "NNS" and (lem in PEOPLE_NOUNS or low.endswith("ers")))
