"""Stage 4c, a tool in the speaker's current setup: what no rule and no example phrase related.

People describe their setup more often than they say "I use": "Sentry catches most of our crashes",
"Terraform handles the infra and Vault keeps the secrets", "payroll runs through Sage", "invoices are
through QuickBooks", "the rota is kept in Excel". A named tool that is the working subject of a verb in the
present ("X does/handles/keeps/runs …", "X has been brilliant for …"), or the instrument of a present-tense
verb whose subject is a thing of the speaker's work or the speaker ("… runs through X", "… is done in X", "we
talk to it over X"), or a name opening a list item with its task or routine and no verb ("Jira for tickets,
Slack for everything else", "Photoshop all day"), is a tool the speaker('s side) uses. Structure decides, not a
verb list: only verbs
that describe a tool rather than work for someone ("X costs…", "X looks nice", "X has a free tier") are
listed, as data.

It runs last among the relation stages and only for tool mentions that no relation or ending of the message
names yet, in clauses that assert something: no question, plan, hedge, condition, negation, hearsay or
ending, and not when the work is someone else's or the message weighs the tool up.
"""

from __future__ import annotations

from typing import Any

from loregraph.extract.base import SPEAKER
from loregraph.extract.local.kinds import TOOL, USES
from loregraph.extract.local.state import (
    Clause,
    Mention,
    Parse,
    clause_mentions,
    lemma,
    mention_head,
    named_for_a_task,
    named_with_a_routine,
)
from loregraph.extract.local.words import word_class

# verbs that describe a tool, or begin or end its use, rather than say it works for someone
_DESCRIBING_VERBS = word_class("tool_describing_verbs") | word_class("stop_verbs") | word_class("switch_verbs") \
    | word_class("leave_verbs")
_INSTRUMENT_PREPS = word_class("instrument_preps")
_CHANGE_WORDS = word_class("use_changing_words") | word_class("switch_verbs") | word_class("swap_verbs") \
    | word_class("prefer_verbs")
_TALK_OVER_VERBS = word_class("talk_over_verbs")
_TELLING_VERBS = word_class("telling_verbs") | frozenset({"read", "hear", "claim", "reckon", "think"})
_PLAN_VERBS = word_class("plan_verbs") | word_class("tool_trial_verbs")
_MODALS = word_class("modals")
_PEOPLE_NOUNS = word_class("people_nouns")
_SPEAKER_WORDS = frozenset({"i", "we", "me", "us", "my", "our"})
_PRESENT_AUX = frozenset({"is", "are", "am", "'s", "'re", "'m", "’s", "’re", "’m"})
_PERFECT_AUX = frozenset({"has", "have", "'s", "'ve", "’s", "’ve"})


def relate_tools_in_use(st: Parse, clauses: list[Clause]) -> None:
    """USES for the sentence's unrelated tools that its structure shows at work for the speaker('s side); run
    after every other stage has seen the whole sentence (its clauses in order)."""
    if not st.speaker_ok or not clauses or _changing(st, clauses[0].start, clauses[-1].end) \
            or _doubted(st, clauses[0].start, clauses[-1].end):
        return
    for cl in clauses:
        if cl.question or cl.hypothetical or cl.negated or cl.ended or cl.hedged or cl.preference:
            continue
        st.out.clause_at = cl.when.when if cl.when is not None else None
        for m in clause_mentions(st, cl):
            if m.type != TOOL or not m.ref or m.in_question or st.out.names(m.ref) or _weighed(st, m):
                continue
            head = mention_head(st, m)
            shape = _working_subject(st, head) or _instrument(st, head) \
                or ("a tool named for a task" if named_for_a_task(st.doc, m.start, m.end) else "") \
                or ("a tool named with its routine" if named_with_a_routine(st.doc, m.start, m.end) else "")
            if shape:
                st.out.add(SPEAKER, USES, m, cl, 0.7, trace=f"in use: {shape}")
    st.out.clause_at = None


def _changing(st: Parse, start: int, end: int) -> bool:
    """The sentence tells of a change or a comparison ("stopped using it", "X over Y", "used to", "instead"):
    which tool is in use is for the stages that read changes to say."""
    doc = st.doc
    for t in doc[start:end]:
        if lemma(t) in _CHANGE_WORDS or t.lower_ in _CHANGE_WORDS:
            return True
        if t.lower_ == "used" and t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "to":
            return True
    return False


def _doubted(st: Parse, start: int, end: int) -> bool:
    """The sentence denies something or tells what was said or read ("Sentry catches everything, but we don't
    use it", "They say Sentry catches everything"): its tools are not plainly in use."""
    return any(t.dep_ == "neg" or t.lower_ in ("never", "n't", "not") or lemma(t) in _TELLING_VERBS
               for t in st.doc[start:end])


def _weighed(st: Parse, m: Mention) -> bool:
    """Somewhere in the message the tool is weighed, not used: the object of a verb of trying out or planning
    ("We're evaluating Datadog. Datadog monitors the whole stack.")."""
    for o in st.mentions:
        if o.ref != m.ref:
            continue
        head = mention_head(st, o)
        verb = head.head.head if head.dep_ == "pobj" else head.head
        if head.dep_ in ("dobj", "pobj") and lemma(verb) in _PLAN_VERBS:
            return True
    return False


def _others_work(verb: Any) -> bool:
    """What the verb works on belongs to someone else ("runs their builds", "does my son's homework")."""
    objs = [c for c in verb.children if c.dep_ in ("dobj", "attr") or (c.dep_ == "nsubj" and c.i > verb.i)] + [
        o for p in verb.children if p.dep_ == "prep" and p.lower_ == "for" for o in p.children if o.dep_ == "pobj"]
    return any(c.dep_ == "poss" and c.lower_ not in _SPEAKER_WORDS for o in objs for c in o.subtree)


def _present(verb: Any) -> bool:
    """A verb group in the present: "catches", "is scheduling", "has been", "is done", "are" (not "was", not
    "will", not "should")."""
    aux = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
    if any(a.tag_ == "MD" or a.lower_ in _MODALS or a.tag_ == "VBD" for a in aux):
        return False
    if any(c.dep_ == "neg" for c in verb.children):
        return False
    if verb.tag_ in ("VBZ", "VBP"):
        return True
    low = {a.lower_ for a in aux}
    if verb.tag_ == "VBG":
        return bool(low & _PRESENT_AUX)
    if verb.tag_ == "VBN" or verb.pos_ == "ADJ":
        return bool(low & _PERFECT_AUX) or any(a.dep_ == "auxpass" and a.lower_ in _PRESENT_AUX for a in aux)
    return False


def _working_subject(st: Parse, head: Any) -> str:
    """ "Sentry catches most of our crashes", "Airflow is scheduling the nightly jobs", "Grafana has been
    brilliant for on-call": the tool works, now."""
    if head.dep_ != "nsubj":
        return ""
    verb = head.head
    if verb.pos_ not in ("VERB", "AUX", "ADJ") or not _present(verb) or lemma(verb) in _DESCRIBING_VERBS:
        return ""
    if verb.lemma_ == "do" and any(c.dep_ == "dobj" and c.lower_ in ("job", "trick", "work") for c in verb.children):
        return ""  # "X does the job", "X does great work": praise, said of a tool one may only have tried
    if verb.lemma_ == "be":
        perfect = any(c.dep_ == "aux" and c.lower_ in _PERFECT_AUX for c in verb.children)
        if not perfect or not any(c.dep_ == "acomp" for c in verb.children):
            return ""  # "X is great" says what someone thinks of it, "X has been a disaster for schools" is a
            # verdict; "X has been great for us" says they use it
    if verb.dep_ == "ccomp" or _others_work(verb):
        return ""  # "I read that X monitors the stack", "X does my son's homework"
    if any(c.dep_ in ("xcomp", "ccomp") and c.tag_ == "VB" for c in verb.children):
        return ""  # "X helps me decide …" is fine, but "X lets you …" / "X makes it …" describe it
    return "a tool at work"


def _instrument(st: Parse, head: Any) -> str:
    """ "payroll runs through Sage", "invoices are through QuickBooks", "the rota is kept in Excel", "we talk to it
    over gRPC": the tool is how the speaker's work is done, now."""
    prep = head.head if head.dep_ == "pobj" else None
    if prep is None or prep.dep_ != "prep" or prep.lower_ not in _INSTRUMENT_PREPS:
        return ""
    verb = prep.head
    if prep.lower_ == "over" and lemma(verb) not in _TALK_OVER_VERBS:
        return ""  # "we talk over Slack", but "X over Y" compares
    if verb.pos_ not in ("VERB", "AUX") or not _present(verb) or lemma(verb) in _DESCRIBING_VERBS:
        return ""
    subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None:
        return ""
    if subj.lower_ in _SPEAKER_WORDS:
        return "the speaker's instrument"
    named = st.at[subj.i] != -1 and bool(st.mentions[st.at[subj.i]].type)  # ("Timesheets", capitalised at the
    # start, names nothing)
    if subj.pos_ != "NOUN" or named or subj.lower_ in _PEOPLE_NOUNS:
        return ""  # a person, a name or "the team" acts for themselves
    owner = next((c for c in subj.children if c.dep_ == "poss"), None)
    if owner is not None and owner.lower_ not in _SPEAKER_WORDS:
        return ""  # "their invoicing goes through Xero": someone else's
    return "a work thing's instrument"
