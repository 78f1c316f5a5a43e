"""Stage 4b, relations typed by meaning: a clause's predicate phrase is compared with a library of
example phrasings per relation type and per ending (``extract/data/relation_phrases.tsv``), embedded
with the local embedder; the nearest examples decide, with a confidence from their similarity.

It runs after the rules, only for subject–object pairs the rules left unrelated, so precise rules
keep priority and meaning covers the wording they miss. Shapes handled, from the dependency parse and
the clause's mentions: subject + predicate + object (with prepositions and coordinated objects),
a person subject acting on the speaker ("X supervises me"), and a name's own predicate ("X is history").
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from loregraph.extract.base import SPEAKER, ExtractedEntity
from loregraph.extract.local.kinds import (
    CONCEPT,
    DECIDED,
    DEPENDS_ON,
    KNOWS,
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
from loregraph.extract.local.state import (
    Clause,
    Mention,
    Parse,
    clause_gov_verb,
    clause_mentions,
    clean_name,
    controller,
    lemma,
    moves_a_thing,
    resolve_person,
    unit_of,
)
from loregraph.extract.local.words import (
    COLLAB_VERBS,
    NON_USE_VERBS,
    OPENING_ZIPF,
    PEOPLE_NOUNS,
    PLAN_VERBS,
    ROLE_NOUNS,
    SWITCH_VERBS,
    TASTE_KINDS,
    VISIT_VERBS,
    WORK_VERBS,
    common_word,
    first_name,
)

log = logging.getLogger(__name__)

PHRASES_FILE = Path(__file__).resolve().parent.parent / "data" / "relation_phrases.tsv"
END = "END"
NONE = "NONE"
MIN_SIMILARITY = 0.70  # below this the nearest example is not close enough to say anything
MIN_MARGIN = 0.03  # the best label must beat the best other label by this much
K_NEIGHBOURS = 3
FRAME_SIMILARITY = 0.85  # a verb frame alone ("play in") says something only when it is one of the examples

# relation types allowed per object kind (the library's rows name the kind too; this is the guard)
ALLOWED: dict[str, frozenset[str]] = {
    "tool": frozenset({USES, PREFERS, DECIDED, DEPENDS_ON, END}),
    "project": frozenset({WORKS_ON, END}),
    "organization": frozenset({PART_OF, END}),
    "person": frozenset({WORKS_WITH, KNOWS, END}),
    "me": frozenset({WORKS_WITH, KNOWS}),
    "self": frozenset({END}),
}
_KIND_OF_TYPE = {TOOL: "tool", CONCEPT: "tool", PROJECT: "project", ORGANIZATION: "organization", PERSON: "person"}
_FILLER = frozenset({"really", "honestly", "just", "basically", "totally", "actually", "literally", "pretty",
                     "kinda", "lol", "btw", "tbh", "also", "now", "currently", "these", "days", "i", "we",
                     "obviously", "definitely", "absolutely", "mostly", "usually", "always", "even"})
_SUBJECT_WORDS = frozenset({"i", "we"})


@dataclass(frozen=True, slots=True)
class Example:
    """One row of the phrase library."""

    label: str
    kind: str
    phrase: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """The meaning stage's reading of one predicate phrase."""

    label: str  # a relation type, END or NONE
    example: str  # the nearest example phrase with that label
    similarity: float
    confidence: float


def normalise(phrase: str) -> str:
    """Articles carry no meaning here; drop them on both sides of the comparison."""
    return " ".join(w for w in phrase.split() if w not in ("a", "an", "the")) or phrase


def load_examples(path: Path = PHRASES_FILE) -> list[Example]:
    """Rows of the phrase library (comments and blank lines skipped)."""
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        label, kind, phrase = raw.split("\t")
        out.append(Example(label.strip(), kind.strip(), phrase.strip()))
    return out


class PhraseLibrary:
    """Example phrasings embedded once; ``classify`` finds the nearest ones for a phrase."""

    def __init__(self, embedder: Any = None, path: Path = PHRASES_FILE) -> None:
        self.examples = load_examples(path)
        self._embedder = embedder
        self._by_kind: dict[str, tuple[list[Example], np.ndarray]] = {}
        self._lock = threading.Lock()
        self.available = True

    def _ready(self) -> bool:
        if self._by_kind or not self.available:
            return self.available
        with self._lock:
            if self._by_kind:
                return True
            try:
                if self._embedder is None:
                    from loregraph.models.embedder import get_default_embedder

                    self._embedder = get_default_embedder()
                vecs = np.asarray(self._embedder.embed([normalise(e.phrase) for e in self.examples]),
                                  dtype=np.float32)
            except Exception as exc:  # no local model: the stage is skipped, the rules still run
                log.warning("meaning stage off: embedder unavailable (%s)", type(exc).__name__)
                self.available = False
                return False
            for kind in ALLOWED:
                idx = [i for i, e in enumerate(self.examples) if e.kind == kind]
                self._by_kind[kind] = ([self.examples[i] for i in idx], vecs[idx])
        return True

    def classify(self, phrase: str, kind: str) -> Verdict | None:
        """Nearest-example reading of ``phrase`` for an object of ``kind``; None if nothing is close."""
        if not phrase or kind not in ALLOWED or not self._ready():
            return None
        rows, mat = self._by_kind[kind]
        if not rows:
            return None
        vec = np.asarray(self._embedder.embed([normalise(phrase)])[0], dtype=np.float32)
        sims = mat @ vec
        order = np.argsort(-sims)[:K_NEIGHBOURS]
        best: dict[str, tuple[float, str]] = {}
        for i in order:
            lab = rows[i].label
            if lab not in best:
                best[lab] = (float(sims[i]), rows[i].phrase)
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
        label, (sim, example) = ranked[0]
        # the best other label anywhere in the library, not only among the k nearest
        other = max((float(s) for s, r in zip(sims, rows, strict=True) if r.label != label), default=0.0)
        margin = sim - other
        if sim < MIN_SIMILARITY or margin < MIN_MARGIN:
            return Verdict(NONE, example, sim, 0.0)
        confidence = float(np.clip(0.7 + (sim - MIN_SIMILARITY) * 0.8 + margin * 0.5, 0.7, 0.9))
        return Verdict(label, example, sim, round(confidence, 2))


# ---------------------------------------------------------------------------------------------
# predicate phrases from the parse
# ---------------------------------------------------------------------------------------------


def _word(st: Parse, t: Any) -> str:
    low = t.lower_
    if low in ("'m", "'re", "'s", "am", "are", "is", "was", "were", "been", "being"):
        return "be"
    if low in ("n't", "never"):
        return "not" if low == "n't" else "never"
    if low == "ca":
        return "can"
    if low in ("'ve", "'d", "'ll", "wo"):
        return {"'ve": "have", "'d": "would", "'ll": "will", "wo": "will"}[low]
    if t.pos_ in ("VERB", "AUX", "NOUN"):
        return lemma(t)
    return low


def predicate_phrase(st: Parse, start: int, end: int) -> str:
    """Lemmatised words of tokens [start, end): names become their kind, fillers and punctuation go."""
    words: list[str] = []
    k = start
    while k < end:
        t = st.doc[k]
        if st.at[k] != -1:
            m = st.mentions[st.at[k]]
            kind = _KIND_OF_TYPE.get(m.type, "thing")
            if not words or words[-1] != kind:
                words.append(kind)
            k = max(m.end, k + 1)
            continue
        k += 1
        if t.is_punct or t.is_space or t.lower_ in _FILLER or t.like_num:
            continue
        w = _word(st, t)
        if w and (t.is_alpha or w in ("not", "be", "have", "would", "will", "can")):  # "'s", "'d": contractions
            words.append(w)
    return " ".join(words[-8:])


def verb_frame(st: Parse, o: Mention, start: int) -> str:
    """The governing verb's frame for an object: its lemma, particles and the object's preposition
    ("played keys in a band called X" → "play in"); "" when the object hangs from no verb after ``start``."""
    head = st.doc[o.end - 1]
    while head.dep_ in ("compound", "flat", "appos", "conj") and head.head.i != head.i:
        head = head.head
    prep = ""
    if head.dep_ == "pobj":
        prep = head.head.lower_
        head = head.head
    elif head.dep_ not in ("dobj", "attr", "oprd"):
        return ""
    verb = head.head
    if verb.lower_ in ("called", "named") and verb.head.dep_ in ("pobj", "dobj"):
        # "in a band called X": the frame of the noun the name is given to
        noun = verb.head
        prep = noun.head.lower_ if noun.dep_ == "pobj" else ""
        verb = noun.head.head if noun.dep_ == "pobj" else noun.head
    if not prep or verb.pos_ not in ("VERB", "AUX") or verb.i < start or verb.i >= o.start:
        return ""  # a bare verb ("run X", "test X") is too ambiguous without the words around it
    words = [w for w in (_word(st, c) for c in verb.children if c.dep_ == "neg" and c.i < verb.i)]
    words.append(_word(st, verb))
    words += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    if prep:
        words.append(prep)
    return " ".join(words)


def _compared(st: Parse, o: Mention) -> bool:
    """The object of a comparison ("over X", "than X", "instead of X", "vs X"): no relation of its own."""
    words = [t.lower_ for t in st.doc[max(0, o.start - 2):o.start]]
    return bool(words) and (words[-1] in ("over", "than", "vs", "vs.", "versus") or words[-2:] == ["instead", "of"]
                            or words[-2:] == ["rather", "than"])


def _phrase_start(st: Parse, cl: Clause, start: int, o: Mention) -> int:
    """Where the predicate of ``o`` begins: its governing verb, or after the last name before it."""
    k = start
    for i in range(o.start - 1, start - 1, -1):
        t = st.doc[i]
        if st.at[i] != -1 and st.at[i] != st.at[o.start]:
            earlier = st.mentions[st.at[i]]
            gap = st.doc[earlier.end:o.start]
            if len(gap) == 1 and gap[0].lower_ in ("for", "with", "to", "onto", "into") and earlier.start > 0 \
                    and st.doc[earlier.start - 1].pos_ == "VERB":
                continue  # "left X for Y": the verb before X governs Y too
            if len(gap) == 1 and gap[0].lower_ in ("to", "onto", "into") and earlier.start > 0 \
                    and st.doc[earlier.start - 1].lower_ in ("from", "off"):
                continue  # "moved everyone from X to Y": the verb before "from X" governs Y
            return i + 1 if st.mentions[st.at[i]].end <= o.start else k
        if t.pos_ in ("VERB", "AUX") and st.at[i] == -1:
            # the verb group: auxiliaries, negation and particles in front of it belong to it
            j = i
            while j - 1 >= start and st.doc[j - 1].pos_ in ("AUX", "PART", "ADV") and st.at[j - 1] == -1:
                j -= 1
            return j
    return k


def _subject_end(st: Parse, cl: Clause, s: Any) -> int:
    if s is not SPEAKER and s.end <= cl.start:
        # a pronoun in this clause stands for a name said before ("X is our app, it's Y + Z")
        for t in st.doc[cl.start:cl.end]:
            if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "PRON":
                return int(t.i) + 1
        return cl.start
    if s is not SPEAKER:
        end = int(s.end)
        # "Ivy, our designer, hands ...", "Rhea, who's at X, is running ...": the subject's appositive or
        # relative clause is not part of the predicate
        head = st.doc[s.end - 1]
        for c in head.children:
            if c.dep_ in ("appos", "relcl", "acl") and c.i >= s.end:
                end = max(end, c.right_edge.i + 1)
        while end < cl.end and st.doc[end].is_punct:
            end += 1
        return end
    for t in st.doc[cl.start:cl.end]:
        if t.lower_ in _SUBJECT_WORDS and t.dep_ in ("nsubj", "nsubjpass"):
            return int(t.i) + 1
    if cl.verbs and cl.start <= cl.verbs[0].i < cl.end:
        return int(cl.verbs[0].i)
    return cl.start


# ---------------------------------------------------------------------------------------------
# the stage
# ---------------------------------------------------------------------------------------------


def relate_by_meaning(st: Parse, cl: Clause, library: PhraseLibrary) -> None:
    """Type the pairs of ``cl`` the rules left unrelated by the meaning of their predicate phrase."""
    if cl.question or cl.hypothetical or not cl.verbs or not library.available:
        return
    subjects = [s for s in cl.subj if (s is SPEAKER and st.speaker_ok) or (s is not SPEAKER and s.type)]
    generic = False
    it_end = -1
    if not subjects:
        subjects = _it_subject(st, cl)
        it_end = next((t.i + 1 for t in st.doc[cl.start:cl.end] if t.lower_ == "it"
                       and t.dep_ in ("nsubj", "nsubjpass")), -1) if subjects else -1
    if not subjects:
        owner = _generic_subject(st, cl)
        if owner is None:
            return
        subjects, generic = [owner], True
    ms = [m for m in clause_mentions(st, cl) if m.type and m.ref]
    subj_ids = {id(s) for s in subjects}
    first_verb = min(v.i for v in cl.verbs if cl.start <= v.i < cl.end) if any(
        cl.start <= v.i < cl.end for v in cl.verbs) else cl.start
    objs = [m for m in ms if id(m) not in subj_ids and m.start > first_verb]
    if not cl.negated and not cl.ended:
        objs = _type_unknown_objects(st, cl, subjects, first_verb, objs, library)
    for s in subjects:
        start = it_end if it_end != -1 else _subject_end(st, cl, s)
        prev_obj: Mention | None = None
        prev_verdict: Verdict | None = None
        for o in objs:
            if o.start < start:
                continue
            kind = _KIND_OF_TYPE.get(o.type)
            if kind is None or (_compared(st, o) and (s is SPEAKER or s.type not in (TOOL, CONCEPT))):
                continue
            gv = clause_gov_verb(st, o, cl)
            if gv is not None and gv.dep_ in ("acl", "relcl") and gv.i > start:
                continue  # "a broker written in Rust": the participle's noun owns the object, not the subject
            if gv is not None and controller(st, gv) not in (None, s):
                continue  # "I asked Tamsin to join X": Tamsin joins, not the subject
            if kind == "tool" and _copula_tool(st, cl, s, start, o, generic):
                prev_obj, prev_verdict = o, Verdict(USES, "<thing> is <tool>", 1.0, 0.8)
                continue
            if _moved_away_from(st, o, cl):  # "the school moved everyone from X to Y": X is left behind
                prev_obj, prev_verdict = o, None
                if not _moved_thing_named(st, o, cl):  # "switched Larkspur from X": Larkspur's, not ours
                    _emit(st, cl, s, o, kind, Verdict(END, "move from", 1.0, 0.8))
                continue
            between = st.doc[prev_obj.end:o.start].text.strip().lower() if prev_obj is not None else None
            if prev_obj is not None and prev_verdict is not None and _KIND_OF_TYPE.get(prev_obj.type) == kind \
                    and (between in ("and", "or", ",", ", and", "&", "+", "plus", "as well as", "with", "with the",
                                     "alongside") or _list_with_adjunct(st, prev_obj, o)):
                verdict: Verdict | None = prev_verdict  # coordination: "in X and Y"
            else:
                verdict = library.classify(predicate_phrase(st, _phrase_start(st, cl, start, o), o.start), kind)
                if verdict is None or verdict.label == NONE:
                    frame = verb_frame(st, o, start)
                    if frame:  # "hand everything off in X" → "hand off in": the verb's frame alone
                        verdict = library.classify(frame, kind)
                        if verdict is not None and (verdict.similarity < FRAME_SIMILARITY or verdict.label == END):
                            verdict = None  # endings need the whole phrase ("switched X from Y": X's, not ours)
            prev_obj, prev_verdict = o, verdict
            if verdict is None or verdict.label == NONE:
                continue
            if verdict.label == PART_OF and moves_a_thing(st, o, cl):
                continue  # "we moved the payroll files to Kestrel": a thing goes there, nobody joins
            if generic and (verdict.label not in (USES, DEPENDS_ON, DECIDED, END) or kind != "tool"):
                continue  # "the invoices go through X": the speaker's work uses X, nothing more
            if generic and verdict.label == DEPENDS_ON:
                verdict = Verdict(USES, verdict.example, verdict.similarity, verdict.confidence)
            if verdict.label == END and generic and any(
                    t.lower_ == "done" and not any(c.dep_ in ("aux", "auxpass") for c in t.children)
                    for t in st.doc[start:o.start]):
                continue  # "nav done with Nav2": work done by means of the tool, nothing finished with it
            _emit(st, cl, s, o, kind, verdict)
        if s is not SPEAKER and s.type == PERSON:
            _acts_on_speaker(st, cl, s, start, library)
        if s is not SPEAKER and s.type in (TOOL, CONCEPT) and not objs:
            phrase = predicate_phrase(st, start, cl.end)
            verdict = library.classify(phrase, "self")
            cut = _before_adjunct(st, start, cl.end)
            if (verdict is None or verdict.label == NONE) and cut < cl.end:
                # "X is gone from the repo": the verb group says it, the trailing adjunct only adds where
                verdict = library.classify(predicate_phrase(st, start, cut), "self")
            if verdict is not None and verdict.label == END and st.speaker_ok:
                st.out.end(SPEAKER, None, s, reason="meaning")
    _co_subjects(st, cl, subjects, objs)
    if SPEAKER in subjects and not objs:
        _fronted_object(st, cl, ms, library)


def _moved_away_from(st: Parse, o: Mention, cl: Clause) -> bool:
    """A tool after "from"/"off" of a moving verb that names where things go next ("from X to Y")."""
    if o.start == 0 or st.doc[o.start - 1].lower_ not in ("from", "off"):
        return False
    v = clause_gov_verb(st, o, cl)
    return v is not None and lemma(v) in SWITCH_VERBS | {"shift", "transfer"} and any(
        t.dep_ == "prep" and t.lower_ in ("to", "onto", "into") for t in st.doc[o.end:cl.end])


def _moved_thing_named(st: Parse, o: Mention, cl: Clause) -> bool:
    """The moving verb's object is a name ("switched Larkspur from X to Y"): the ending is that thing's, not ours."""
    v = clause_gov_verb(st, o, cl)
    return v is not None and any(c.dep_ == "dobj" and st.at[c.i] != -1 for c in v.children)


def _before_adjunct(st: Parse, start: int, end: int) -> int:
    """Where the first prepositional adjunct after the verb group begins (``end`` if there is none)."""
    seen_verb = False
    for t in st.doc[start:end]:
        if t.pos_ in ("VERB", "AUX") or t.tag_ == "VBN":
            seen_verb = True
        elif seen_verb and t.dep_ == "prep" and t.pos_ == "ADP":
            return int(t.i)
    return end


def _list_with_adjunct(st: Parse, a: Mention, b: Mention) -> bool:
    """"X for jobs and Y": a short verbless adjunct after a list item, then the list goes on."""
    gap = st.doc[a.end:b.start]
    return 1 < len(gap) <= 5 and gap[-1].lower_ in ("and", "or", ",", "&", "+") and gap[0].pos_ == "ADP" \
        and not any(t.pos_ in ("VERB", "AUX") or st.at[t.i] != -1 for t in gap)


def _emit(st: Parse, cl: Clause, s: Any, o: Mention, kind: str, v: Verdict) -> None:
    if v.label not in ALLOWED[kind] or st.out.related(s, o):
        return
    trace = f"meaning: \"{v.example}\" ({v.similarity:.2f})"
    if v.label == END:
        st.out.end(s, None, o, reason="meaning")
        return
    if cl.negated or cl.ended:
        return
    rtype = v.label
    if rtype == PART_OF and _one_off_visit(cl):
        return  # "I went to a support group yesterday": a visit on a day, not a membership
    if rtype == PART_OF and (unit := unit_of(st, o)) is not None:
        if st.out.related(s, unit):
            return
        if not (" " not in o.name and first_name(o.name)):  # "Dana's team": a person's, not a unit
            st.out.add(unit, PART_OF, o, cl, v.confidence, trace="meaning: an organisation's team is part of it")
        o = unit  # "moved to Kelham's night team": the team, which is part of Kelham
    if kind == "person" and s is not SPEAKER and s.type != PERSON:
        return
    if rtype == PREFERS and s is not SPEAKER and s.type in (TOOL, CONCEPT):
        if st.speaker_ok and not st.out.related(SPEAKER, s):
            st.out.add(SPEAKER, PREFERS, s, cl, v.confidence, trace=trace)  # "X is nicer than Y"
        return
    if kind == "tool" and s is not SPEAKER and s.type == TOOL and rtype == USES:
        rtype = DEPENDS_ON  # a tool built on another depends on it
    st.out.add(s, rtype, o, cl, v.confidence, trace=trace)


def _one_off_visit(cl: Clause) -> bool:
    """A clause that tells of going or being somewhere once: a visit verb in the simple past, or with a date."""
    v = next((v for v in cl.verbs if lemma(v) in VISIT_VERBS), None)
    return v is not None and (v.tag_ == "VBD" or cl.when is not None)


_FAVOURITE = frozenset({"favourite", "favorite", "fave"})
_WHOLLY = frozenset({"100", "%", "all", "entirely", "fully", "completely", "totally"})
_COPULA_PHRASES = frozenset({"be", "be all", "be now", "be still", "be just", "be entirely", "be mostly", "be pure",
                             "be 100", "be basically", "be all in"})


def _copula_tool(st: Parse, cl: Clause, s: Any, start: int, o: Mention, generic: bool) -> bool:
    """"crash reporting is X", "the app is X on Y", "Acme's stack is X": the owner uses X (a rule)."""
    if not cl.verbs or lemma(cl.verbs[0]) != "be" or cl.negated or cl.ended:
        return False
    nouns = [t for t in st.doc[cl.start:cl.verbs[0].i] if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "NOUN"]
    if any(t.lemma_.lower() in TASTE_KINDS or any(c.lower_ in _FAVOURITE for c in t.children) for t in nouns):
        return False  # "my favourite dish is X", "my favorite thing is X": a taste, not a thing in use
    noun_subject = s is SPEAKER and bool(nouns)
    wholly = s is SPEAKER and any(t.lower_ in _WHOLLY for t in st.doc[cl.verbs[0].i + 1:o.start]) and any(
        t.lower_ == "we" and t.dep_ == "nsubj" for t in st.doc[cl.start:cl.verbs[0].i])  # "we're 100% X now"
    if not (generic or noun_subject or wholly or (s is not SPEAKER and s.type in (PROJECT, ORGANIZATION))):
        return False  # "our booking site is X": the speaker's thing (noun_subject) uses X
    if s is not SPEAKER and s.end < len(st.doc) and st.doc[s.end].text in ("'s", "’s") \
            and cl.start <= cl.verbs[0].i < o.start:
        start = cl.verbs[0].i  # "Acme's stack is X": the owner's thing is X, the predicate starts at "is"
    if predicate_phrase(st, start, o.start) not in _COPULA_PHRASES:
        return False
    rtype = USES
    st.out.add(s, rtype, o, cl, 0.8, trace="rules: <thing> is <tool>")
    return True


def _co_subjects(st: Parse, cl: Clause, subjects: list[Any], objs: list[Mention]) -> None:
    """"Ana and I are rewriting X": the speaker works with Ana when the clause is about shared work."""
    if SPEAKER not in subjects or not st.speaker_ok or cl.negated or cl.ended:
        return
    people = [s for s in subjects if s is not SPEAKER and s.type == PERSON]
    if not people:
        return
    lems = {lemma(v) for v in cl.verbs}
    work_objects = [o for o in objs if o.type in (PROJECT, TOOL, CONCEPT)]
    if not work_objects and not lems & {"pair", "work", "collaborate", "build", "write", "run", "co-author"} \
            and not any(x.startswith("co-") for x in lems):  # "Ana and I are co-presenting": a co- verb is shared
        return
    projects = [o for o in work_objects if o.type == PROJECT and not _compared(st, o)]
    shared_work = not lems & (NON_USE_VERBS | PLAN_VERBS)
    for o in projects:  # "Ana and I are co-writing X": both of them work on X
        if shared_work and not st.out.related(SPEAKER, o):
            st.out.add(SPEAKER, WORKS_ON, o, cl, 0.8, trace="rules: X and I <verb> <project>")
    for p in people:
        if not st.out.related(SPEAKER, p):
            st.out.add(SPEAKER, WORKS_WITH, p, cl, 0.8, trace="rules: X and I <verb> (shared work)")
        for o in projects:
            if st.out.has(SPEAKER, WORKS_ON, o) and not st.out.related(p, o):
                st.out.add(p, WORKS_ON, o, cl, 0.8, trace="rules: X and I work on it")


def _fronted_object(st: Parse, cl: Clause, ms: list[Mention], library: PhraseLibrary) -> None:
    """"X we kept", "X I still use every day": a tool named before the speaker's verb is its object."""
    first = ms[0] if ms else None
    if first is None or first.type not in (TOOL, CONCEPT) or first.start != cl.start or first.end >= cl.end:
        return
    if st.doc[first.end].lower_ not in ("i", "we") or st.out.related(SPEAKER, first):
        return
    verdict = library.classify(predicate_phrase(st, first.end + 1, cl.end), "tool")
    if verdict is not None and verdict.label in (USES, PREFERS) and not cl.negated and not cl.ended:
        trace = f"meaning: fronted object, \"{verdict.example}\" ({verdict.similarity:.2f})"
        st.out.add(SPEAKER, verdict.label, first, cl, verdict.confidence, trace=trace)


TYPING_SIMILARITY = 0.82  # stricter than relation typing: here the verdict also decides the entity type
_KIND_TYPE = {"project": PROJECT, "organization": ORGANIZATION, "tool": TOOL}


def _guessed_a_person(m: Mention) -> bool:
    """Whether the only vote a rejected mention had was the name finder's person ("heads-down on Kestrel")."""
    return m.ner == "PERSON" and set(m.votes) == {PERSON}


def _type_unknown_objects(st: Parse, cl: Clause, subjects: list[Any], first_verb: int, objs: list[Mention],
                          library: PhraseLibrary) -> list[Mention]:
    """Capitalised names no cue typed, in object position: the predicate's meaning types them when it is
    close to an example ("I'm heads-down on Quiverly" → a project), else they stay out."""
    if len(subjects) != 1 or st.doc[cl.start:cl.end].text.rstrip().endswith("?"):
        return objs
    s = subjects[0]
    start = _subject_end(st, cl, s)
    added = []
    for k in range(max(start, first_verb + 1), cl.end):
        if st.at[k] == -1:
            continue
        m = st.mentions[st.at[k]]
        if m.start != k or (m.type and not m.guessed) or m.source != "cap" or m.place or m.is_speaker \
                or m.end - m.start > 3 or (m.rejected and not _guessed_a_person(m)):
            continue  # a name the name finder alone called a person may still be typed by what is done with it
        phrase = predicate_phrase(st, _phrase_start(st, cl, start, m), m.start)
        best: tuple[float, str, Verdict] | None = None
        for kind in ("project",) if m.rejected else ("project", "organization", "tool"):  # a film one loves is no tool
            v = library.classify(phrase, kind)
            if v is not None and v.label not in (NONE, END) and v.similarity >= TYPING_SIMILARITY and (
                    best is None or v.similarity > best[0]):
                best = (v.similarity, kind, v)
        if best is None:
            continue
        m.type, m.conf, m.rejected, m.guessed = _KIND_TYPE[best[1]], 0.7, False, False
        known = next((e for e in st.entities if m.ref and e.ref == m.ref), None)
        if known is not None:  # the name typer's guess, corrected by what is done with the name (and what the
            known.type, known.confidence, known.attributes["typed_by"] = m.type, 0.7, "meaning"  # guess said, unsaid)
            st.out.forget(m.ref)
            if m not in objs:
                added.append(m)
            continue
        m.ref = f"e{len(st.entities) + 1}"
        st.entities.append(ExtractedEntity(ref=m.ref, name=clean_name(m.name), type=m.type, confidence=0.7,
                                           attributes={"typed_by": "meaning"}))
        added.append(m)
    return sorted(objs + added, key=lambda x: x.start)


def _it_subject(st: Parse, cl: Clause) -> list[Any]:
    """"it's built on X", "it's X + Y": "it" is the last project or tool named before it."""
    for t in st.doc[cl.start:cl.end]:
        if t.lower_ == "it" and t.dep_ in ("nsubj", "nsubjpass") and st.at[t.i] == -1:
            for m in reversed(st.mentions):
                if m.end <= t.i and m.type in (PROJECT, TOOL) and m.ref:
                    return [m]
            return []
    return []


def _plain_opener(st: Parse, t: Any) -> bool:
    """A common noun capitalised only because it opens the sentence, left untyped ("Billing is X"; not "Tunde got
    moved onto X": a word general text does not know is a name, someone's)."""
    m = st.mentions[st.at[t.i]]
    return m.weak and not m.type and m.end - m.start == 1 and t.pos_ == "NOUN" \
        and common_word(t.lower_, OPENING_ZIPF)


def _generic_subject(st: Parse, cl: Clause) -> Any:
    """The owner of a clause whose subject is a plain noun: "the invoices go through X" → the speaker;
    "Acme's stack is X" → Acme; "his team runs X" → him. None for people nouns ("the kids use X")."""
    first_verb = cl.verbs[0].i if cl.verbs else cl.end
    for t in st.doc[cl.start:min(first_verb, cl.end)]:
        if t.dep_ not in ("nsubj", "nsubjpass") or (st.at[t.i] != -1 and not _plain_opener(st, t)):
            continue
        if t.pos_ not in ("NOUN",) and t.lower_ not in ("most", "all", "everything"):
            return None
        if t.lower_ in ("team", "squad", "crew", "org") and any(
                c.lower_ in ("the", "our", "my") for c in t.children):
            return SPEAKER if st.speaker_ok else None  # "the team picked X": the speaker's team
        if t.lower_ in ROLE_NOUNS or t.lower_ in PEOPLE_NOUNS or lemma(t) in PEOPLE_NOUNS:
            return None
        for c in t.subtree:
            if c.i < t.i and st.at[c.i] != -1 and c.dep_ == "poss":
                m = st.mentions[st.at[c.i]]
                return m if m.type in (ORGANIZATION, PROJECT) else None
            if c.dep_ == "poss" and c.lower_ in ("his", "her"):
                return resolve_person(st, c.i)
            if c.dep_ == "poss" and c.lower_ in ("their", "your"):
                return None
            if c.dep_ == "poss" and c.i < t.i and st.at[c.i] == -1 and c.pos_ in ("NOUN", "PROPN"):
                return None  # "my sister's invoices go through X", "the client's invoices": someone else's
        return SPEAKER if st.speaker_ok else None
    return None


def _acts_on_speaker(st: Parse, cl: Clause, s: Mention, start: int, library: PhraseLibrary) -> None:
    """"X supervises me", "X mentors me": the speaker works with X."""
    if not st.speaker_ok or cl.negated or cl.ended:
        return
    lems = {lemma(v) for v in cl.verbs}
    for t in st.doc[start:cl.end]:
        if t.lower_ in ("me", "us") and t.i > 0 and (
                (st.doc[t.i - 1].lower_ == "with" and lems & (WORK_VERBS | COLLAB_VERBS | {"co-maintain", "co-author"}))
                or (t.dep_ in ("dobj", "nsubj") and "help" in lems)):
            if not st.out.related(SPEAKER, s):  # "X maintains it with me", "X is helping us build Y"
                st.out.add(SPEAKER, WORKS_WITH, s, cl, 0.8, trace="rules: X <works> with me / helps us")
            return
        if t.lower_ == "me" and t.dep_ in ("dobj", "pobj", "dative"):
            verdict = library.classify(predicate_phrase(st, start, t.i), "me")
            if verdict is not None and verdict.label in (WORKS_WITH, KNOWS) and not st.out.related(SPEAKER, s):
                trace = f"meaning: \"{verdict.example}\" ({verdict.similarity:.2f})"
                st.out.add(SPEAKER, verdict.label, s, cl, verdict.confidence, trace=trace)
            return
