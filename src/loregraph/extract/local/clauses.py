"""Stage 3, clauses: each sentence cut into clauses with a subject, verbs and flags."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from loregraph.extract.base import SPEAKER
from loregraph.extract.local.endings import speaker_org_names
from loregraph.extract.local.kinds import PROJECT
from loregraph.extract.local.state import (
    Clause,
    Parse,
    in_prep_phrase,
    is_verb,
    lemma,
    resolve_it,
    resolve_person,
)
from loregraph.extract.local.words import (
    ALONE_MARKERS,
    CLAUSE_MARKERS,
    DECIDE_VERBS,
    EVALUATIVE_ADJ,
    FRIEND_ROLES,
    FUTURE_MARKERS,
    HEDGES,
    INTERJECTIONS,
    MODALS,
    PEOPLE_NOUNS,
    PLAN_VERBS,
    ROLE_NOUNS,
    SETUP_VERBS,
    STOP_VERBS,
    SUBJ_PRONOUNS,
    TEAM_HEADS,
    TELLING_VERBS,
    common_word,
    word_class,
)

_WORK_ROLES = ROLE_NOUNS - FRIEND_ROLES
_INTRO_ROLES = _WORK_ROLES | word_class("introduction_roles")
_PRAISE = word_class("praise_adjectives")

_HABIT_ADVERBS = frozenset({"still", "also", "mostly", "usually", "always", "mainly", "now", "basically", "honestly"})
_QUANTIFIER_SUBJECTS = frozenset({"everything", "everyone", "all", "nothing", "nobody", "most", "both"})


def split_clauses(st: Parse, sent: Any) -> list[Clause]:
    doc = st.doc
    bounds = [sent.start]
    has_verb = False
    said = {t.i for t in _outside_brackets(sent)}
    for t in sent:
        if t.i not in said:
            continue  # "Sunita (my team lead) and I are on X": an aside in brackets opens no clause
        if st.at[t.i] != -1:
            continue
        if (t.i > bounds[-1] or t.tag_ in ("VBD", "VBN", "VBZ")) and is_verb(st, t):
            has_verb = True  # (a past verb opening the clause counts: "picked up X and honestly it's fun")
        low = t.lower_
        nxt = doc[t.i + 1] if t.i + 1 < sent.end else None
        if low in (";", ":") or t.text in ("—", "–") or (low == "-" and t.whitespace_):
            if nxt is not None:
                bounds.append(t.i + 1)
                has_verb = False
            continue
        if not has_verb:
            continue
        if low == "why" and t.i - 2 >= bounds[-1] and doc[t.i - 1].lemma_ == "be" \
                and doc[t.i - 2].lower_ in ("that", "this") and nxt is not None:
            bounds.append(t.i + 1)  # "That's why I'm into X": what follows is a clause of its own
            has_verb = False
            continue
        if low in CLAUSE_MARKERS and t.i > sent.start:
            if low == "so" and nxt is not None and nxt.lower_ in {"much", "many", "far", "good"}:
                continue
            if low == "so" and nxt is not None and t.dep_ == "advmod" and nxt.pos_ in ("ADJ", "ADV", "ADP"):
                continue  # "I'm so into birding", "she's so proud": an intensifier, no new clause
            bounds.append(t.i)
            has_verb = False
            continue
        if low in ("and", "but", ",") and nxt is not None:
            # a new clause if a subject + verb (or a bare verb) follows
            k = t.i + 1
            while k < sent.end and (doc[k].lower_ in ("and", "but", "so", "then", "also", ",")
                                    or (doc[k].pos_ == "ADV" and doc[k].dep_ == "advmod" and doc[k].is_lower
                                        and k + 1 < sent.end and doc[k + 1].lower_ in SUBJ_PRONOUNS)):
                k += 1  # ("..., and honestly it's fine": an adverb before the next clause's subject)
            if k < sent.end and (doc[k].lower_ in SUBJ_PRONOUNS or (st.at[k] != -1 and not _listed(st, t, k))
                                 or (doc[k].lower_ in _QUANTIFIER_SUBJECTS and doc[k].dep_ in ("nsubj", "nsubjpass"))
                                 or (doc[k].tag_ == "MD" and t.lower_ == ",")  # "..., can't live without it"
                                 or is_verb(st, doc[k]) or doc[k].pos_ in ("DET",)
                                 or doc[k].tag_ == "PRP$" or (t.lower_ == "," and _noun_subject(doc[k]))):
                bounds.append(t.i + 1)
                has_verb = False
    bounds.append(sent.end)
    out = []
    for a, b in itertools.pairwise(bounds):
        if b > a:
            out.append(Clause(a, b))
    return out


def _noun_subject(t: Any) -> bool:
    """A plain noun (or its first modifier) that is the subject of a verb after it: "..., deploys go through X",
    "..., database is Postgres" (a comma splice: a new clause)."""
    while t.dep_ in ("compound", "amod") and t.head.i > t.i:
        t = t.head
    return t.pos_ == "NOUN" and t.dep_ in ("nsubj", "nsubjpass") and t.head.i > t.i


def _own_noun_subject(toks: Any, verbs: list[Any]) -> bool:
    """The clause names its own subject, a common noun no mention covers: "Perforce for source control and
    builds go through Jenkins", "the Oracle box is off, claims runs on Postgres" (no tool or organisation before it
    is the subject; a project before it is: "Deepwake's built in Unity, and all the audio goes through FMOD"; the
    speaker is too: "I use Figma and the specs live in Notion")."""
    return any(t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "NOUN" and t.head in verbs for t in toks)


def analyse_clause(st: Parse, cl: Clause, prev: Clause | None) -> Clause:
    doc = st.doc
    toks = doc[cl.start:cl.end]
    said = _outside_brackets(toks)  # ("can you imagine" inside an aside makes no plan of the clause)
    text_low = " " + " ".join(t.lower_ for t in said) + " "
    verbs = [t for t in toks if is_verb(st, t)]
    cl.verbs = verbs
    first_v = verbs[0].i if verbs else cl.start  # verbless fragment: inherits the subject
    # subject: mentions/pronouns before the first verb, not inside a prepositional phrase
    subj: list[Any] = []
    k = cl.start
    while k < first_v:
        t = doc[k]
        prev_t = doc[k - 1] if k > cl.start else None
        in_pp = prev_t is not None and prev_t.pos_ == "ADP" and prev_t.lower_ not in ("and",)
        if st.at[k] != -1:
            m = st.mentions[st.at[k]]
            if m.is_speaker and not in_pp:
                subj.append(SPEAKER)
            if not in_pp and m.type and k == m.start and not in_prep_phrase(st, m, cl.start) and not m.addressed:
                subj.append(m)
            elif not m.type and m.end - m.start == 1 and _setup_subject(st, t, first_v):
                subj.append(SPEAKER)  # "Deploys run on X": a capital only because it opens the sentence
            k = m.end
            continue
        low = t.lower_
        if low in ("i", "we") and t.dep_ in ("nsubj", "nsubjpass", "conj"):
            subj.append(SPEAKER)
        elif low == "me" and t.dep_ in ("nsubj", "conj") and (
                (k + 1 < first_v and doc[k + 1].lower_ == "and") or (k > cl.start and doc[k - 1].lower_ == "and")):
            subj.append(SPEAKER)  # "Me and Hollis are running X", "Hollis and me run X" (informal subjects)
        elif low in ("she", "he") and t.dep_ in ("nsubj", "nsubjpass"):
            p = resolve_person(st, t.i)
            if p is not None:
                subj.append(p)
        elif low == "it" and t.dep_ in ("nsubj", "nsubjpass"):
            p = resolve_it(st, t.i)
            if p is not None:
                subj.append(p)
        elif low in ROLE_NOUNS and any(c.lower_ in ("my", "our") for c in t.children) \
                and t.dep_ in ("nsubj",):
            cl.subj_role = low
        elif low in ("everything", "all") and t.dep_ in ("nsubj", "nsubjpass") and st.speaker_ok:
            subj.append(SPEAKER)  # "everything runs on X now": the speaker's work does
        elif t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "NOUN" and low not in ROLE_NOUNS \
                and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in t.children) \
                and not any(c.dep_ == "appos" and st.at[c.i] != -1 for c in t.children) \
                and not (k + 2 < first_v and doc[k + 1].text == "," and st.at[k + 2] != -1):
            # "our data lives in X", "my team owns X", "all our tasks are in X"
            if not any(c.lower_ in ("old", "former", "previous", "last", "ex") for c in t.children):
                subj.append(SPEAKER)
            else:
                subj.append(None)
        elif _setup_subject(st, t, first_v):
            subj.append(SPEAKER)  # "billing runs on Stripe", "the docs are hosted on X": the speaker's own setup
        elif t.dep_ == "nsubj" and low in _OWN_WORKPLACE and st.speaker_ok and any(
                c.dep_ == "det" and c.lower_ == "the" for c in t.children) and not any(
                c.dep_ in ("prep", "compound", "poss", "amod") for c in t.children) and _works_somewhere(st):
            subj.append(SPEAKER)  # "the uni's ditching Splunk", "the school follows X": where the speaker works
            # (the graph says the speaker belongs to an organisation; a parent's "the school" is not theirs)
        elif low in ("they", "you", "everyone", "nobody", "someone") and t.dep_ in ("nsubj",):
            subj.append(None)
        k += 1
    subj_clean = [s for s in subj if s is not None]
    rather = next((t for t in toks if t.lower_ == "rather"), None)
    if rather is not None and SPEAKER in subj_clean and any(s is not SPEAKER for s in subj_clean) and any(
            t.lower_ in ("we", "i") and t.dep_ == "nsubj" and t.i > rather.i for t in toks) and not any(
            t.lower_ in ("i", "we") and t.dep_ == "nsubj" and t.i < rather.i for t in toks):
        subj_clean = [s for s in subj_clean if s is not SPEAKER]  # "Tomas would rather we used X": his wish
    # drop the person mention after "my manager X" role NP (handled as appos; X is the subject)
    if not subj and all(v.dep_ == "acl" for v in verbs) and st.speaker_ok and (prev is None or not prev.subj) \
            and _self_introduction(st, cl):  # verbless, or only "..., currently running X" on the role
        subj_clean = [SPEAKER]  # "Backend engineer at Tallyrock here.": the speaker's own role, left unsaid
        cl.introduction = True
    elif not subj and prev is not None and (not verbs or toks[0].lower_ in ("and", "to", "then", ",")
                                          or doc[cl.start - 1].lower_ in ("and", ",", "but", "to")) \
            and not (_own_noun_subject(toks, verbs) and prev.subj
                     and all(s is not SPEAKER and s.type != PROJECT for s in prev.subj)):
        subj_clean = list(prev.subj)
        cl.inherited = True
        if not verbs:
            cl.verbs = list(prev.verbs)
        if not cl.subj_role:
            cl.subj_role = prev.subj_role
    elif not subj and prev is not None and not verbs:
        subj_clean = list(prev.subj)
        cl.verbs = list(prev.verbs)
        cl.inherited = True
    elif not subj and prev is None and not verbs and st.speaker_ok and _on_work_fragment(st, cl):
        subj_clean = [SPEAKER]  # "now on the Scorecard project with Wen": the speaker, verb and all left unsaid
        cl.on_work = True
    elif not subj and prev is None and st.speaker_ok and _fan_fragment(st, cl):
        subj_clean = [SPEAKER]  # "big fan of X": the speaker, left unsaid
        if not cl.verbs:
            cl.verbs = [t for t in toks if t.lower_ in ("fan", "fans", "believer", "advocate", "lover")][:1]
    elif not subj and prev is None and verbs and st.speaker_ok and _diary_verb(st, cl, verbs[0]):
        subj_clean = [SPEAKER]  # "Stopped using X.", "Ditched X for Y": the speaker, left unsaid
    elif not subj and prev is None and st.speaker_ok and _missed_activity(st, cl) is not None \
            and doc[cl.start].lower_ == "miss":
        subj_clean = [SPEAKER]  # "Miss working with X already": the speaker, left unsaid
    if not subj_clean and prev is not None and not prev.subj and prev.verbs and verbs and st.speaker_ok \
            and (_diary_verb(st, prev, prev.verbs[0]) or _done_it(st, prev)) and _subjectless_event(verbs[0]):
        subj_clean = [SPEAKER]  # "Done it, switched to Xero at the weekend": a second verb, the same speaker
    cl.subj = subj_clean
    # flags
    lems = [lemma(v) for v in cl.verbs]
    aux_low = {t.lower_ for t in said if t.pos_ in ("AUX", "PART", "ADV", "VERB", "INTJ")}
    cl.hypothetical = bool(aux_low & MODALS) or _conditional(said, cl) \
        or any(lem in PLAN_VERBS and (i + 1 < len(cl.verbs)) for i, lem in enumerate(lems)) \
        or " going to " in text_low or " about to " in text_low or " thinking about " in text_low \
        or " whether " in text_low or any(f in text_low for f in FUTURE_MARKERS) \
        or " thinking of " in text_low or any(t.lower_ == "'d" and t.tag_ == "MD" for t in said)
    told = _news_told(cl, lems, aux_low, text_low) if cl.hypothetical else None
    if told is not None:
        cl.hypothetical = False  # "I wanted to let you know I joined a choir": what is told happened
        if not cl.subj and st.speaker_ok and any(c.dep_ == "nsubj" and c.lower_ in ("i", "we")
                                                 for c in told.children):
            cl.subj = [SPEAKER]  # "(I) wanted to let you know I joined a choir"
    if any(lem in PLAN_VERBS and v.dep_ in ("ROOT", "conj", "ccomp") and v.tag_ in ("VBG",)
           for lem, v in zip(lems, cl.verbs, strict=False)):
        cl.hypothetical = True  # "we're evaluating X", "I'm considering X"
    if lems and lems[0] in ("try", "consider", "evaluate", "explore") and cl.verbs[0].tag_ != "VBD":
        cl.hypothetical = True
    if prev is not None and cl.inherited and prev.hypothetical:
        cl.hypothetical = True
    if cl.when is not None and cl.when.when > st.ctx.reference_time + timedelta(days=1) \
            and not any(v.tag_ in ("VBD", "VBN") for v in verbs):
        cl.hypothetical = True  # "X is replacing A with B in June", "I'm starting at Y in two weeks": a plan
    if ((" over " in text_low and any(lem in ("take", "pick", "choose") for lem in lems)) or " rather " in text_low) \
            and aux_low & {"'d", "would"} and " if " not in text_low:
        cl.hypothetical = False  # "I'd take X over Y any day": a preference stated now
        cl.preference = True
    if any(lem in DECIDE_VERBS for lem in lems) and not (aux_low & MODALS):
        cl.hypothetical = False
    cl.negated = any((t.dep_ == "neg" or t.lower_ in ("not", "n't", "never")) and not _not_only(doc, t)
                     for t in said) or " no longer " in text_low or any(_nobody(doc, t) for t in said)
    if prev is not None and cl.inherited and prev.negated and not verbs:
        cl.negated = True
    cl.ended = any(mk in text_low for mk in (" anymore ", " any more ", " no longer ", " any longer ", " used to ")) \
        or (any(mk in text_low for mk in _ENDING_PHRASES) and not any(
            f" {w} " in text_low for w in ("when", "once", "after", "until", "till", "if", "before"))
            and not _work_done_with(said))
    if prev is not None and cl.inherited and prev.ended and not verbs:
        cl.ended = True
    if _missed_activity(st, cl) is not None and not cl.negated:
        cl.ended = True  # "I miss pairing with X": what one misses doing has ended
    k = 1 if lems[:1] and lems[0] in ("have", "decide") and lems[1:2] and lems[1] in STOP_VERBS \
        and cl.verbs[1].head.i == cl.verbs[0].i and not aux_low & MODALS else 0
    # ("I had to stop volunteering with X": the stopping is what happened)
    if any(lem in STOP_VERBS for lem in lems[k:k + 1]) and not cl.negated:
        first = cl.verbs[k]
        if lemma(first) not in ("give", "get") or " give up " in text_low or " got rid of " in text_low \
                or " get rid of " in text_low or " phased out " in text_low:
            cl.ended = True
    cl.hedged = bool({t.lower_ for t in said} & HEDGES) or " i think " in text_low \
        or " i believe " in text_low or " not sure " in text_low
    cl.alone = any(f" {mk} " in text_low for mk in ALONE_MARKERS)
    return cl


def is_question(sent: Any) -> bool:
    """A sentence that asks (ends with "?")."""
    return sent.text.rstrip().endswith("?") or (
        sent[0].lower_ in {"can", "could", "would", "should", "do", "does", "did", "is", "are",
                           "have", "has", "what", "how", "why", "which", "who", "where", "when"}
        and sent.text.rstrip().endswith("?"))


_ASKING_OPENERS = frozenset({"can", "could", "would", "should", "do", "does", "did", "is", "are", "was", "were",
                             "have", "has", "what", "how", "why", "which", "who", "where", "when", "will", "any",
                             "anyone", "shall", "may", "might", "am", "if", "whether", "so", "or", "and", "but"})


def asks_from_the_start(sent: Any) -> bool:
    """A question sentence that asks from its first word ("Do you ...", "What if ...", "So we should drop X?"),
    not a statement with a question tagged on at its end ("moved to X, and honestly it's fine??")."""
    first = next((t for t in sent if not t.is_punct and t.pos_ != "INTJ" and t.lower_ not in INTERJECTIONS), None)
    return first is None or first.lower_ in _ASKING_OPENERS


def _diary_verb(st: Parse, cl: Clause, verb: Any) -> bool:
    """A sentence that opens with a past or present verb and has no subject ("Switched to X last week")."""
    first = next((t for t in st.doc[cl.start:cl.end] if t.pos_ not in ("ADV", "INTJ", "PUNCT", "CCONJ")
                  and not _opening_interjection(st, t)), None)
    if first is None:
        return False
    if first.i != verb.i and not (first.lower_ == "been" and first.dep_ == "aux" and first.head.i == verb.i):
        return False  # ("Been hacking on X all week": the perfect's subject and "have" left unsaid)
    if not first.is_sent_start and st.doc[first.i - 1].text not in (".", "!", ":") and not (
            st.doc[cl.start].is_sent_start
            and all(t.pos_ in ("ADV", "INTJ", "PUNCT") or _opening_interjection(st, t)
                    for t in st.doc[cl.start:first.i])):
        return False  # ("ugh, spent all day on X": an interjection and its comma before the verb)
    habitual = verb.tag_ == "VB" and first.i > cl.start and st.doc[first.i - 1].lower_ in _HABIT_ADVERBS
    subject = any(c.dep_ in ("nsubj", "nsubjpass", "expl") and not _opening_interjection(st, c)
                  for c in verb.children)  # ("argh, wasted a day on X": the parser may call "argh" the subject)
    if verb.lower_ == "been" and first.i == verb.i:
        return not subject  # "Been with X for years"
    if (verb.tag_ not in ("VBD", "VBN", "VBZ", "VBP", "VBG") and not habitual) \
            or verb.lemma_ in ("be", "have", "do", "thank", "love"):  # "Still use X daily": not an order
        return verb.tag_ in ("VBD", "VBN") and verb.lemma_ == "love"
    return not subject


def _done_it(st: Parse, cl: Clause) -> bool:
    """ "Done it", "Finally did it": news of one's own, its subject left unsaid."""
    toks = [t for t in st.doc[cl.start:cl.end] if t.pos_ not in ("ADV", "INTJ", "PUNCT")]
    return len(toks) == 2 and toks[0].lemma_ == "do" and toks[0].tag_ in ("VBD", "VBN") and toks[1].lower_ == "it"


def _work_done_with(said: Any) -> bool:
    """ "nav done with Nav2", "our invoicing is done with Sage": a piece of work done by means of a tool (not "I'm
    done with X" or "the team is done with X": someone finished)."""
    return any(t.lower_ == "done" and i + 1 < len(said) and said[i + 1].lower_ == "with"
               and any((c.dep_ in ("nsubj", "nsubjpass") or c.i == t.head.i) and (c.pos_ == "NOUN" or c.text.islower())
                       and c.lower_ not in PEOPLE_NOUNS and c.lower_ not in TEAM_HEADS
                       for c in [*t.children, *([t.head] if t.dep_ == "acl" else [])])
               for i, t in enumerate(said))


def _subjectless_event(verb: Any) -> bool:
    """A verb in the past or present with no subject of its own ("..., switched to X", "..., moved us to Y")."""
    return verb.tag_ in ("VBD", "VBN", "VBZ", "VBP") and verb.lemma_ not in ("be", "have", "do") and not any(
        c.dep_ in ("nsubj", "nsubjpass", "expl") for c in verb.children)


def _opening_interjection(st: Parse, t: Any) -> bool:
    """ "argh", "ugh", "welp" opening the turn (the tagger may read them as names)."""
    return t.is_lower and t.lower_ in INTERJECTIONS and (t.is_sent_start or t.i == 0)


def _setup_subject(st: Parse, t: Any, first_v: int) -> bool:
    """A bare or "the" common noun that names a part of the speaker's own setup, as the subject of a verb of
    running or keeping ("billing runs on X", "the docs are hosted on X", "payroll goes through X"). Never a
    person noun, never a possessed noun ("his squad runs ...": someone else's)."""
    opener = t.is_sent_start and t.text[1:].islower()  # "Deploys run on X", "Payroll goes through X"
    gerund = t.tag_ == "VBG" and not any(c.dep_ in ("dobj", "nsubj") for c in t.children)  # "alerting goes via X"
    if not st.speaker_ok or t.dep_ not in ("nsubj", "nsubjpass") or not (
            ((t.pos_ == "NOUN" or gerund) and (t.is_lower or opener))
            or (opener and t.pos_ == "PROPN" and common_word(t.lower_))):
        return False
    if t.lower_ in ROLE_NOUNS | PEOPLE_NOUNS or (t.head.i != first_v and t.head.i < first_v):
        return False
    if t.head.lemma_ not in SETUP_VERBS or t.head.pos_ not in ("VERB", "AUX"):
        return False
    return all(c.lower_ in ("the", "every", "each") or c.dep_ in ("compound", "amod")
               for c in t.children if c.i < t.i) \
        and not any(c.dep_ in ("poss", "relcl", "acl", "appos") or st.at[c.i] != -1 for c in t.children)


_NOT_ONLY = frozenset({"just", "only", "simply", "merely", "solely", "purely"})


_ENDING_PHRASES = tuple(f" {p} " for p in word_class("ending_phrases"))


def _nobody(doc: Any, t: Any) -> bool:
    """A subject that denies the verb for everyone: "nobody uses X", "no one reads it", "none of us use Y"."""
    if t.dep_ not in ("nsubj", "nsubjpass"):
        return False
    return t.lower_ in ("nobody", "none", "neither") or (
        t.lower_ == "one" and t.i > 0 and doc[t.i - 1].lower_ == "no")


_OWN_WORKPLACE = word_class("own_workplace_nouns")


def _works_somewhere(st: Parse) -> bool:
    return bool(speaker_org_names(st))


def _not_only(doc: Any, t: Any) -> bool:
    """"... and not just because it's cheap", "not only for notes": a 'not' that widens, never negates; nor does an
    aside after a comma ("Grafana for dashboards now, no more squinting at logs": the old chore is what stopped)."""
    if t.lower_ == "no" and t.i >= 1 and doc[t.i - 1].text in (",", "-", "—", "–", ";") and t.i + 2 < len(doc) \
            and doc[t.i + 1].lower_ == "more" and doc[t.i + 2].lower_.endswith("ing"):
        return True
    return t.lower_ == "not" and t.i + 1 < len(doc) and doc[t.i + 1].lower_ in _NOT_ONLY


def _missed_activity(st: Parse, cl: Clause) -> Any:
    """The gerund after "miss" ("I miss pairing with X", "Miss working with X"), or None."""
    doc = st.doc
    for t in doc[cl.start:cl.end - 1]:
        if t.lower_ in ("miss", "missing") and doc[t.i + 1].tag_ == "VBG":
            return doc[t.i + 1]
    return None


def _conditional(said: list[Any], cl: Clause) -> bool:
    """The clause is, or opens with, an "if" clause ("if we switch to X", "If I get the job, I'll use X"); a
    condition trailing after what is said ("I'm a member of X, if that matters") leaves the statement standing."""
    first = cl.verbs[0].i if cl.verbs else None
    return any(t.lower_ == "if" and (first is None or t.i < first or t.head.i == first) for t in said)


def _member_opening(doc: Any, k: int, end: int) -> bool:
    """ "(proud / new / active) member of ...": a membership said with no subject or verb."""
    while k < end and doc[k].pos_ in ("ADJ", "DET"):
        k += 1
    return k + 1 < end and doc[k].lower_ in ("member", "members") and doc[k + 1].lower_ == "of"


def _outside_brackets(toks: Any) -> list[Any]:
    """The tokens of a span that are not inside round brackets."""
    out, depth = [], 0
    for t in toks:
        if t.text == "(":
            depth += 1
        elif t.text == ")" and depth:
            depth -= 1
        elif not depth:
            out.append(t)
    return out


def _on_work_fragment(st: Parse, cl: Clause) -> bool:
    """A verbless sentence opening (after "now", "still", ...) with "on" and a named project ("now on the Supplier
    Scorecard project", "still on Kite, mostly testing") or with "member of" ("Proud member of the X Guild")."""
    doc = st.doc
    k = cl.start
    while k < cl.end and (doc[k].pos_ in ("ADV", "INTJ", "PUNCT") or doc[k].lower_ in INTERJECTIONS):
        k += 1
    if k < cl.end and (doc[cl.start].is_sent_start or cl.start == 0) and _member_opening(doc, k, cl.end):
        return True  # "Proud member of the Clayworkers Guild."
    if k >= cl.end or doc[k].lower_ != "on" or not (doc[cl.start].is_sent_start or cl.start == 0):
        return False
    j = k + 1
    while j < cl.end and doc[j].pos_ == "DET":
        j += 1
    return j < cl.end and st.at[j] != -1 and st.mentions[st.at[j]].type == PROJECT


def _self_introduction(st: Parse, cl: Clause) -> bool:
    """A verbless clause headed by a bare work role with "at <name>": "Backend engineer at Tallyrock here",
    "data analyst at Morrow Health". Not "a great engineer at X" or "my editor at X" (someone else)."""
    for t in st.doc[cl.start:cl.end]:
        greeted = t.head.dep_ == "ROOT" and t.head.pos_ == "INTJ"  # "hi, backend eng at X here"
        if (t.dep_ != "ROOT" and not greeted) or t.pos_ not in ("NOUN", "PROPN") or t.lower_ not in _INTRO_ROLES:
            continue
        kids = list(t.children)
        if any(c.dep_ in ("det", "poss", "nsubj") or c.lower_ in EVALUATIVE_ADJ or c.lower_ in _PRAISE
               for c in kids):
            return False
        # "at X" on the role or on its field ("PhD student in ecology at the University of Ardmoor")
        ats = [c for c in kids if c.dep_ == "prep"]
        ats += [g for c in ats if c.lower_ == "in" for p in c.children for g in p.children if g.dep_ == "prep"]
        return any(c.lower_ in ("at", "for", "with") and any(g.dep_ == "pobj" and st.at[g.i] != -1
                                                            for g in c.children) for c in ats)
    return False


def _news_told(cl: Clause, lems: list[str], aux_low: set[str], text_low: str) -> Any:
    """The verb of the news in "I wanted to tell you that I joined a choir", "wanted to let you know we adopted a
    cat": a wish to tell, then news told in the past tense; the only plan is the telling. None with a modal, "if"
    or another plan verb."""
    if aux_low & MODALS or " if " in text_low or any(f in text_low for f in FUTURE_MARKERS):
        return None
    plans = [i for i, lem in enumerate(lems) if lem in PLAN_VERBS]
    if len(plans) != 1 or plans[0] + 1 >= len(lems) or lems[plans[0] + 1] not in TELLING_VERBS:
        return None
    told = [v for v in cl.verbs[plans[0] + 2:] if v.tag_ == "VBD"][:1]  # "let you know I joined"
    if told and any(c.dep_ == "nsubj" and c.lower_ in SUBJ_PRONOUNS - {"it", "you"} for c in told[0].children):
        return told[0]
    return None


def _fan_fragment(st: Parse, cl: Clause) -> bool:
    """A clause that opens with "(big) fan of", "huge believer in": a preference with no subject."""
    toks = [t for t in st.doc[cl.start:min(cl.end, cl.start + 4)] if t.pos_ not in ("DET", "INTJ", "PUNCT")]
    for a, b in itertools.pairwise(toks):
        if a.lower_ in ("fan", "fans", "believer", "advocate", "lover") and b.lower_ in ("of", "in"):
            return all(t.pos_ in ("ADJ", "ADV", "DET") for t in toks[:toks.index(a)])
    return False


def _listed(st: Parse, conj: Any, k: int) -> bool:
    """"with X and Y, ...": a name after "and" that only continues a list of names (no verb of its own)."""
    doc = st.doc
    if conj.i == 0 or conj.lower_ not in ("and", "or", ","):
        return False  # "X, Y and Z" too: a comma between names continues the list
    if st.at[conj.i - 1] == -1:
        # "X for jobs and Y": a short verbless adjunct after the last name still continues the list
        back = next((j for j in range(conj.i - 1, max(-1, conj.i - 5), -1) if st.at[j] != -1), None)
        gap = doc[back + 1:conj.i] if back is not None else None
        if gap is None or not len(gap) or gap[0].pos_ != "ADP" or any(t.pos_ in ("VERB", "AUX") for t in gap):
            return False
    m = st.mentions[st.at[k]]
    nxt = doc[m.end] if m.end < len(doc) else None
    return nxt is None or nxt.is_punct or nxt.lower_ in ("and", "or", "for", "in", "on", "with", "to", "at")
