"""Stage 2, entity typing: votes from context cues, partners and NER; then refs for the output."""

from __future__ import annotations

import itertools
import re
from typing import Any

from loregraph.extract.base import ExtractedEntity
from loregraph.extract.local.kinds import CONCEPT, ENTITY, ORGANIZATION, PERSON, PROJECT, TOOL
from loregraph.extract.local.mentions import addressed_name
from loregraph.extract.local.state import (
    Mention,
    Parse,
    after_adverbs,
    best_type,
    camel,
    clean_name,
    lemma,
    named_for_a_task,
    nearest_verb_before,
)
from loregraph.extract.local.words import (
    BREED_NOUNS,
    CLAUSE_MARKERS,
    CREATIVE_HEADS,
    DECIDE_VERBS,
    FRIEND_ROLES,
    GREETING_WORDS,
    GROUP_HEADS,
    HONORIFICS,
    HUMAN_AGENT_VERBS,
    HUMAN_LANGUAGES,
    LEAVE_VERBS,
    MAKING_VERBS,
    METHOD_HEADS,
    NOUN_ZIPF,
    OPENING_ZIPF,
    ORG_NOUNS,
    ORG_ROLE_NOUNS,
    ORG_SUFFIXES,
    PEOPLE_NOUNS,
    PERSON_PRONOUNS,
    PERSON_SUBJ_VERBS,
    PET_ADJECTIVES,
    PET_NOUNS,
    PLACE_HEADS,
    PREFER_VERBS,
    PROJECT_APPOS_HEADS,
    PROJECT_HEADS,
    PRONOUNS,
    ROLE_NOUNS,
    SETUP_VERBS,
    SPEAKER_WORDS,
    SWITCH_VERBS,
    TASTE_KINDS,
    TEAM_HEADS,
    TIME_WORDS,
    TOOL_HEADS,
    USE_IMPLYING_PAIRS,
    USE_VERBS,
    WE_WORDS,
    WORK_NOUNS,
    WORK_OF_HEADS,
    WORK_THINGS,
    WORK_VERBS,
    WORK_VERBS_OF_TITLES,
    common_word,
    first_name,
    word_class,
)

_TRUE_GREETINGS = frozenset({"hey", "hi", "hello", "hiya", "yo", "thanks", "thank", "congrats", "congratulations",
                             "morning", "evening", "welcome", "bye", "goodbye", "cheers", "dear", "night"})
_OPENERS = frozenset({"how", "what", "did", "do", "have", "are", "is", "i'm", "long", "it", "its", "that", "your",
                      "guess", "remember", "look", "listen", "just", "quick"})
_DATE_WORDS = frozenset(w for key in ("weekdays", "months", "units", "shifters") for w in TIME_WORDS[key])


def date_like(text: str) -> bool:
    """Words that can name a date or an amount: a digit, a weekday, a month, a time unit, "last"/"next"."""
    return any(c.isdigit() for c in text) or any(w in _DATE_WORDS for w in text.lower().split())


NAME_LABELS = frozenset({"PERSON", "ORG", "PRODUCT", "WORK_OF_ART", "GPE", "LOC", "FAC", "NORP", "EVENT", "LAW",
                         "LANGUAGE"})
NOT_NAME_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "QUANTITY", "PERCENT"})
PLACE_LABELS = frozenset({"GPE", "LOC", "FAC"})
PLACE_PREPS = frozenset({"in", "to", "from", "near", "around", "across", "through", "into", "visit", "visited",
                         "visiting", "toured", "explored", "exploring", "explore", "leave", "left", "of"})


def type_mentions(st: Parse) -> list[Mention]:
    doc = st.doc
    ms = st.mentions
    need_ner = False
    for m in ms:
        _context_votes(st, m)
        if m.kind == "work" and _own_work_title(st, m):
            m.kind, m.owned = "", True  # "my thesis is 'X'": the title of the speaker's own work
            m.votes.pop(CONCEPT, None)  # (the title cue's vote: a work one makes is no work one enjoys)
            m.vote(PROJECT, 1.5)
    # "Sofia and Jonas are ...": two given names side by side are two people, even where the name finder saw one
    for a, b in itertools.pairwise(ms if not _talks_of_pets(doc.text) else []):
        if doc[a.end:b.start].text.strip().lower() == "and" and all(
                x.source == "cap" and x.end - x.start == 1 and first_name(x.name) and not x.votes.get(TOOL)
                and not x.votes.get(PROJECT) for x in (a, b)):
            for x in (a, b):
                x.vote(PERSON, 0.6)
    # partners: "X and Y", "X or Y", "prefer X over/to Y", "from X to Y" share types
    for _ in range(2):
        for a, b in itertools.pairwise(ms):
            between = doc[a.end:b.start].text.strip().lower()
            if between in {"and", "or", ",", ", and", ", or", "over", "to", "than", "instead of",
                           "rather than", "vs", "vs.", "versus", "/", "&"} or (
                    between == "to" and doc[a.start - 1].lower_ == "from" if a.start > 0 else False) \
                    or (between == "for" and _swapped_for(doc, a, b)):
                for m1, m2 in ((a, b), (b, a)):
                    if m1.kind == "work" and m2.source == "cap" and between not in _VERSUS and not m2.kind \
                            and not m2.votes.get(PERSON, 0) >= 1.0:
                        m2.kind = "work"  # "strategy games like Civilization and Total War": both titles
                        m2.vote(CONCEPT, 1.6)
                    t1 = best_type(m1.votes)
                    if t1 and m1.votes[t1] >= 0.8 and m2.source in ("cap", "np") and between != "for" \
                            and not m2.votes.get(t1):
                        m2.vote(t1, 0.5)
                    elif t1 == TOOL and m1.votes[t1] >= 0.8 and m2.source == "cap" and between == "for" \
                            and m2.votes.get(t1, 0.0) < 0.8:
                        # the one swapped in, weakly voted by the swap construction alone: a tool swapped for a
                        # name is swapped for a tool, even a name the name finder calls a place ("Buttondown");
                        # not a company left for a name (a city, often: "left Google for Madrid")
                        m2.vote(TOOL, 1.2)
    for m in ms:
        if m.source in ("cap", "candidate") and not m.addressed and addressed_name(st, m.start, m.end) and (
                m.source == "cap" or m.votes.get(PERSON)):
            m.addressed = True  # "Yeah Maria, ...": a name known from before, said to its owner
            m.vote(PERSON, 1.6)
        t = best_type(m.votes)
        if m.source == "cap" and (t is None or m.votes[t] < 1.5 or m.weak or m.addressed):
            need_ner = True  # weakly typed names, lone capitals at sentence starts, places: NER decides
    if need_ner and st.ner is not None:
        if not st.notes.get("ner"):
            st.ner(doc)  # (a construction may have asked for it already)
        for ent in doc.ents:
            for k in range(ent.start, ent.end):
                if st.at[k] != -1:
                    ms[st.at[k]].ner = ent.label_
        st.notes["ner"] = True
    for m in ms:
        if m.source == "cap" and ((m.kind != "work" and _pet(st, m)) or _named_for_a_pet(st, m)):
            m.type, m.kind, m.conf = ENTITY, "pet", 0.8  # "our kitten Biscuit": a named animal
            continue
        if m.source in ("cap", "np") and m.ner in NOT_NAME_LABELS and date_like(doc[m.start:m.end].text):
            continue  # "Last Fri", "two weeks", "5K": dates, times and amounts are not entities
        if m.source == "cap" and m.end - m.start == 1 and (doc[m.start].lower_ in TIME_WORDS["weekdays"] or (
                doc[m.start].lower_.endswith("s") and doc[m.start].lower_[:-1] in TIME_WORDS["weekdays"])):
            m.rejected = True  # "I volunteer Saturdays at X": a weekday, whatever the name finder says
            continue
        if m.ner in PLACE_LABELS and m.source == "cap" and _where_an_org_is(st, m):
            m.place = True  # "the front desk at Pawsome Vets in Didsbury": where the organisation is
        if m.ner in PLACE_LABELS and m.source == "cap" and m.start > 0 and doc[m.start - 1].lower_ in PLACE_PREPS \
                and m.votes.get(ORGANIZATION, 0.0) < 2.0 and m.votes.get(PERSON, 0.0) < 0.6 \
                and m.votes.get(TOOL, 0.0) < 0.9 and m.votes.get(PROJECT, 0.0) < 0.6:
            m.place = True  # "in Chicago", "a trip to Thailand": places are not entities of this ontology
        if m.weak and max(m.votes.values(), default=0.0) < 1.0 and common_word(doc[m.start].lower_) and not (
                doc[m.start].tag_ in ("NNP", "NNPS") and m.ner in NAME_LABELS):
            continue  # "Nature has a way ...", "Writing and ...": a frequent word, capitalised by its position
        if m.source == "cap" and m.end + 1 < len(doc) and doc[m.end].text == "," and doc[m.start].is_sent_start \
                and m.end - m.start <= 2 and doc[m.start].tag_ in ("NNP", "NNPS") and m.ner not in PLACE_LABELS \
                and doc[m.end + 1].lower_ in ({"i", "we", "you"} | CLAUSE_MARKERS | GREETING_WORDS | _OPENERS) - {
                    "who", "whose", "whom", "which"} \
                and not m.votes.get(TOOL) and not m.votes.get(PROJECT):
            m.addressed = True  # "Maria, since we talked ...": the listener, named
            m.vote(PERSON, 1.0)
        sent = doc[m.start].sent
        greeted = any(t.lower_ in _TRUE_GREETINGS for t in doc[sent.start:m.start])
        closing = m.end >= sent.end - 1 or doc[m.end].text in ("!", ".", "?")
        if m.addressed and m.source == "cap" and m.ner in PLACE_LABELS | {"PRODUCT", "WORK_OF_ART", "NORP"} \
                and not greeted and (not (closing and doc[m.start - 1].text == "," and m.start > sent.start + 1)
                                     or (m.ner in PLACE_LABELS and not first_name(m.name.split()[0]))):
            m.addressed = False  # "Oh, Italy!": a place exclaimed, not a person addressed
            m.votes[PERSON] = 0.0
        if m.ner in PLACE_LABELS and m.source == "cap" and doc[m.end - 1].dep_ == "nsubjpass" \
                and set(m.votes) <= {PROJECT} and m.votes.get(PROJECT, 0.0) < 1.5 \
                and not (first_name(m.name) and not common_word(m.name.lower(), NOUN_ZIPF)):
            m.place = True  # "Paris wasn't built in a day": a city, not a project (but "Marta's been put on X":
            # a given name general text does not know as a word)
        if m.ner in PLACE_LABELS and m.source == "cap" and m.start > 0 and doc[m.start - 1].lower_ in ("in", "to") \
                and max(m.votes.values(), default=0.0) < 1.0:
            m.place = True  # "a fan I met in CA": NER and the preposition agree
        if m.source == "cap" and m.end - m.start == 1 and doc[m.start].lower_ in HUMAN_LANGUAGES and not m.addressed:
            m.rejected = True  # "Learning German has been tough": a language, whatever the name finder says
            continue
        if m.ner in ("NORP", "LANGUAGE") and m.source == "cap" and m.end - m.start == 1 and not m.addressed \
                and m.votes.get(ORGANIZATION, 0.0) < 1.0 \
                and not (first_name(m.name) and (doc[m.start].dep_ in ("nsubj", "nsubjpass") or (
                    doc[m.start].dep_ in ("pobj", "dobj") and doc[m.start].tag_ == "NNP"
                    and m.votes.get(PERSON, 0.0) >= 0.6))):
            continue  # "this Canadian woman", "I know Spanish": a nationality or a language, no entity (but
            # "Hamish has left us", a given name doing something, is a person whatever the name finder says)
        if m.source == "cap" and m.end - m.start == 1 and not m.addressed and _imperative(doc[m.start]) \
                and not (m.start > 0 and doc[m.start - 1].text in (",", ":") and named_for_a_task(doc, m.start, m.end)):
            m.rejected = True  # "Just do it!", "Chase those dreams", "Turn on the light": a verb or an adverb
            continue  # opening a command, capitalised by its place
        if m.source == "cap" and not m.addressed and not m.role and _breed(st, m):
            m.rejected = True  # "two Jack Russell mixes", "German Shepherds are loyal": a breed, no one animal
            continue
        if m.place:
            continue
        if _not_a_lexicon_name(st, m) or (m.source == "cap" and m.end - m.start > 1
                                          and doc[m.start].lower_.endswith(("in'", "in’"))):
            continue  # "Lovin' Aerosmith": a verb dropped its g, no part of a name
        if m.source == "cap" and m.end - m.start == 1 \
                and set(m.votes) <= {PERSON} \
                and (not m.votes or doc[m.start].tag_ not in ("NN", "NNS") or m.votes[PERSON] <= 0.25) \
                and doc[m.start].dep_ in ("nsubj", "nsubjpass") \
                and (doc[m.start].tag_ == "NNP" or (doc[m.start].tag_ in ("NN", "NNS") and not common_word(
                    doc[m.start].lower_, NOUN_ZIPF))) \
                and doc[m.start].text.istitle() and first_name(doc[m.start].text) \
                and doc[m.start].whitespace_ and _finite_after(doc, m.end):
            m.vote(PERSON, 0.6)  # "Marta uses Notion": a given name as a subject, which the name finder missed
            # (not "Gonna" split as "Gon"+"na", not "Chase your dreams", not "Precious and Pixie are ...";
            # a rare name the tagger reads as a noun, "Ines is ...", still counts; "Summer is here" does not)
        if m.source == "cap" and m.end + 1 < len(doc) and doc[m.end].text in ("who", "whom") \
                and m.ner not in ("ORG", "PRODUCT") and doc[m.end + 1].tag_ in ("VBZ", "VBD", "MD") \
                and doc[m.end + 1].lower_ not in ("are", "were", "have", "do"):
            m.vote(PERSON, 1.2)  # "with Priyanka who's my line manager": one person is "who" (not "Octopus who are
            # way cheaper": a company, plural)
        if m.ner == "PERSON" and not (m.source == "candidate" and not m.votes):
            m.vote(PERSON, 0.45)  # (a thing known before, no person, stays one whatever the name finder says)
            if m.source == "cap" and m.start > 0 and doc[m.start - 1].lower_ == "with" and m.end - m.start <= 2 \
                    and not camel(m.name) and m.votes.get(TOOL, 0.0) < 1.5:
                # "using X for Orion with Nora": a companion (NER agrees), not a second tool
                m.vote(PERSON, max(0.0, m.votes.get(TOOL, 0.0) - m.votes.get(PERSON, 0.0)) + 0.3)
        elif m.ner == "ORG" and m.source == "cap":
            m.vote(ORGANIZATION, 0.3)
        if m.source == "cap" and not m.addressed and brand_shaped(m.name):
            m.vote(TOOL, 0.4)  # "ArcMap", "OpenClinica", "Corpuls3": a name shaped like a product's is most often one
        if m.source == "cap" and m.ner not in PLACE_LABELS and m.votes.get(TOOL, 0.0) < 0.8 \
                and _left_a_company_for(st, m):
            m.vote(ORGANIZATION, 0.6)  # "Jun left Haldane for Tiller": a company left for a company (not a city)
        t = best_type(m.votes)
        if t is None:
            continue
        score = m.votes[t]
        if score < 0.3:
            continue
        if m.source == "cap" and not m.addressed and not m.role and m.kind != "work" and (
                m.end - m.start == 1 or (m.end < len(doc) and doc[m.end].lower_ == "fan")) \
                and _names_only_a_noun(st, m):
            m.rejected = True
            continue  # "the Pride fest", "Marley flooring": a capital that qualifies a common noun names no entity
        if m.source == "cap" and m.weak and m.end - m.start == 1 and not m.addressed and not m.role \
                and score < 1.0 and not (t == PERSON and first_name(m.name)) and not camel(m.name) \
                and (common_word(doc[m.start].lower_, OPENING_ZIPF) or doc[m.start].lower_.endswith("ing")):
            m.rejected = True
            continue  # "Clay is incredible.", "Kickboxing is ...": an everyday word or a gerund opening a sentence,
            # with only the name finder's guess behind it (a given name is a person's)
        if m.source == "cap" and t == PERSON and score < 1.0 and not m.addressed and not m.role \
                and not first_name(_without_article(m.name).split()[0]) \
                and m.name.split()[0].rstrip(".").lower() not in HONORIFICS \
                and not _taken_up_by_he_or_she(st, m) \
                and not ((m.start > 0 and doc[m.start - 1].lower_ in {"by"} | HONORIFICS)
                         or (m.start > 1 and doc[m.start - 1].text == "." and doc[m.start - 2].lower_ in HONORIFICS)) \
                and not _acting_subject(st, m):
            m.rejected = True  # "Ratatouille", "Shibuya Crossing", "Overcooked 2": the name finder alone calls
            continue  # them persons; a person needs a given name, a he/she after, an author's "by", a role
        if m.source == "cap" and t == ORGANIZATION and score < 0.5 and not m.role:
            m.thin = True  # "the Perseid meteor shower", "Nuuk", "Nils Frahm": the name finder alone calls them
            # organisations; without a cue ("at X", "X Inc", "brands like X") only a fact about it keeps it
        if m.source == "cap" and _ACRONYM_PLURAL.match(m.name):
            m.rejected = True  # "RPGs", "DIYs": a kind of thing in the plural, no name
            continue
        if m.source == "cap" and not m.addressed and not m.role and m.end - m.start == 1:
            if t == PERSON and score < 1.5 and common_word(doc[m.start].lower_, NOUN_ZIPF) \
                    and not first_name(doc[m.start].text) \
                    and not any(x.lower_ in PERSON_PRONOUNS for x in doc[m.end:]):  # "Cash left, so he ..."
                continue  # "Guitar", "Store", "Sushi": an everyday word that no given name list knows, with no
                # evidence of a person but the name finder's (which calls most capitals in chat persons)
            if t == TOOL and m.ner in PLACE_LABELS and m.votes.get(TOOL, 0.0) < 1.5 and doc[m.start].dep_ != "nsubj":
                continue  # "I love the Miami vibe", "perform in Boston": a place, weakly voted a tool (a subject
                # doing the speaker's work, "Brewlog replaced our spreadsheets", is no place)
        m.type = t
        m.conf = 0.95 if m.source == "candidate" else min(0.95, 0.5 + score * 0.45)
        if t == PERSON and _pet(st, m):
            m.type, m.kind, m.role = ENTITY, "pet", ""  # "my pup Ned", "my furry friend Daisy": not a person
            # (a name known from before as a person, called a pet here, is no person known either)
        if m.kind == "work" and m.source == "cap" and t == CONCEPT:
            m.type = ENTITY  # a title: a book, a film, a game (not "my thesis is 'X'": a project)
        elif m.kind == "work":
            m.kind = ""
    _named_after_its_kind(st)
    _pets_listed_together(st)
    _pets_side_by_side(st)
    _names_given_for_pets(st)
    return st.mentions


def _named_after_its_kind(st: Parse) -> None:
    """ "I coach a youth team, the Falcons": a group or organisation described by a common noun phrase and then
    named in apposition is one entity, the named one (the description is no second entity)."""
    doc = st.doc
    for m in st.mentions:
        named = doc[m.end - 1]
        if m.source != "cap" or m.type != ORGANIZATION or named.dep_ != "appos" or named.head.i >= m.start:
            continue
        k = st.at[named.head.i]
        if k != -1 and st.mentions[k].source in ("np", "np-strong") and st.mentions[k].type == ORGANIZATION \
                and not any(ch.isupper() for ch in st.mentions[k].name):
            st.mentions[k].type = ""


def _left_a_company_for(st: Parse, m: Mention) -> bool:
    """``m`` is what an organisation was left for: "left Haldane for Tiller"."""
    doc = st.doc
    if m.start < 3 or doc[m.start - 1].lower_ != "for" or st.at[m.start - 2] == -1:
        return False
    left = st.mentions[st.at[m.start - 2]]
    return best_type(left.votes) == ORGANIZATION and left.votes.get(ORGANIZATION, 0.0) >= 0.6 \
        and lemma(doc[m.start - 1].head) in LEAVE_VERBS


def _fills_a_bare_slot(st: Parse, m: Mention) -> bool:
    """``m`` follows "is"/"are" after a bare lower-case noun subject, in chat shorthand for a part of the speaker's
    setup: "case management is Clio", "invoicing is Xero" (no determiner or owner: "the director is X", "my
    favourite is X", "lunch is a sandwich" are not; nor a role or a person noun, "manager is Dana")."""
    doc = st.doc
    head = doc[m.end - 1]
    verb = head.head
    if head.dep_ not in ("attr", "acomp") or verb.lemma_ != "be" or verb.i > m.start:
        return False
    subj = next((c for c in verb.children if c.dep_ == "nsubj" and c.i < verb.i), None)
    return subj is not None and subj.pos_ in ("NOUN", "PROPN") and (subj.is_lower or (
        subj.is_sent_start and subj.text[1:].islower()
        and (st.at[subj.i] == -1 or st.mentions[st.at[subj.i]].weak))
        or (subj.lower_ in TOOL_SLOT_NOUNS and subj.text.isupper())) \
        and not any(c.dep_ in ("det", "poss", "nummod", "predet") for c in subj.children) \
        and subj.lower_ not in ROLE_NOUNS | PEOPLE_NOUNS and subj.lemma_ not in TASTE_KINDS \
        and subj.lemma_ not in _MEALS_AND_TIMES and subj.lemma_ not in _WORK_SLOTS and subj.lower_ not in PROJECT_HEADS


TOOL_SLOT_NOUNS = word_class("tool_slot_nouns")  # "SIEM is Splunk": an acronym naming a part of the setup
_WORK_SLOTS = frozenset({"project", "focus", "priority", "assignment", "gig", "thesis", "build", "job", "task",
                         "client", "contract", "work", "dissertation", "case", "campaign", "series", "study",
                         "production", "commission"})  # "current project is X": work
_MEALS_AND_TIMES = frozenset({"breakfast", "lunch", "dinner", "brunch", "dessert", "tonight", "today", "weather",
                              "name", "birthday", "deadline", "launch", "plan", "goal", "answer", "problem", "issue",
                              "choice", "pick", "option", "bet", "vote", "favourite", "favorite", "fave", "winner",
                              "preference", "guess", "dream", "hope", "worry", "excuse", "reason", "fear"})


def _finite_after(doc: Any, k: int) -> bool:
    """A finite verb at ``k``, or after adverbs there ("Marta still uses X", "Ines also runs Y")."""
    k = after_adverbs(doc, k, most=len(doc))
    return k < len(doc) and doc[k].tag_ in _FINITE_AFTER_SUBJECT


def _names_given_for_pets(st: Parse) -> None:
    """ "What are your pets' names?" — "Luna and Oliver!": names given, without a verb, in answer to a question
    about the names of pets are pets (a name known from before as a person too)."""
    if not st.ctx.previous_episodes:
        return
    asked = st.ctx.previous_episodes[-1].content.lower()
    words = {w.strip(".,!?'’s") for w in asked.split()}
    if "?" not in asked or not ({"name", "names"} & words) or not (
            _talks_of_pets(asked) or (len(st.ctx.previous_episodes) > 1 and "one" in words
                                      and _talks_of_pets(st.ctx.previous_episodes[-2].content.lower()))):
        return  # (or "What's the other one's name?" right after a message about one's cats)
    first = next(iter(st.doc.sents))
    named = [t for t in first if t.lower_ in ("name", "names") and t.dep_ == "nsubj" and t.head.lemma_ == "be"]
    if any(t.pos_ in ("VERB", "AUX") for t in first) and not named:
        return  # (but "Their name is Luna." answers the question too)
    for m in st.mentions:
        if first.start <= m.start < first.end and not m.addressed and not m.role and (
                m.type == PERSON or m.thin or (m.source == "cap" and not m.type and not m.place)):
            m.type, m.kind, m.conf, m.rejected, m.thin = ENTITY, "pet", max(m.conf, 0.7), False, False


def _not_a_lexicon_name(st: Parse, m: Mention) -> bool:
    """A shipped name that is no named thing here: a brand owned by the listener ("your Facebook page": an
    account, not the company), an everyday word opening a sentence with no cue ("Storm forced us to ..."), or a package
    name heading a lower-case compound ("oat milk icecream": food) or owned by someone ("your icecream")."""
    if m.source != "lexicon":
        return False
    doc = st.doc
    tok = doc[m.end - 1]
    score = max(m.votes.values(), default=0.0)
    if best_type(m.votes) == ORGANIZATION and m.start > 0 and doc[m.start - 1].lower_ == "your":
        return True
    if m.end - m.start == 1 and tok.is_sent_start and score < 0.5 and common_word(tok.lower_):
        return True
    before = doc[m.start - 1] if m.start > 0 else None
    entry = st.lex.get(tok.text)
    if m.end - m.start == 1 and tok.is_lower and before is not None and before.lower_ in ("my", "your", "his", "her",
                                                                                          "their") \
            and entry is not None and entry.source == "packages":
        return True  # "I love your icecream": a package name generated from a registry, here a thing one has
    return m.end - m.start == 1 and tok.is_lower and before is not None and before.is_lower \
        and before.tag_ in ("NN", "NNS") and st.at[before.i] == -1 and not before.is_stop \
        and before.lower_ not in TOOL_HEADS


def _without_article(name: str) -> str:
    """ "The Lanterns" → "Lanterns": a title's article is no given name."""
    words = name.split()
    return " ".join(words[1:]) if len(words) > 1 and words[0] in ("The", "A", "An") else name


def _talks_of_pets(text: str) -> bool:
    """A pet noun in a message's text ("our dogs", "a new kitten")."""
    return any(w in PET_NOUNS or w.rstrip("s") in PET_NOUNS for w in (x.strip(".,!?;:'’s\"") for x in text.split()))


def _kind_before(doc: Any, i: int) -> str:
    """The lemma of the kind noun in "<kind>s like X" / "<kind>s such as X" before token ``i`` ("" if none)."""
    if i >= 2 and doc[i - 1].lower_ == "like":
        return str(doc[i - 2].lemma_.lower())
    if i >= 3 and doc[i - 2].lower_ == "such" and doc[i - 1].lower_ == "as":
        return str(doc[i - 3].lemma_.lower())
    return ""


_VERSUS = frozenset({"vs", "vs.", "v", "v.", "versus", "against"})
_STATE_VERBS = frozenset({"be", "have", "become", "seem", "look", "sound", "feel", "remain", "stay"})
_ACRONYM_PLURAL = re.compile(r"^[A-Z]{2,}s$")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|^[A-Z]{2}[a-z]{2}")  # "ArcMap", "DBeaver"
_SURNAME_PREFIX = re.compile(r"^(Mc|Mac|O'|De|Di|Du|La|Le|Van|Von)[A-Z]")
_LETTERS_AND_DIGITS = re.compile(r"^(?=(?:.*[A-Za-z]){3})(?=.*[a-z])(?=.*\d)[A-Za-z0-9.+-]+$")


def brand_shaped(name: str) -> bool:
    """A word with a capital inside ("ArcMap", "PostGIS", "DBeaver"; not "McKenzie") or letters, lower-case ones
    among them, and a digit ("Corpuls3"; not "COVID-19"): the shape of a product name."""
    return any((_INNER_CAPITAL.search(w) and not _SURNAME_PREFIX.match(w) and w[:2].lower() != w[2:4].lower())
               or (_LETTERS_AND_DIGITS.match(w) and not re.search(r"-\d+$", w))
               for w in name.split())  # (not "JoJo", "Covid-19")


def _imperative(tok: Any) -> bool:
    """A capitalised word that opens a command: a base-form verb or an adverb ("Turn on ...", "Just do it"), or
    a word the parser reads as the root with an object ("Chase those dreams"), at the start of a clause."""
    if not (tok.is_sent_start or (tok.i > 0 and tok.doc[tok.i - 1].text in (",", ":", "\"", "“", "-", "—"))):
        return False  # "Our billing service Ledgerly runs on ...": a name inside the clause
    if tok.tag_ in ("VB", "RB") and tok.dep_ in ("ROOT", "xcomp", "ccomp", "advmod", "conj"):
        return True
    return tok.dep_ == "ROOT" and any(c.dep_ == "dobj" for c in tok.children) \
        and not any(c.dep_ in ("nsubj", "nsubjpass") for c in tok.children)


def _breed(st: Parse, m: Mention) -> bool:
    """A breed, not one animal's name: a breed noun right after it ("Jack Russell mixes", "a Lab puppy"), or a
    capitalised plural that no person has ("German Shepherds are ...": a plural common noun at its end)."""
    doc = st.doc
    if m.end < len(doc) and doc[m.end].lower_ in BREED_NOUNS:
        return True
    last = doc[m.end - 1]
    low = last.lower_
    return m.end - m.start >= 2 and last.tag_ in ("NNPS", "NNS") and low.endswith("s") and not low.endswith("ss") \
        and low not in ORG_SUFFIXES and low[:-1] not in ORG_SUFFIXES and not first_name(last.text) \
        and (best_type(m.votes) == PERSON or (m.ner == "PERSON" and not m.votes))


def _acting_subject(st: Parse, m: Mention) -> bool:
    """The name is the subject of a verb of doing ("Fennimore coaches me", "Ysolde is redesigning X"), not of
    "is" ("Ratatouille is one of my favorites")."""
    tok = st.doc[m.end - 1]
    verb = tok.head
    return tok.dep_ == "nsubj" and verb.pos_ == "VERB" and verb.lemma_ not in _STATE_VERBS \
        and not (verb.tag_ == "VBG" and any(c.dep_ == "conj" and c.pos_ == "ADJ" for c in verb.children))
    # ("X is calming and cute": a participle coordinated with an adjective describes, it does nothing)


def _taken_up_by_he_or_she(st: Parse, m: Mention) -> bool:
    """A he/she/him/her later in the message, with no other person named in between ("Cash left, so he ...")."""
    doc = st.doc
    for t in doc[m.end:]:
        if st.at[t.i] != -1 and st.mentions[st.at[t.i]].votes.get(PERSON, 0.0) >= 0.45:
            return False
        if t.lower_ in PERSON_PRONOUNS:
            return True
    return False


def _pets_listed_together(st: Parse) -> None:
    """ "Max, Daisy and the new pup Ned": names listed with a pet are pets too (unless known as something else)."""
    doc = st.doc
    ms = [m for m in st.mentions if m.type or m.source == "cap"]
    for _ in range(2):
        for a, b in itertools.pairwise(ms):
            between = [t.lower_ for t in doc[a.end:b.start]]
            if not between or between[0] not in (",", "and", "&") or len(between) > 6 \
                    or not all(w in (",", "and", "&", "the", "my", "our", "new", "little") or w in PET_NOUNS
                               or w in PET_ADJECTIVES for w in between):
                continue
            for pet, other in ((a, b), (b, a)):
                if pet.kind == "pet" and other.type in (PERSON, "") and other.source == "cap" and not other.role \
                        and not other.addressed and not other.is_speaker:
                    other.type, other.kind, other.conf = ENTITY, "pet", max(other.conf, 0.7)


def _opens_a_listed_clause(doc: Any, m: Mention) -> bool:
    """The mention opens its sentence or follows a comma or "and": one of clauses listed side by side."""
    return doc[m.start].is_sent_start or (m.start > 0 and doc[m.start - 1].lower_ in (",", "and", ";"))


def _pets_side_by_side(st: Parse) -> None:
    """ "Mochi naps on the rug, Pickle has her basket, and Tofu guards the door": subjects of coordinated clauses
    beside a known pet (or a thing known before that is no person) are pets too, when each is taken up by her/his
    or stands alone (not a given name doing a person's thing)."""
    doc = st.doc
    known = {c.id: c.type for c in st.ctx.candidates}
    subjects = [m for m in st.mentions
                if doc[m.end - 1].dep_ == "nsubj" and doc[m.end - 1].head.pos_ in ("VERB", "AUX")]
    for a in subjects:
        is_pet = a.kind == "pet" or (a.source == "candidate" and known.get(a.existing_id or "") == ENTITY)
        if not is_pet:
            continue
        sent = doc[a.start].sent
        if not _opens_a_listed_clause(doc, a) or not any(t.lower_ in ("her", "his") for t in sent):
            continue
        for b in subjects:
            if b is a or b.source != "cap" or not (b.type in (PERSON, "") or b.thin) or b.role or b.addressed \
                    or b.is_speaker or b.rejected or b.place or doc[b.start].sent.start != sent.start:
                continue
            if _opens_a_listed_clause(doc, b) and b.votes.get(PERSON, 0.0) < 1.5:
                b.type, b.kind, b.conf, b.thin = ENTITY, "pet", max(b.conf, 0.7), False


_NAMED_HEADS = (PROJECT_HEADS | TEAM_HEADS | TOOL_HEADS | WORK_OF_HEADS | PLACE_HEADS | ORG_NOUNS | GROUP_HEADS
                | PROJECT_APPOS_HEADS | ROLE_NOUNS | PET_NOUNS | ORG_SUFFIXES)


def _names_only_a_noun(st: Parse, m: Mention) -> bool:
    """A lone capitalised word that only qualifies a lower-case common noun of no named kind ("the Pride fest",
    "Marley flooring", "a Miami vibe", "the Zelda spots", "an LGBTQ+ youth club"): what is talked of is the noun's
    thing, and the word alone names nothing."""
    doc = st.doc
    tok = doc[m.start]
    nxt = doc[m.end] if m.end < len(doc) else None
    if nxt is None or not nxt.is_lower or not nxt.is_alpha or st.at[nxt.i] != -1 or st.lex.get(tok.text) is not None:
        return False
    if nxt.lemma_ in ("member", "stockist", "affiliate", "licensee", "customer", "client"):
        return False  # "we're an Interflora member": the body one belongs to, named
    sibling = tok.dep_ in ("pobj", "dobj") and ((nxt.dep_ == tok.dep_ and nxt.head.i == tok.head.i
                                                 and nxt.tag_ in ("NN", "NNS")) or nxt.tag_ == "JJS")
    # "at the Lantern fest" read as two objects of "at", or with "fest" as a superlative
    head = nxt if sibling else tok.head
    if head.dep_ == "npadvmod" and head.lemma_ in _SPANS_OF_TIME:
        return False  # "stopped using Wordfast years ago": the object, with the time after it read as its noun
    after = doc[nxt.i + 1] if nxt.tag_ == "JJS" and nxt.i + 1 < len(doc) else None
    if after is not None and (after.lemma_ in _SPANS_OF_TIME or after.lemma_ in _PARTS_OF_DAY
                              or after.lower_.rstrip("s") in TIME_WORDS["weekdays"]):
        return False  # "I pair with Ingrid most mornings": the object, then how often
    if nxt.lower_ == "fan" and m.end + 1 < len(doc) and doc[m.end + 1].pos_ == "NOUN" and doc[m.end + 1].is_lower:
        return True  # "a Skyreach fan project", "Moomin fan art": the fans' thing, not one named by the capital
    if tok.dep_ == "amod" and head.i > m.end and head.pos_ == "NOUN" and all(
            t.dep_ == "compound" and t.head.i == head.i and t.is_lower and t.lower_ not in _NAMED_HEADS
            for t in doc[m.end:head.i]):
        return True  # "an LGBTQ+ youth center": a kind of centre, described
    if not sibling and (tok.dep_ not in ("compound", "amod", "nmod") or head.i < m.end or head.pos_ != "NOUN"
                        or any(t.dep_ != "compound" or t.head.i != head.i or not t.is_lower or t.pos_ != "NOUN"
                               for t in doc[m.end:head.i])):
        return False
    if tok.text.isupper() and head.tag_ != "NNS" and head.i == m.end and head.dep_ != "compound":
        return False  # "the SDR pool", "the HR team": an acronym is a name (not in "the MCU spots", "an XR
        # pride parade")
    return all(t.is_lower and st.at[t.i] == -1 and t.lower_ not in _NAMED_HEADS and t.lemma_.lower() not in _NAMED_HEADS
               for t in doc[m.end:head.i + 1])


def _own_work_title(st: Parse, m: Mention) -> bool:
    """"my novel is 'X'", "our album, 'X'": a title given to a work the speaker owns."""
    before = [t for t in st.doc[max(st.doc[m.start].sent.start, m.start - 5):m.start] if not t.is_punct]
    words = [t.lower_ for t in before]
    for k, w in enumerate(words):
        if w in ("my", "our") and k + 1 < len(words) and words[k + 1] in PROJECT_APPOS_HEADS | CREATIVE_HEADS:
            return all(x in ("is", "'s", "called", "named", "titled") for x in words[k + 2:])
    # "we run a podcast called X", "I started a zine called X": a work the speaker (or "X and I") makes
    called = st.doc[m.end - 1].head
    if called.lower_ in ("called", "named", "titled") and called.head.dep_ == "dobj":
        maker = called.head.head
        subjects = [c for c in maker.children if c.dep_ == "nsubj"]
        return lemma(maker) in _TITLE_MAKING_VERBS and any(
            t.lower_ in ("i", "we", "me") for c in subjects for t in (c, *c.conjuncts))
    return False


def _pet(st: Parse, m: Mention) -> bool:
    """A named animal: a pet noun or pet adjective right before the name ("our dog Bailey", "my furry friend
    Daisy"), or "named him X" / "his name is X" in a message that talks of a pet."""
    doc = st.doc
    before = [t.lower_ for t in doc[max(doc[m.start].sent.start, m.start - 4):m.start]]
    if before and (before[-1] in PET_NOUNS or (before[-1] == "," and len(before) > 1 and before[-2] in PET_NOUNS)):
        return True
    if any(w in PET_ADJECTIVES for w in before[-3:]) and before and before[-1] in ROLE_NOUNS | PET_NOUNS:
        return True
    after = [t.lower_ for t in doc[m.end:min(len(doc), m.end + 4)]]
    if after[:1] == [","] and any(w in PET_NOUNS for w in after[1:4]) \
            and any(w in ("my", "our", "a") for w in after[1:3]):
        return True  # "Toby, my puppy"
    if before[-1:] in (["named"], ["called"]) and any(w in PET_NOUNS for w in before[:-1]):
        return True  # "another puppy called Pixie"
    other = _copula_other(st, m)
    if other is not None and (other.lower_ in PET_NOUNS or other.lemma_.lower() in PET_NOUNS) \
            and other.tag_ == "NN" and any(c.dep_ == "poss" for c in other.children):
        return True  # "Miso is my sister's cat", "our new puppy is Miso"
    named = before[-2:] in (["named", "him"], ["named", "her"], ["named", "it"], ["name", "is"], ["name", "'s"],
                            ["name", "’s"], ["called", "him"], ["called", "her"], ["this", "is"], ["names", "are"],
                            ["meet", "my"]) or before[-1:] == ["named"]
    if named and any(t.lower_ in PET_NOUNS or t.lemma_.lower() in PET_NOUNS for t in doc):
        return True
    recent = st.ctx.previous_episodes[-3:]
    return before[-2:] in (["named", "him"], ["named", "her"], ["named", "it"]) and bool(recent) \
        and "?" in recent[-1].content and any(w in recent[-1].content.lower() for w in ("name", "call")) \
        and any(_talks_of_pets(e.content.lower()) for e in recent)  # "What's his name?" after a pup brought up


def _named_for_a_pet(st: Parse, m: Mention) -> bool:
    """ "we went with 'Biscuit' for our kitten", "Juniper for the new pup": a name chosen for a pet."""
    doc = st.doc
    k = m.end
    while k < len(doc) and doc[k].is_punct and doc[k].text not in ",.!?;":
        k += 1  # a closing quote
    after = [t.lower_ for t in doc[k:min(len(doc), k + 4)]]
    return after[:1] == ["for"] and len(after) >= 3 and after[1] in ("our", "my", "the", "his", "her", "their") and (
        after[2] in PET_NOUNS or (len(after) > 3 and after[2] in PET_ADJECTIVES | {"new", "little"}
                                  and after[3] in PET_NOUNS))


def _context_votes(st: Parse, m: Mention) -> None:
    doc = st.doc
    n = len(doc)
    i, j = m.start, m.end
    prev = doc[i - 1] if i > 0 else None
    prev2 = doc[i - 2] if i > 1 else None
    nxt = doc[j] if j < n else None
    words = doc[i:j].text.split()
    last = words[-1].lower() if words else ""
    # a place, not a tool or an organisation: "the Lisbon office", "our Austin campus"
    if m.source == "cap" and nxt is not None and (nxt.lower_ in PLACE_HEADS or (
            nxt.text in ("'s", "’s") and j + 1 < n and doc[j + 1].lower_ in PLACE_HEADS)):
        m.place = True  # "the Lisbon office", "McGee's bar"
        return
    # a title before a kind of work: "a Valorant tournament", "the Witcher games"
    if m.source == "cap" and nxt is not None and nxt.lower_ in WORK_OF_HEADS and last not in ORG_SUFFIXES \
            and not (prev is not None and prev.lower_ in {"'s", "’s"} | _VERSUS) \
            and not (len(words) == 1 and common_word(last, NOUN_ZIPF)):  # not "Liverpool vs Chelsea match", "TV"
        m.kind = "work"
        m.vote(CONCEPT, 0.8)
    if m.source == "cap" and _work_cue(st, m):
        m.kind = "work"  # "the game Catan", "a film called X", "we played Overwatch": a title of a work
        m.vote(CONCEPT, 1.6)
        return
    # "the Pomodoro Technique", "the Feynman method": a named method is a concept, not a tool
    if m.source == "cap" and len(words) >= 2 and last in METHOD_HEADS:
        m.vote(CONCEPT, 2.0)
        return
    # org suffix
    if m.source == "cap" and len(words) >= 2 and last in ORG_SUFFIXES:
        m.vote(ORGANIZATION, 2.0)
        return  # "Brightside Bank", "Northwind Labs": the suffix decides
    # "project X", "project called X", "X project"
    if prev is not None and prev.lower_ in PROJECT_HEADS:
        m.vote(PROJECT, 1.5)
    if prev is not None and prev.lower_ in {"called", "named", "codenamed", "dubbed"}:
        ante = [t.lower_ for t in doc[max(0, i - 7):i - 1]]
        if any(t in PROJECT_HEADS for t in ante[-3:]):
            m.vote(PROJECT, 1.5)
        elif any(t in ORG_NOUNS | TEAM_HEADS | GROUP_HEADS for t in ante[-3:]):
            m.vote(ORGANIZATION, 1.2)
        elif any(t in {"library", "framework", "tool", "database", "language", "package", "plugin",
                       "extension", "editor", "ide", "sdk", "crate", "gem", "cli"} for t in ante[-3:]):
            m.vote(TOOL, 1.0)
        elif any(t in {"guy", "woman", "man", "person", "girl", "boy", "friend", "someone", "engineer",
                       "developer", "designer", "colleague"} | ROLE_NOUNS | PEOPLE_NOUNS for t in ante[-3:]) \
                or (m.end - m.start == 1 and first_name(m.name) and not any(t in PET_NOUNS for t in ante)):
            m.vote(PERSON, 1.0)  # "a veteran named Samuel": a person by the noun or by a given name
        elif not (prev2 is not None and prev2.lemma_ == "be" and i >= 3
                  and doc[i - 3].lower_ in ("they", "these", "those")):
            m.vote(PROJECT, 0.9)  # "a rewrite of the booking flow called Skylark", "it's called X" (not "they're
            # called X": a kind of thing named, plural, as flowers or breeds are)
    if nxt is not None and nxt.lower_ in PROJECT_HEADS and m.source == "cap":
        m.vote(PROJECT, 1.2)
    if nxt is not None and nxt.lower_ in TEAM_HEADS and m.source == "cap":
        m.vote(ORGANIZATION, 0.8)
    # a list of tools and their tasks: "Revit for everything, Navisworks for clash", "Andis for everything" (not
    # "Mum for the school run", "Called Tom for a chat", "Lisbon for the food": a person, a verb, a town)
    if m.source == "cap" and m.ner not in PLACE_LABELS and named_for_a_task(doc, i, j) \
            and not any(first_name(w) or w.lower() in FRIEND_ROLES | PEOPLE_NOUNS for w in words) \
            and doc[i].tag_ not in ("VB", "VBD", "VBN", "VBG") \
            and not (len(words) == 1 and common_word(last, OPENING_ZIPF)):
        m.vote(TOOL, 0.9)
    # tool head nouns: "the Tokio runtime", "a GraphQL gateway", "my Python code"
    if nxt is not None and nxt.lower_ in TOOL_HEADS and nxt.pos_ in ("NOUN", "PROPN") \
            and m.source in ("cap", "lexicon"):
        m.vote(TOOL, 0.7)
    # apposition / copula with a project noun: "Orion, our billing app", "X is a ... app"
    ap = _appos_head(st, m)
    if ap is not None and m.source == "cap" and ap.lower_ in PLACE_HEADS:
        m.place = True  # "Woodhaven, a small town", "X is a great trail": a place
        return
    if ap is not None:
        if ap.lower_ in PROJECT_APPOS_HEADS and not _favourite(ap):
            own = any(t.lower_ in WE_WORDS | SPEAKER_WORDS for t in ap.children)  # (not "our favourite game, X")
            m.vote(PROJECT, 1.3 if own else 0.8)
            m.owned = m.owned or own
        if ap.lower_ in ROLE_NOUNS and not _known_thing(st, m) and not _of_choice(ap):
            # ("Jira is my manager now": a tool still; "my editor of choice": a kind of thing)
            m.vote(PERSON, 1.3)
            m.role = m.role or ap.lower_
        if ap.lower_ in ORG_NOUNS and any(c.dep_ in ("det", "poss") for c in ap.children):
            m.vote(ORGANIZATION, 1.4)  # "X is a startup", not "pets are great company"
        if (ap.lower_ in TEAM_HEADS or ap.lower_ in GROUP_HEADS) and m.source == "cap" and ap.i < m.start \
                and any(c.dep_ in ("det", "poss") for c in ap.children) and not first_name(m.name.split()[0]):
            m.vote(ORGANIZATION, 1.2)  # "I coach a youth team, the Falcons": the group just described, by name
        if ap.lower_ in TOOL_HEADS and m.source == "cap" and ap.i < m.start and ap.dep_ in ("dobj", "pobj") \
                and any(c.dep_ in ("det", "poss") for c in ap.children):
            m.vote(TOOL, 1.0)  # "we use a tiny library, Zod, for ...": the name of the tool just described
    # role noun right in front: "my colleague Ingrid", "our designer Maya"
    if prev is not None and prev.lower_ in ROLE_NOUNS and m.source in ("cap", "candidate", "lexicon"):
        poss = [t for t in prev.children if t.dep_ == "poss"] or ([prev2] if prev2 is not None else [])
        if any(t is not None and t.lower_ in SPEAKER_WORDS | WE_WORDS | {"his", "her", "their"}
               for t in poss) or prev.dep_ in ("nsubj", "pobj", "dobj", "appos", "attr") \
                or _possessed_by_speaker(prev):
            m.vote(PERSON, 1.5)
            m.role = prev.lower_
    # role noun and a comma in front: "my editor, Ana Lima, ...", "our head chef, Tomas, ...", "a new TA now, Kay"
    before_comma = prev2
    if prev is not None and prev.text == "," and prev2 is not None and prev2.lower_ in ("now", "too", "also") \
            and i >= 3:
        before_comma = doc[i - 3]
    if prev is not None and prev.text == "," and before_comma is not None and before_comma.lower_ in ROLE_NOUNS \
            and m.source in ("cap", "candidate", "lexicon") and _possessed_by_speaker(before_comma) \
            and not _known_thing(st, m):  # (not "my main editor, Prettier plus snippets": a tool)
        m.vote(PERSON, 1.5)
        m.role = before_comma.lower_
    # the speaker's role noun in brackets right after the name: "Petra (our staff eng) ran ...", "Amara (my mentor)"
    if nxt is not None and nxt.text == "(" and m.source in ("cap", "candidate") and not _known_thing(st, m):
        inside = list(itertools.takewhile(lambda t: t.text != ")", doc[j + 1:min(n, j + 7)]))
        role_word = next((t for t in inside if t.lower_ in ROLE_NOUNS or t.lower_ == "person"), None)
        if inside and inside[0].lower_ in ("our", "my") and role_word is not None:
            m.vote(PERSON, 1.5)
            m.role = role_word.lower_
    # "sports brands like X", "companies such as X": an organisation by its kind
    if m.source == "cap" and _kind_before(doc, i) in ORG_NOUNS | {"brand", "company", "label", "chain"}:
        m.vote(ORGANIZATION, 1.0)
    # "an agency in Lisbon, X": an organisation noun set before the name by a comma
    if prev is not None and prev.text == "," and m.source == "cap" and m.end - m.start >= 2:
        lead = [t for t in doc[max(doc[i].sent.start, i - 5):i - 1]]
        if any(t.lower_ in ORG_NOUNS and any(c.dep_ == "det" for c in t.children) for t in lead):
            m.vote(ORGANIZATION, 1.0)
    # "a friend of mine, X"
    if prev is not None and prev.text == "," and i >= 4 and doc[i - 2].lower_ in ("mine", "ours") \
            and doc[i - 3].lower_ == "of" and doc[i - 4].lower_ in ROLE_NOUNS and m.source in ("cap", "candidate"):
        m.vote(PERSON, 1.5)
        m.role = doc[i - 4].lower_
    # a work item noun in front, or as the copula's other side: "my plugin Vellum", "our game is Vellum"
    kind_noun = prev2 if prev is not None and prev.text == "," else prev
    if kind_noun is not None and kind_noun.lower_ in PROJECT_APPOS_HEADS and m.source in ("cap", "candidate") \
            and _possessed_by_speaker(kind_noun) and not _favourite(kind_noun):
        m.vote(PROJECT, 1.3)
        m.owned = True
    copula_noun = _copula_other(st, m)
    used_tool = copula_noun is not None and copula_noun.lower_ in ("tool", "tools") and any(
        c.dep_ in ("compound", "amod") for c in copula_noun.children) and not any(
        c.lower_ in ("internal", "own", "in-house", "homegrown", "home-grown", "new") for c in copula_noun.children)
    if used_tool and m.source in ("cap", "candidate"):
        m.vote(TOOL, 1.6)  # "ArgoCD's been our deploy tool for ages": a kind of tool one uses, not one's own build
    elif copula_noun is not None and copula_noun.lower_ in PROJECT_APPOS_HEADS and m.source in ("cap", "candidate") \
            and _possessed_by_speaker(copula_noun) and not _favourite(copula_noun):
        m.vote(PROJECT, 1.3)
        m.owned = True
    # "New project: X"
    if prev is not None and prev.text == ":" and prev2 is not None and prev2.lower_ in PROJECT_HEADS \
            and m.source in ("cap", "candidate"):
        m.vote(PROJECT, 1.5)
        m.owned = True
    if m.source in ("cap", "lexicon") and _fills_a_bare_slot(st, m):
        m.vote(TOOL, 1.2)  # "case management is Clio", "crash reporting is Sentry": a part of the work, done in X
    # copula role: "my designer is Maya", "Maya is my designer"
    role = _copula_role(st, m)
    if role and not _known_thing(st, m):  # "VS Code is my main editor": a tool in a role's slot
        m.vote(PERSON, 1.5)
        m.role = role
    # subject of something only people do: "Dmitri took it over", "Wen said", "Ola approved the budget"
    head = doc[m.start]
    ambiguous = m.source == "lexicon" and max(m.votes.values(), default=0.0) < 0.5 and first_name(m.name)
    if (m.source == "cap" or ambiguous) and m.end - m.start == 1 and head.dep_ == "nsubj" \
            and (lemma(head.head) in HUMAN_AGENT_VERBS
                 or (lemma(head.head) == "take" and any(c.lower_ == "over" for c in head.head.children))):
        m.vote(PERSON, 0.6)
    # "X and I", "I and X", "X and me"
    if nxt is not None and nxt.lower_ == "and" and j + 1 < n and doc[j + 1].lower_ in {"i", "me"} \
            and not (prev is not None and prev.pos_ == "ADP") and m.source != "np":
        m.vote(PERSON, 1.2)  # (not "interested in cultures and countries and I'm ...": a common noun)
    if prev is not None and prev.lower_ == "and" and prev2 is not None and prev2.lower_ in {"i", "me"}:
        m.vote(PERSON, 1.0)
    # prepositions in front
    p = prev.lower_ if prev is not None else ""
    if prev is not None and prev.pos_ == "DET" and prev2 is not None:
        p = prev2.lower_
    gov = nearest_verb_before(doc, i)
    glem = lemma(gov) if gov is not None else ""
    if p == "at" and m.source in ("cap", "lexicon"):
        m.vote(ORGANIZATION, 1.0)
    if m.source == "cap" and m.end - m.start <= 2 and doc[j - 1].dep_ == "dobj" \
            and lemma(doc[j - 1].head) in _PERSON_OBJECT_VERBS and not camel(m.name) \
            and not any(c.dep_ == "prep" and c.lower_ in ("to", "into", "onto", "for")
                        for c in doc[j - 1].head.children):
        m.vote(PERSON, 0.7)  # "I've been helping Femi with the grant", "we hired Anouk": one does this to people
    if m.source == "cap" and prev is not None and prev.lower_ in ("a", "an") and prev2 is not None \
            and (prev2.lower_ in ("on", "with") or lemma(prev2) in _OWNING_VERBS) \
            and doc[j - 1].dep_ in ("pobj", "dobj") and not first_name(m.name.split()[0]):
        m.vote(TOOL, 1.0)  # "I'm on a Yamaha CL5", "we bought a Butterfly iQ": one of a named product
    if p in ("join", "joined", "joining", "joins", "left", "leave", "leaving", "leaves") \
            and m.source == "cap":
        m.vote(ORGANIZATION, 0.7)
    if p in ("for",) and glem == "work" and m.source in ("cap", "lexicon"):
        m.vote(ORGANIZATION, 0.8)  # "she works for Stripe": the company, though it makes a tool too
    if p == "from" and prev2 is not None and m.source == "cap" and i >= 2 and st.at[i - 2] != -1 \
            and glem not in SWITCH_VERBS | LEAVE_VERBS:
        m.vote(ORGANIZATION, 0.8)  # "Marta from Northwind"
    if p == "with" and m.source == "cap" and _no_longer_with(doc, i) and not first_name(m.name.split()[0]):
        m.vote(ORGANIZATION, 1.5)  # "Ines is no longer with Harwood", "she's not with Calloway anymore"
    if p in ("with", "alongside") and m.source == "cap":
        if glem in {"work", "collaborate", "pair", "partner", "team", "meet", "talk", "chat", "sync"} \
                or (gov is not None and gov.dep_ == "ROOT" and glem in WORK_VERBS) or p == "alongside" \
                or (first_name(m.name.split()[0]) and not camel(m.name) and len(m.name.split()) <= 2):
            m.vote(PERSON, 0.8)  # (a given name after "with" is a companion: "I share an office with Petra")
        elif glem in USE_VERBS or glem in {"build", "write"}:
            m.vote(TOOL, 0.5)
    if p in ("to",) and glem == "report" and m.source == "cap":
        m.vote(PERSON, 1.0)
    if p in _FLOW_PREPS and m.source == "cap" and gov is not None and gov.i < i and _thing_flows_into(doc, gov, p):
        m.vote(TOOL, 0.9)  # "bookings go through Tablewise", "plot data goes into FieldNote", "cues run off CueDeck"
    elif p == "in" and m.source == "cap" and gov is not None and gov.i < i and glem in ("live", "sit") \
            and _thing_flows_into(doc, gov, p) and not (j < n and doc[j].text in ("'s", "’s")) and any(
                c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in WORK_THINGS for c in gov.children):
        # "test plans live in Qase", "our invoices sit in Quickfile" (a name known to general text may be a town)
        m.vote(TOOL, 0.5 if common_word(m.name.lower(), 1.0) else 1.5)
    if m.source == "cap" and gov is not None and gov.i < i:
        if p in ("through", "via") and glem not in _MOTION_VERBS and gov.pos_ == "VERB" \
                and not first_name(m.name.split()[0]):
            m.vote(TOOL, 0.5 if common_word(m.name.lower(), 1.0) else 1.5)  # "we book shoots through Studiobook",
            # not "we drove through Leeds", "trekked through the Himalayas" (a word known to general text, or the name
            # finder's place label, which this preposition invites, is wrong after a verb of doing business)
        if p == "in" and glem in _KEPT_IN_VERBS and not any(t.lower_ in PERSON_PRONOUNS for t in doc[i:j]):
            # "we log every pint in Brewlog", "I edit in Lumetta"; a word unknown to general text is no town
            m.vote(TOOL, 0.5 if common_word(m.name.lower(), 1.0) else 1.5)
        if p == "on" and glem == "be" and prev is not None and prev.lower_ == "on" and m.end - m.start == 1 \
                and gov.i < prev.i and all(t.lower_ in ("all", "now", "mostly", "fully")
                                           for t in doc[gov.i + 1:prev.i]) \
                and any(c.dep_ == "nsubj" and c.lower_ in ("we", "i") for c in gov.children) \
                and not first_name(m.name) and m.votes.get(ORGANIZATION, 0.0) < 1.0:
            m.vote(TOOL, 0.6)  # "we're all on Trint now": a bare name one is on is a tool (not "on the Falcons")
        if p == "on" and glem == "be" and m.source == "cap" and prev is not None and prev.lower_ == "on" and any(
                c.dep_ == "nsubj" and any(g.dep_ == "conj" and (g.lower_ in ("i", "me") or c.lower_ in ("i", "me"))
                                          for g in c.children)
                for c in gov.children) and not m.votes.get(TOOL):
            m.vote(PROJECT, 1.0)  # "Hannah and I are both on Orion now": people are on a piece of work
        if p == "in" and glem == "be" and any(c.dep_ == "nsubj" and c.lower_ in _ALL_OF_IT for c in gov.children):
            m.vote(TOOL, 0.9)  # "everything's in Paywell these days", "it's all in Brewlog"
        if (glem in _TOOL_TRIAL_VERBS or gov.lower_ in _TOOL_TRIAL_VERBS) \
                and p in ("", gov.lower_, "for", "out", "up") and doc[j - 1].dep_ != "nsubj":
            m.vote(TOOL, 0.6)  # "been trialling Paywell", "signed up for Paywell"
        if p == "with" and m.source == "cap" and glem in MAKING_VERBS | _REMAKING_VERBS \
                and not first_name(m.name.split()[0]) and any(
                    c.dep_ == "dobj" and c.pos_ == "NOUN" and c.lower_ not in PEOPLE_NOUNS for c in gov.children):
            m.vote(TOOL, 1.0)  # "she's rewritten our decoder with KenLM": what a thing is made with
    if m.source == "cap" and doc[j - 1].dep_ == "nsubj" and lemma(doc[j - 1].head) in _TOOL_AGENT_VERBS \
            and any(c.dep_ == "dobj" and c.pos_ == "NOUN" and c.lower_ not in PEOPLE_NOUNS
                    for c in doc[j - 1].head.children):
        m.vote(TOOL, 1.0)  # "Paywell handles all the invoicing", "Paywell replaced our old spreadsheets"
    read_as_compound = doc[j - 1].dep_ == "compound" and doc[j - 1].head.i == j and doc[j - 1].head.tag_ == "VBZ"
    if m.source == "cap" and (doc[j - 1].dep_ == "nsubj" or read_as_compound) and not first_name(m.name.split()[0]) \
            and not (m.weak and (doc[m.start].tag_ == "NNS" or common_word(doc[m.start].lower_))) \
            and _stands_on_a_known_tool(st, doc[j - 1].head):  # (not "Deploys run on Render": a plain noun; the
        # parser reads "Ledgerline leans on Kafka" as a compound before the verb)
        m.vote(PROJECT, 1.5)  # "Atlas runs on Postgres", "Vela needs Rust to build": a system, not a person
    if gov is not None and m.source in ("cap", "np"):
        obj_like = gov.i < i
        if obj_like and glem in {"use", "adopt", "utilize", "utilise", "install", "deploy", "try",
                                 "learn", "write", "code", "leverage", "employ", "migrate",
                                 "integrate", "configure", "upgrade", "host", "run", "benchmark"} \
                and p in {glem, "", "in", "with", "on", "to", "from"} | {gov.lower_}:
            m.vote(TOOL, 0.8)
        if obj_like and p in ("with", "in", "on") and glem in {"build", "write", "implement", "deploy",
                                                              "host", "run", "store", "base", "code",
                                                              "power", "plan", "design", "track"}:
            m.vote(TOOL, 0.9)
        if obj_like and p in ("", gov.lower_) and m.source == "cap" and glem in SWITCH_VERBS | {
                "deploy", "host", "port", "rewrite", "containerize", "containerise", "ship"} \
                and any(t.lower_ in ("from", "to", "on", "onto") for t in doc[j:min(n, j + 3)]):
            m.vote(PROJECT, 0.7)  # "we switched Larkspur from X to Y", "we deploy Orion on Z"
        if obj_like and m.source == "cap" and (glem in DECIDE_VERBS or (glem == "go" and p == "with")) \
                and p in ("", gov.lower_, "for", "on", "with") \
                and not first_name(m.name.split()[0]) and not common_word(m.name.lower(), 3.0):
            m.vote(TOOL, 0.6)  # "after a month of trials we chose Mews", "we went with FME": what is chosen
            # (not "we chose Lisbon": a name well known to general text is more likely a place)
        if obj_like and p in ("from", "to") and glem in SWITCH_VERBS:
            subj_t = [c for c in gov.children if c.dep_ in ("nsubj", "nsubjpass")]
            if subj_t and (subj_t[0].lower_ in ("she", "he") or (subj_t[0].pos_ == "PROPN" and not any(
                    c.dep_ == "dobj" for c in gov.children))):
                m.vote(ORGANIZATION, 0.6)  # "Fatima moved to Lincoln High"
            else:
                m.vote(TOOL, 0.5)
        if obj_like and p == "on" and glem in ("work", "focus") and m.source == "cap":
            m.vote(PROJECT, 1.0)
        if obj_like and p in ("", gov.lower_) and m.source == "cap" and glem in (
                "build", "rewrite", "launch", "ship", "prototype", "design", "architect", "develop", "maintain",
                "co-maintain", "finish", "redesign", "refactor"):
            m.vote(PROJECT, 0.6)  # "we're rewriting Tessel": a work item
        if obj_like and p in ("", gov.lower_) and m.source == "cap" and glem in ("found", "co-found", "cofound"):
            m.vote(ORGANIZATION, 0.9)  # "I co-founded Lumen"
        if obj_like and glem in ("know", "meet", "hire", "introduce", "email", "ask", "tell", "thank"):
            m.vote(PERSON, 0.8)
        if not obj_like and glem in PERSON_SUBJ_VERBS and m.source == "cap" and len(words) <= 2:
            m.vote(PERSON, 0.6)
        if not obj_like and glem in {"know"} and m.source == "cap":
            m.vote(PERSON, 0.5)
    # the verb the mention is the subject of: "Priscilla joined ...", "Lena knows ..."
    last_tok = doc[j - 1]
    if last_tok.dep_ in ("nsubj", "nsubjpass") and m.source == "cap" and len(words) <= 3:
        hv = lemma(last_tok.head)
        if hv in PERSON_SUBJ_VERBS:
            m.vote(PERSON, 0.6)
    # "Priscilla from Hooli": a short name in front of "from <Org>"
    if nxt is not None and nxt.lower_ == "from" and m.source == "cap" and len(words) <= 2 \
            and last_tok.dep_ in ("nsubj", "nsubjpass", "appos"):
        m.vote(PERSON, 0.5)
    # "the founder of Quillstack", "an engineer at X"
    if prev is not None and prev.lower_ in ("of", "at") and prev2 is not None \
            and prev2.lower_ in ORG_ROLE_NOUNS and m.source == "cap":
        m.vote(ORGANIZATION, 1.0)
    if prev is not None and prev.lower_ == "in" and prev2 is not None and prev2.lower_ in _PLAYER_ROLES \
            and m.source == "cap":
        m.vote(ORGANIZATION, 1.2)  # "the drummer in Velvet Kites": a band, whatever the name finder says
    # she/he right after, in the next clause: "Ingrid is on the team, and she ..."
    if m.source == "cap" and len(words) <= 2:
        later = doc[j:min(n, j + 12)]
        if any(t.lower_ in ("she", "he", "her", "him", "his") for t in later) and not any(
                st.at[t.i] != -1 and t.i >= j and best_type(st.mentions[st.at[t.i]].votes) == PERSON
                for t in later if st.at[t.i] != -1):
            m.vote(PERSON, 0.25)
    # "prefer X" where nothing else says: any non-person
    if m.source == "cap" and gov is not None and glem in PREFER_VERBS and gov.i < i:
        m.vote(TOOL, 0.3)
        if j < n and doc[j].lower_ in ("over", "to") and not first_name(m.name.split()[0]):
            m.vote(TOOL, 0.6)  # "I prefer Helmfile over raw helm charts": a thing set against another
    # "swears by his Thermomix", "can't live without Brewlog": a thing one relies on (not a person one loves)
    k = i - 1
    while k >= 0 and (doc[k].pos_ in ("DET", "ADJ") or doc[k].tag_ == "PRP$"):
        k -= 1
    if m.source == "cap" and k >= 1 and (lemma(doc[k - 1]), doc[k].lower_) in USE_IMPLYING_PAIRS \
            and not first_name(m.name.split()[0]) and m.name.split()[0].rstrip(".").lower() not in HONORIFICS:
        m.vote(TOOL, 0.8)


def _where_an_org_is(st: Parse, m: Mention) -> bool:
    """The name right after "<organisation> in": "Pawsome Vets in Didsbury" (wherever the parser hangs "in")."""
    if m.start < 2 or st.doc[m.start - 1].lower_ != "in":
        return False
    k = st.at[m.start - 2]
    return k != -1 and st.mentions[k] is not m and st.mentions[k].votes.get(ORGANIZATION, 0.0) >= 1.0


def _swapped_for(doc: Any, a: Mention, b: Mention) -> bool:
    """"we ditched Mailchimp for Buttondown", "swapped Trello for Height": the one taken up in place of the other is
    a thing of its kind."""
    obj, prep = doc[a.end - 1], doc[a.end]
    return obj.dep_ == "dobj" and lemma(obj.head) in _SWAP_VERBS and prep.head.i in (obj.head.i, obj.i) \
        and doc[b.end - 1].head.i == prep.i  # ("for" hung on the thing swapped, too)


def _stands_on_a_known_tool(st: Parse, verb: Any) -> bool:
    """The verb says its subject is a system resting on a known tool: "runs on Postgres", "depends on Redis",
    "needs Rust to build" (not "relies on": people rely on tools; not "needs X" alone: a want)."""
    def known_tool(tok: Any) -> bool:
        k = st.at[tok.i]
        if k == -1:
            return False
        other = st.mentions[k]
        return other.source == "lexicon" or (other.source == "candidate" and best_type(other.votes) == TOOL)

    lem = lemma(verb)
    if lem in _RESTING_ON_VERBS:
        return any(c.dep_ == "prep" and c.lower_ == "on" and any(known_tool(g) for g in c.children if g.dep_ == "pobj")
                   for c in verb.children)
    if lem in ("need", "require"):
        for c in verb.children:
            if c.dep_ in ("xcomp", "advcl", "ccomp") and lemma(c) in _FUNCTION_VERBS \
                    and not any(g.dep_ == "dobj" for g in c.children):
                # "needs Rice to build" (object, then purpose) or, as the parser often reads it, "Rice" the subject
                # of "to build"
                needed = [g for g in verb.children if g.dep_ == "dobj"] + [g for g in c.children if g.dep_ == "nsubj"]
                if needed and all(known_tool(g) or any(known_tool(x) for x in g.conjuncts) for g in needed):
                    return True
    return False


def _no_longer_with(doc: Any, i: int) -> bool:
    """The name after "with" in "<someone> is no longer with X" / "isn't with X anymore": where they worked."""
    w = doc[i - 1] if doc[i - 1].lower_ == "with" else doc[i - 2]
    be = w.head
    if w.lower_ != "with" or be.lemma_ != "be":
        return False
    kids = {c.lower_ for c in be.children} | {g.lower_ for c in be.children for g in c.children}
    sent = " ".join(t.lower_ for t in be.sent)
    return ("longer" in kids and "no" in kids) or (("not" in kids or "n't" in kids) and (
        "anymore" in sent or "any more" in sent))


_MOTION_VERBS = word_class("motion_verbs")
_TITLE_MAKING_VERBS = word_class("title_making_verbs")
_PERSON_OBJECT_VERBS = word_class("person_object_verbs")
_OWNING_VERBS = word_class("owning_verbs")
_SPANS_OF_TIME = frozenset({"year", "month", "week", "day", "decade", "hour", "minute", "age"})
_PARTS_OF_DAY = frozenset({"morning", "afternoon", "evening", "night", "weekend", "weekday", "lunchtime"})
_SWAP_VERBS = word_class("swap_verbs")
_ALL_OF_IT = frozenset({"everything", "it", "all", "stuff", "that"})
_KEPT_IN_VERBS = word_class("kept_in_verbs")
_TOOL_TRIAL_VERBS = word_class("tool_trial_verbs")
_REMAKING_VERBS = frozenset({"rewrite", "rebuild", "redo", "redesign", "refactor", "reimplement", "port", "rework"})
_TOOL_AGENT_VERBS = word_class("tool_agent_verbs")
_RESTING_ON_VERBS = word_class("resting_on_verbs")
_PLAYER_ROLES = word_class("player_roles")
_FUNCTION_VERBS = word_class("function_verbs")


_FLOW_PREPS = frozenset({"through", "into", "onto", "on", "off", "via"})
_FLOW_VERBS = SETUP_VERBS | word_class("flow_verbs")


def _thing_flows_into(doc: Any, gov: Any, prep: str) -> bool:
    """A plain thing (not a person, not a place) going through, into or off a named thing, or kept on it: the named
    thing is software ("bookings go through X", "the footage lives on X", "appointments are on X")."""
    if gov.lemma_ not in _FLOW_VERBS and not (gov.lemma_ == "be" and prep == "on"):
        return False
    subj = [c for c in gov.children if c.dep_ in ("nsubj", "nsubjpass")]
    if subj and subj[0].lower_ in ("everything", "all"):
        return True  # "everything goes through Tessaly now"
    if not subj or subj[0].pos_ != "NOUN" or subj[0].lower_ in PEOPLE_NOUNS | ROLE_NOUNS | PLACE_HEADS:
        return False
    return not any(c.dep_ == "poss" and c.lower_ in PERSON_PRONOUNS for c in subj[0].children)


def _work_cue(st: Parse, m: Mention) -> bool:
    """The capitalised name is the title of a book, film, game, show or song: a work noun names it ("the game
    Catan", "a movie called X", "X is a great co-op game", "books like X") or a verb of playing, watching,
    reading or listening takes it as its object ("we played Overwatch", "I'm reading X")."""
    doc = st.doc
    root = doc[m.end - 1]
    if root.dep_ in ("dobj", "appos") and lemma(root.head) in MAKING_VERBS | {"co-write", "co-author"}:
        return False  # "Petra and I are co-writing Night Ferry, a novel": the speaker's own work, a project
    before = [t.lower_ for t in doc[max(doc[m.start].sent.start, m.start - 4):m.start]]
    if before[-1:] in (["called"], ["named"]) and len(before) >= 2 and before[-2] in ROLE_NOUNS | PEOPLE_NOUNS:
        return False  # "an OT called Bea Lowry": a person in a role, not a title
    if before[-1:] in (["called"], ["named"], ["titled"]) and any(w in WORK_NOUNS for w in before[:-1]):
        noun = doc[m.start - 1].head  # "I'm writing a novel called X": the work noun the name is given to
        if noun.dep_ == "pobj" and noun.head.lower_ == "on" and lemma(noun.head.head) in WORK_VERBS:
            return False  # "I'm working on a podcast series called X": the speaker's own work, a project
        return not (noun.dep_ == "dobj" and lemma(noun.head) in MAKING_VERBS and noun.head.tag_ != "VBD")
    if _titled_name(st, m):
        return True
    first = doc[m.start + 1] if doc[m.start].lower_ in ("the", "a", "an") and m.end - m.start > 1 else doc[m.start]
    if first.is_stop:
        return False  # "the appointment book AND reminders": a word, not a title (but "The Legend of X" is one)
    prev = doc[m.start - 1] if m.start > 0 else None
    if prev is not None and prev.lower_ in WORK_NOUNS and (any(c.dep_ == "det" for c in prev.children) or (
            prev.dep_ == "compound" and prev.head.i == m.end - 1 and m.start > 1 and doc[m.start - 2].dep_ == "det")):
        return True  # "this game Catan", "the film Heat" (the article read as the name's: "with the game Zorbo")
    if before[-2:] in [[w, "like"] for w in WORK_NOUNS]:
        return True  # "board games like Hexmoor"
    ap = _appos_head(st, m)
    if ap is not None and ap.lower_ in WORK_NOUNS and not (
            m.end - m.start >= 2 and first_name(doc[m.start].text)
            and not any(c.dep_ in ("det", "poss") for c in ap.children)):
        # (not "our ASM is Felix Tran, first show with us": a person's full name, and a remark on them)
        own = lemma(ap.head) in MAKING_VERBS | {"run", "start", "launch", "host"} or any(
            c.dep_ == "poss" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in ap.children)
        return not own or _favourite(ap)  # "we run a small podcast, Drift Notes": the speaker's own work, a project
        # (but "our favourite game, X" is a taste)
    tok = next((t for t in doc[m.start:m.end] if not m.start <= t.head.i < m.end), doc[m.end - 1])
    while tok.dep_ == "conj" and tok.head.i != tok.i:
        tok = tok.head  # "played Overwatch and Apex Legends"
        left = tok.left_edge.i
        if left >= 2 and doc[left - 1].lower_ == "like" and doc[left - 2].lower_ in WORK_NOUNS:
            return True  # "strategy games like Hexmoor and Tidewars": every title in the list
    if tok.dep_ == "dobj" and lemma(tok.head) in WORK_VERBS_OF_TITLES \
            and not (m.end - m.start == 1 and common_word(doc[m.start].lower_, NOUN_ZIPF)):
        return not any(t.lower_ in PET_NOUNS | PEOPLE_NOUNS for t in doc[m.start].sent)  # not "watch TV"
    return False


_FAVOURITE = frozenset({"favorite", "favourite", "fave", "go-to"})
_ROMAN = frozenset({"ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"})


def _titled_name(st: Parse, m: Mention) -> bool:
    """The shape of a title: a subtitle after a colon ("Harbor Tides: The Reckoning"), a numbered sequel named
    with "The" ("The Drowned Kings 3"), or a name that the next sentence, without a verb, calls a work ("I tried
    Skyreach last night. Great game!")."""
    doc = st.doc
    words = doc[m.start:m.end]
    colon = [t.i for t in words if t.text == ":"]
    if colon and m.start < colon[0] < m.end - 1 and doc[colon[0] + 1].text[:1].isupper() \
            and doc[colon[0] - 1].text[:1].isupper():
        return True
    if m.end - m.start >= 3 and doc[m.start].lower_ == "the" and (
            doc[m.end - 1].is_digit or doc[m.end - 1].lower_ in _ROMAN):
        return True
    sent = doc[m.start].sent
    if sent.end >= len(doc) or not (m.end == sent.end or (m.end + 1 == sent.end and doc[m.end].is_punct)
                                    or (m.end < sent.end and _only_time_after(st, m.end, sent.end))):
        return False
    head = [t for t in doc[sent.end:min(len(doc), sent.end + 5)] if not t.is_punct][:4]
    k = next((n for n, t in enumerate(head) if t.lower_ in WORK_NOUNS), -1)
    return k >= 0 and all(t.pos_ in ("ADJ", "DET", "ADV") or t.lower_ in ("what", "such") for t in head[:k]) \
        and not any(t.pos_ in ("VERB", "AUX") for t in doc[sent.end:sent.end + k + 1])


def _only_time_after(st: Parse, i: int, j: int) -> bool:
    """Only a time phrase, an adverb or punctuation from token ``i`` to the sentence end ``j`` ("... last night.")."""
    return all(t.is_punct or st.in_time[t.i] or t.pos_ in ("ADV", "NUM") for t in st.doc[i:j])


def _appos_head(st: Parse, m: Mention) -> Any:
    """Noun in apposition or as copula attribute of the mention: "Orion, our app" → app."""
    doc = st.doc
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
                if k + 1 < len(doc) and doc[k + 1].pos_ == "PROPN" and doc[k + 1].text[:1].isupper():
                    return None  # "X, my manager Bernadette, ...": the role is Bernadette's, not X's
                if doc[k].dep_ in ("nsubj", "nsubjpass") and doc[k].head.i > k:
                    return None  # "the backend is Go, the frontend is Vue": the noun opens a clause of its own
                return doc[k]
            k += 1
    # copula: "X is a ... app"
    if head.dep_ in ("nsubj",) and head.head.lemma_ == "be":
        for t in head.head.children:
            if t.dep_ == "attr" and t.pos_ == "NOUN":
                return t
    return None


def _favourite(noun: Any) -> bool:
    """ "our favourite game", "my fave show": a taste of the speaker's, not a work of theirs."""
    return any(c.lower_ in _FAVOURITE for c in noun.children)


def _possessed_by_speaker(noun: Any) -> bool:
    """"my/our (new) <noun>": the noun has a first-person possessive."""
    return any(c.dep_ == "poss" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in noun.children) or any(
        t.lower_ in ("my", "our") for t in noun.doc[max(noun.sent.start, noun.i - 3):noun.i]) or (
        noun.dep_ == "dobj" and noun.head.lemma_ in ("have", "get", "hire") and any(
            c.dep_ == "nsubj" and c.lower_ in ("i", "we") for c in noun.head.children)) or any(  # "I've got a new TA"
        c.dep_ == "prep" and c.lower_ in ("on", "in") and any(
            g.dep_ == "pobj" and any(x.dep_ == "poss" and x.lower_ in ("my", "our") for x in g.children)
            for g in c.children) for c in noun.children)  # "new starter on my team, Bea"


def _copula_other(st: Parse, m: Mention) -> Any:
    """The noun on the other side of "is" from the mention: "our game is X" / "X is our game" → game."""
    head = st.doc[m.end - 1]
    verb = head.head
    if verb.lemma_ != "be" or head.dep_ not in ("attr", "nsubj"):
        return None
    for t in verb.children:
        if t.i != head.i and t.dep_ in ("nsubj", "attr") and t.pos_ == "NOUN":
            return t
    return None


def _known_thing(st: Parse, m: Mention) -> bool:
    """The mention is a name the lexicon knows, unambiguously, as a thing (no person can be called so)."""
    known = st.lex.get(st.doc[m.start:m.end].text) if m.source == "lexicon" else None
    return known is not None and not known.ambiguous


def _copula_role(st: Parse, m: Mention) -> str:
    """"my designer is Maya" / "Maya is my designer" → "designer"."""
    doc = st.doc
    head = doc[m.end - 1]
    verb = head.head
    if verb.lemma_ != "be" or head.dep_ not in ("attr", "nsubj"):
        return ""
    for t in verb.children:
        if t.i == head.i or t.dep_ not in ("nsubj", "attr"):
            continue
        if t.lower_ in ROLE_NOUNS and any(c.dep_ == "poss" for c in t.children) and not _of_choice(t):
            return t.lower_
        if t.lower_ in ROLE_NOUNS and t.dep_ == "nsubj" and t.left_edge.is_sent_start and t.i < head.i \
                and not any(c.dep_ in ("det", "poss") for c in t.children):
            return t.lower_  # "Director is Marguerite Lennox.": chat leaves the "my" unsaid
        if _unlisted_role(st, m, t):
            return t.lower_  # "our ASM is Felix Tran", "my PI is Grace Okafor": a role the lists don't know
    return ""


def _unlisted_role(st: Parse, m: Mention, noun: Any) -> bool:
    """``noun`` is a role of the speaker's side ("our ASM", "my second reader") held by ``m``, a person by a given
    name: any noun but a thing's slot or a taste ("my favourite is Ana" is no role)."""
    return m.source == "cap" and first_name(m.name.split()[0]) and noun.pos_ in ("NOUN", "PROPN") \
        and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in noun.children) \
        and noun.lower_ not in TOOL_HEADS and noun.lemma_ not in _NOT_ROLES \
        and not any(c.lower_ in ("favourite", "favorite", "fave") for c in noun.children) and not _of_choice(noun)


_NOT_ROLES = frozenset({"name", "favourite", "favorite", "fave", "pick", "choice", "pet", "dog", "cat", "horse",
                        "baby", "hero", "idol", "inspiration", "crush", "type", "password", "guess", "answer"})


def _of_choice(noun: Any) -> bool:
    """ "my editor of choice", "our database of choice": a kind of thing chosen, not a person's role."""
    return any(c.dep_ == "prep" and c.lower_ == "of" and any(g.lower_ == "choice" for g in c.children)
               for c in noun.children)


def speaker_self_name(st: Parse, m: Mention) -> bool:
    """"I'm Marcus, ...", "I am Marcus.", "my name is Marcus", "Marcus here": the speaker names themself."""
    doc = st.doc
    i = m.start
    before = [t.lower_ for t in doc[max(0, i - 3):i]]
    after = doc[m.end] if m.end < len(doc) else None
    ends = after is None or after.is_punct or after.lower_ in ("and", "here", "from", "btw")
    if before[-2:] in (["i", "'m"], ["i", "am"], ["i", "’m"]) and ends and m.end - m.start <= 2:
        return doc[i].text[:1].isupper() and not st.lex.get(doc[i:m.end].text)
    if before[-3:] == ["my", "name", "is"] and m.end - m.start <= 3:
        return True
    return after is not None and after.lower_ == "here" and (i == 0 or doc[i - 1].is_sent_start
                                                             or doc[i - 1].is_punct) and m.end - m.start <= 2


def assign_refs(st: Parse) -> list[ExtractedEntity]:
    out: list[ExtractedEntity] = []
    by_key: dict[str, ExtractedEntity] = {}
    sent_q = {}
    for s in st.doc.sents:
        q = s.text.rstrip().endswith("?")
        for t in s:
            sent_q[t.i] = q
    for m in st.mentions:
        if not m.type:
            continue
        if m.source == "cap" and st.speaker_ok and speaker_self_name(st, m):
            m.is_speaker, m.type = True, ""  # the speaker: no second entity beside them
            st.notes["speaker_name"] = clean_name(m.name)
            continue
        m.in_question = sent_q.get(m.start, False)
        if m.in_question and m.source == "cap" and m.conf < 0.75:
            m.type = ""  # unknown names in questions: not asserted anywhere
            continue
        name = clean_name(m.name)
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
        if m.kind:
            attrs["kind"] = m.kind
        if m.guessed and m.thin:
            attrs["typed_by"] = "name model"  # (shown by --explain; like every thin type, kept only with a fact)
        ent = ExtractedEntity(ref=ref, name=name, type=m.type, confidence=round(m.conf, 2),
                              aliases=aliases, attributes=attrs, existing_id=m.existing_id)
        by_key[key] = ent
        out.append(ent)
        m.ref = ref
    return out


_FINITE_AFTER_SUBJECT = frozenset({"VBZ", "VBD", "VBP", "MD"})  # the verb (or auxiliary) right after the name
