"""Stage 1, mentions: candidate names, lexicon names, capitalised sequences and noun phrases."""

from __future__ import annotations

import re
from typing import Any

from loregraph.extract.base import CandidateEntity
from loregraph.extract.local.kinds import CONCEPT, ORGANIZATION, PERSON, PROJECT, TOOL
from loregraph.extract.local.state import (
    Mention,
    Parse,
    after_adverbs,
    best_type,
    camel,
    chunk_governor,
    is_capish,
    joined_by_speaker,
    named_for_a_task,
    norm_key,
)
from loregraph.extract.local.words import (
    CLASS_NOUNS,
    CLASS_TAKING_VERBS,
    CODE_NAME_HOLDERS,
    COLLAB_VERBS,
    COMMUNITY_HEADS,
    CONCEPT_HEADS,
    CREATIVE_HEADS,
    EDITION_WORDS,
    EVALUATIVE_ADJ,
    FINISH_VERBS,
    GENERIC_ADJ,
    GENERIC_CAPS,
    GENERIC_NOUNS,
    GREETING_WORDS,
    GROUP_HEADS,
    HONORIFICS,
    INSTRUMENT_VERBS,
    INSTRUMENTS,
    INTEREST_PAIRS,
    INTERJECTIONS,
    JOINABLE_HEADS,
    LIGHT_GERUNDS,
    NOUN_ZIPF,
    ORG_OF_HEADS,
    ORG_SUFFIXES,
    OWN_WORK_NOUNS,
    PASTIMES,
    PEOPLE_NOUNS,
    PET_NOUNS,
    PLACE_HEADS,
    PREFER_VERBS,
    PROJECT_APPOS_HEADS,
    PROJECT_HEADS,
    PRONOUNS,
    QUALITY_ADJ_SUFFIXES,
    ROLE_NOUNS,
    SHORT_NAME_ZIPF,
    SPEAKER_WORDS,
    STOP_CAPS,
    TEAM_HEADS,
    TIME_WORDS,
    TOOL_SLOT_VERBS,
    WE_WORDS,
    WORK_ITEM_HEADS,
    WORK_NOUNS,
    WORK_OF_HEADS,
    WORK_VERBS,
    code_name,
    common_word,
    first_name,
    takes_up,
    word_class,
)


def find_mentions(st: Parse) -> list[Mention]:
    doc = st.doc
    n = len(doc)
    spans: list[tuple[int, int, int, Mention]] = []  # (priority, start, end, mention)

    # (a) candidate entities offered by the pipeline
    cand_index: dict[str, tuple[CandidateEntity, bool]] = {}
    for c in st.ctx.candidates:
        for nm in [c.name, *c.aliases]:
            key = norm_key(nm)
            if key and key not in PRONOUNS:
                cand_index.setdefault(key, (c, False))
        words = c.name.split()
        if c.type == PERSON and len(words) >= 2 and words[0][:1].isupper() and len(words[0]) >= 3:
            first = norm_key(words[0])
            if first not in cand_index and first.rstrip(".") not in HONORIFICS:
                cand_index[first] = (c, False)
            elif len(words) == 2 and first.rstrip(".") in HONORIFICS and norm_key(words[1]) not in cand_index:
                cand_index[norm_key(words[1])] = (c, False)  # "Adeyemi" for "Mrs Adeyemi" named before
        if c.type == ORGANIZATION and len(words) >= 2 and words[-1].lower() in ORG_SUFFIXES \
                and words[0][:1].isupper() and len(words[0]) >= 4 and not any(w.islower() for w in words):
            first = norm_key(words[0])  # "Initech" for "Initech Labs" (not "LGBTQ" for "LGBTQ support group")
            if first not in cand_index and first not in PRONOUNS:
                cand_index[first] = (c, False)
        if len(words) >= 2 and words[-1].lower() in (WORK_ITEM_HEADS | PROJECT_HEADS | TEAM_HEADS | ORG_SUFFIXES):
            short_name = " ".join(words[:-1])
            # "the Fernhill project" is "Fernhill" for short, "the churn model" "churn"; a dance crew is never
            # "dance", a supportive group never "supportive": everyday words are no short names
            if len(short_name) >= 4 and (not all(w.islower() for w in words[:-1])
                                         or not any(common_word(w, SHORT_NAME_ZIPF) for w in words[:-1])):
                cand_index.setdefault(norm_key(short_name), (c, True))
    # "the heparin checklist" for "heparin drip checklist" named before: a known work named without one of its
    # middle words
    for c in st.ctx.candidates:
        words = c.name.split()
        if c.type == PROJECT and len(words) >= 3 and words[-1].lower() in WORK_ITEM_HEADS | PROJECT_HEADS:
            for k in range(1, len(words) - 1):
                cand_index.setdefault(norm_key(" ".join(words[:k] + words[k + 1:])), (c, True))
    # "the handoff template" for "PICU handoff template" named before: a definite description that is the known
    # work's name without its leading qualifier (two lower-case words or more, ending in a work-item head)
    tails: dict[str, CandidateEntity] = {}
    for c in st.ctx.candidates:
        words = c.name.split()
        if c.type == PROJECT and len(words) >= 3 and not words[0].islower() \
                and all(w.islower() for w in words[1:]) and words[-1] in WORK_ITEM_HEADS | PROJECT_HEADS:
            tails.setdefault(norm_key(" ".join(words[1:])), c)
    # "the Players" for "Harbourside Players" named before: a club, a troupe or a team called by its last word, a
    # capitalised plural, after "the"
    for c in st.ctx.candidates:
        words = c.name.split()
        if c.type == ORGANIZATION and len(words) >= 2 and all(w[:1].isupper() for w in words) \
                and words[-1].isalpha() and words[-1].endswith("s") and len(words[-1]) >= 5 \
                and words[-1].lower() not in ORG_SUFFIXES:
            tails.setdefault(words[-1], c)
    maxw = 6
    if tails:
        for i in range(1, n):
            if doc[i - 1].lower_ not in ("the", "that", "this", "our"):
                continue
            if doc[i].text in tails and (i + 1 == n or doc[i + 1].dep_ != "compound"):
                club = tails[doc[i].text]
                m = Mention(i, i + 1, club.name, source="candidate", existing_id=club.id, aliases=list(club.aliases))
                m.vote(club.type, 3.0)
                spans.append((0, i, i + 1, m))
                continue
            for j in range(min(n, i + maxw), i + 1, -1):
                known = tails.get(norm_key(doc[i:j].text))
                if known is not None and (j == n or doc[j].dep_ != "compound"):
                    m = Mention(i, j, known.name, source="candidate", existing_id=known.id, aliases=list(known.aliases))
                    m.vote(known.type, 3.0)
                    spans.append((0, i, j, m))
                    break
    if cand_index:
        for i in range(n):
            for j in range(min(n, i + maxw), i, -1):
                span = doc[i:j]
                if span[0].is_punct or span[-1].is_punct:
                    continue
                key = norm_key(span.text)
                hit = cand_index.get(key)
                if hit is None:
                    continue
                c, short = hit
                if short and j < n and doc[j].pos_ in ("NOUN", "PROPN") and doc[j].dep_ == "compound":
                    continue
                if key in {"the", "a"}:
                    continue
                if span.text.islower() and not c.name.islower() and len(span) == 1 and common_word(span.text):
                    continue  # "cool people" is not the "Cool" named before
                if span.text.islower() and not c.name.islower() and (
                        span[0].is_stop or span[0].pos_ in _COMMON_WORD_POS
                        or (st.lex.get(c.name) is not None and st.lex.get(c.name).ambiguous)):  # type: ignore[union-attr]
                    continue  # "go" the verb is not the language Go named earlier
                m = Mention(i, j, c.name, source="candidate",
                             existing_id=c.id, aliases=list(c.aliases))
                if c.type and c.type != "entity":
                    m.vote(c.type, 3.0)
                spans.append((0, i, j, m))
                break

    # (b) lexicon (longest match first at each start)
    lex = st.lex
    for i in range(n):
        if doc[i].is_punct and doc[i].text not in ".#":
            continue
        for j in range(min(n, i + lex.max_words), i, -1):
            span = doc[i:j]
            if span[-1].is_punct and j - i > 1 and span[-1].text not in ("#", "+"):
                continue
            e = lex.get(span.text)
            if e is None:
                e = lex.any_case(span.text)
                if e is None or not e.ambiguous or not span.text.islower() or not _lower_tool_slot(st, span):
                    continue
            elif e.ambiguous and not _ambiguous_ok(st, span):
                continue
            if span.text.lower() in PRONOUNS:
                continue
            if len(span) == 1 and e.exact_case and ((i > 0 and doc[i - 1].text == "-" and not doc[i - 1].whitespace_)
                                                     or (j < n and doc[j].text == "-" and not span[0].whitespace_)):
                continue  # "the XLS-R checkpoint": a letter of a hyphenated name, not the language R
            if len(span) == 1 and span.text.islower() and (span[0].lower_ in INTERJECTIONS or span[0].pos_ == "INTJ"
                                                          or (span[0].tag_ == "UH")) and _turn_opening(doc, i):
                continue  # "argh, wasted the day on X": an interjection opening the turn, not a package of that name
            if len(span) == 1 and i > 0 and is_capish(doc[i - 1]) and not doc[i - 1].is_sent_start \
                    and doc[i - 1].pos_ == "PROPN" and lex.get(doc[i - 1].text) is None \
                    and common_word(span.text.lower(), NOUN_ZIPF):
                continue  # "Door Dash": an everyday word inside a longer name is not the product of that name
            if not _cased_evidence(doc, span, e.name) and not (span.text.islower() and _lower_tool_slot(st, span)):
                continue  # "a safe home" is not SAFe; "5K" is not K
            if _counted_noun(doc, span) and ((span.text.islower() and (e.canonical or e.name) != (
                    e.canonical or e.name).lower()) or (common_word(span.text.lower(), NOUN_ZIPF) and (
                    j >= n or doc[j].pos_ not in ("NOUN", "PROPN")))):
                continue  # "something from a storybook": a counted common noun, not the product Storybook
            canonical = e.canonical or e.name  # "k8s" -> Kubernetes, "Postgres" -> PostgreSQL
            m = Mention(i, j, canonical, source="lexicon",
                        aliases=[a for a in (e.name, *e.aliases) if a != canonical], ambiguous=e.ambiguous)
            m.vote(e.type, 0.9 if not e.ambiguous else 0.45)
            if e.source == "packages":
                m.votes[e.type] = 0.6
            spans.append((1, i, j, m))
            break

    # (c) capitalised sequences
    i = 0
    while i < n:
        tok = doc[i]
        if not is_capish(tok) or tok.lower_ in PRONOUNS:
            i += 1
            continue
        if i > 0 and doc[i - 1].like_num and not doc[i - 1].whitespace_:
            i += 1  # "5K", "3D": a unit glued to a number
            continue
        if (tok.lower_ in INTERJECTIONS or _LENGTHENED.search(tok.lower_)) and _turn_opening(doc, i):
            i += 1  # "Yep", "Congrats", "Wow Jo, ...": a word said, not a name
            continue
        if tok.lower_ in ROLE_NOUNS | PROJECT_HEADS and i + 1 < n and is_capish(doc[i + 1]) and not (
                tok.text.istitle() and tok.lower_ not in PROJECT_HEADS and not tok.is_sent_start
                and (i == 0 or doc[i - 1].lower_ not in ("our", "my", "the", "a", "an", "new", "their", "his", "her"))):
            i += 1  # "CTO Elena", "Project Heron": the role/kind word is not part of the name (but "my lead is Dev
            continue  # Okafor": a role word capitalised inside a sentence opens a name)
        j = _extend_caps(doc, i + 1)
        if j - i > 1 and tok.is_sent_start and tok.tag_ in ("VB", "VBG") and tok.pos_ == "VERB":
            i += 1  # "Meet Pickle, ...", "Learning German ...": a verb before the name
            continue
        if j - i > 1 and tok.is_sent_start and tok.is_stop and tok.pos_ in ("CCONJ", "SCONJ", "ADV", "INTJ", "DET",
                                                                           "AUX"):
            i += 1  # "And LeBron is ...", "Does Max ...": a function word opening the sentence
            continue
        span = doc[i:j]
        if j < n and doc[j].text == "-" and not doc[j].whitespace_ and j + 1 < n and doc[j + 1].is_lower:
            i = j  # "Atlassian-free", "React-based": a modifier, not a mention
            continue
        sent_start = tok.is_sent_start or (i > 0 and doc[i - 1].is_punct and doc[i - 1].text in ":!?.")
        if sent_start and j - i == 1 and tok.pos_ not in ("PROPN",) and tok.tag_ not in ("NNP", "NNPS") \
                and not camel(tok.text) \
                and not (tok.dep_ in ("nsubj", "nsubjpass") and not tok.is_stop and _verb_after(doc, j)) \
                and not (tok.dep_ == "compound" and tok.head.i == j and tok.head.pos_ == "VERB"
                         and tok.head.tag_ == "VBZ" and not tok.is_stop) \
                and not (j + 1 < n and doc[j].lower_ == "and" and doc[j + 1].lower_ in ("i", "me")) \
                and not (j + 1 < n and doc[j].text in (",", "(") and doc[j + 1].lower_ in ("my", "our")) \
                and not (j + 1 < n and doc[j].lower_ == "from" and doc[j + 1].pos_ in ("DET", "PROPN", "NOUN")) \
                and not (i > 0 and doc[i - 1].text == ":" and named_for_a_task(doc, i, j)):
            i = j  # (but "Backups: Restic for the laptops": a list of tools and their tasks after a heading)
            continue
        if sent_start and j - i == 1 and tok.lower_ in STOP_CAPS:
            i = j
            continue
        if j - i == 1 and tok.is_stop and tok.is_title and tok.pos_ not in ("PROPN", "NOUN") \
                and not first_name(tok.text):
            i = j  # "Remember Jon, Just do it!": a function word capitalised, no name
            continue
        if st.in_time and any(st.in_time[k] for k in range(i, j)):
            i = j  # "Last Fri", "Next Month": a date phrase, not a name
            continue
        if doc[j - 1].lower_ in ROLE_NOUNS and i > 0 and doc[i - 1].lower_ in ("a", "an", "as"):
            i = j  # "a job as a Financial Analyst": a role written with capitals
            continue
        if j - i == 1 and _counted_noun(doc, span) and not _quoted(doc, i, j) \
                and (j >= n or doc[j].pos_ not in ("NOUN", "PROPN")) \
                and not (j < n and doc[j].lower_ in ("called", "named")) and lex.get(span.text) is None:
            i = j  # "some giant LSP", "a Ferrari": a counted thing, not the one named so (not "a Jetson Orin")
            continue
        m = Mention(i, j, span.text, source="cap")
        if _quoted(doc, i, j):
            m.kind = "work"  # "Becoming Nicole", "Home Alone": a title in quotes names a work
            m.vote(CONCEPT, 1.0)
        if j - i >= 2 and doc[j - 1].lower_ in PLACE_HEADS:
            m.place = True  # "Whispering Falls", "Lake Street Park": a place by its name
        m.addressed = addressed_name(st, i, j)
        if m.addressed:
            m.vote(PERSON, 1.6)  # "Hey Nate, ...", "Thanks for the tip, Caroline."
        elif sent_start and j - i == 1 and not camel(tok.text):
            m.weak = True  # a capital at a sentence start says nothing: the name needs other evidence
        joined = any(t.text in ("&", "'s", "’s", ":") or t.lower_ == "of" for t in span[1:-1])
        spans.append((1 if joined else 2, i, j, m))  # "Marks & Spencer" beats a listed "Marks"
        i = j

    for i in range(n):  # "tally-core", "toml_edit": a lower-case software name (merged into one token)
        cm = _code_name_mention(st, i)
        if cm is not None:
            spans.append((1, i, i + 1, cm))

    for qm in _quoted_titles(doc):
        spans.append((1, qm.start, qm.end, qm))  # a title in quotes is one name: "Pride and Prejudice"
    for lm in _lowercase_named_work(st):
        spans.append((1, lm.start, lm.end, lm))

    for cm2 in _class_subjects(st):
        spans.append((1, cm2.start, cm2.end, cm2))  # "a pottery class": pottery
    for gm in _activity_gerunds(st) + _activity_infinitives(st) + _activities_got_into(st):
        spans.append((1, gm.start, gm.end, gm))  # "I love camping", "I started surfing", "I love to travel"
    # (d) lower-case noun phrases in strong positions
    for chunk in doc.noun_chunks:
        npm = _np_mention(st, chunk)
        if npm is not None:
            spans.append((1 if npm.source == "np-strong" else 3, npm.start, npm.end, npm))

    # a capitalised sequence that extends a known name ("Google Classroom") is one product name, and so is a
    # vendor's name before one of its products ("Firebase Crashlytics": not two tools)
    lex_spans = {(i, j): m for pr, i, j, m in spans if pr == 1 and m.source == "lexicon"}
    for idx, (pr, i, j, m) in enumerate(spans):
        if pr != 2 or j - i < 2:
            continue
        for (li, lj), lm in lex_spans.items():
            if li == i and lj < j and all(doc[k].pos_ == "PROPN" for k in range(lj, j)) \
                    and (lex.get(doc[lj:j].text) is None or doc[li:lj].text.lower() in _PRODUCT_VENDORS):
                product = lex.get(doc[lj:j].text)
                if product is not None:  # "Crashlytics" said later is the same tool
                    m.aliases.append(product.canonical or product.name)
                elif doc[li:lj].text.lower() in _PRODUCT_VENDORS and j - lj == 1:
                    m.aliases.append(doc[lj:j].text)  # "Microsoft Sentinel", later just "Sentinel"
                if doc[j - 1].lower_ in ORG_SUFFIXES:
                    m.vote(ORGANIZATION, 2.0)
                else:
                    m.vote(TOOL, 0.7 if best_type(lm.votes) in ("tool", "organization") else 0.4)
                spans[idx] = (1, i, j, m)
                break
    # resolve overlaps: longer first within priority groups, lexicon/candidate preferred on ties
    spans.sort(key=lambda s: (s[0] > 1, -(s[2] - s[1]), s[0]))
    accepted: list[Mention] = []
    for _, i, j, m in spans:
        if any(st.at[k] != -1 for k in range(i, j)):
            continue
        if st.in_time and m.source != "candidate" and any(st.in_time[k] for k in range(i, j)):
            continue  # a date phrase is no entity
        idx = len(accepted)
        accepted.append(m)
        for k in range(i, j):
            st.at[k] = idx
    # versions kept whole: "Godot 4", "Atlas v2", "Python 3.12" (a tool keeps its plain name as an alias)
    for m in accepted:
        if m.end < n and st.at[m.end] == -1 and (_is_version(doc, m.end) or (
                m.source == "cap" and _YEAR_AFTER_NAME.match(doc[m.end].text) and _is_version(doc, m.end, True))):
            base = doc[m.start:m.end].text
            m.end += 1
            m.name = f"{m.name} {doc[m.end - 1].text}"
            if _best_vote(m) != ORGANIZATION:
                m.aliases = [*m.aliases, base] if _best_vote(m) == TOOL else m.aliases
            st.at[m.end - 1] = accepted.index(m)
    # merge "<known name> <Org suffix>" into an organisation ("Snowflake Inc")
    for m in accepted:
        if m.source in ("lexicon", "cap") and m.end < n and doc[m.end].lower_ in ORG_SUFFIXES \
                and doc[m.end].text[:1].isupper() and st.at[m.end] != -1:
            other = accepted[st.at[m.end]]
            if other.source == "cap" and other.end - other.start == 1:
                m.end = other.end
                m.name = doc[m.start:m.end].text
                m.votes = {"organization": 1.0}
                other.start = other.end = -1
    st.mentions = sorted([m for m in accepted if m.start >= 0], key=lambda m: m.start)
    st.at = [-1] * n
    for idx, m in enumerate(st.mentions):
        for k in range(m.start, m.end):
            st.at[k] = idx
        # trailing possessive is not part of the name
        if m.name.endswith(("'s", "’s")):
            m.name = m.name[:-2]
    return st.mentions


_COMMON_WORD_POS = frozenset({"VERB", "AUX", "ADP", "DET", "PRON", "ADV", "ADJ", "INTJ", "CCONJ", "SCONJ", "PART"})


def _cased_evidence(doc: Any, span: Any, entry_name: str) -> bool:
    """A lexicon match needs proper-noun evidence: an all-lower-case word that the parse reads as a common
    word (an adjective, a verb, ...) does not name a product spelled with capitals ("a safe home" ≠ SAFe), and
    a letter glued to a number ("5K") is a unit, not the language K."""
    first = span[0]
    if first.i > 0 and doc[first.i - 1].like_num and not doc[first.i - 1].whitespace_:
        return False
    if len(span) == 1 and first.is_sent_start and first.is_title and entry_name != first.text \
            and entry_name.lower() == first.lower_ and not entry_name.istitle():
        return False  # "Safe travels!": a word capitalised by its place, not SAFe
    if span.text.islower() and _CAMEL_HUMP.search(entry_name):
        return True  # "wordpress", "whatsapp": a brand glued from two words is no everyday word in lower case
    return not (span.text.islower() and entry_name != entry_name.lower() and first.pos_ in _COMMON_WORD_POS)


_CAMEL_HUMP = re.compile(r"[a-z][A-Z]")
_TOOL_SLOT_PREPS = frozenset({"in", "on", "with", "using", "via"})


def _lower_tool_slot(st: Parse, span: Any) -> bool:
    """A known tool whose name is also a word ("python", "premiere pro"), typed in lower case where only a tool fits:
    the object of "in"/"on"/"with"/"using" under a verb of making or using ("anything new I write in python", "do the
    stats in python"), or coordinated with a tool named in its own case ("python and R")."""
    tok = span.root
    if tok.pos_ not in ("NOUN", "PROPN", "ADJ") or any(
            c.dep_ in ("det", "poss", "nummod") or (c.dep_ == "amod" and c.i < span.start) for c in tok.children):
        return False  # "a python", "my rusty bucket"
    for other in [*tok.conjuncts]:
        e = st.lex.get(other.text)
        if e is not None and e.type == TOOL and other.text != other.lower_:
            return True
    if tok.dep_ != "pobj" or tok.head.lower_ not in _TOOL_SLOT_PREPS:
        return False
    gov = tok.head.head
    for _ in range(3):  # "do [most of the analysis] in python": climb over the object's nouns to the verb
        if gov.pos_ in ("VERB", "AUX") or gov.dep_ == "ROOT":
            break
        gov = gov.head
    return gov.pos_ == "VERB" and gov.lemma_.lower() in TOOL_SLOT_VERBS


_COUNTING_DETS = frozenset({"a", "an", "another", "every", "each", "some", "any", "no"})


def _counted_noun(doc: Any, span: Any) -> bool:
    """A lower-case word counted by an article or quantifier ("a storybook", "another notion", "every slack
    moment"): a common noun; product names are not counted."""
    k = span[0].i - 1
    while k >= 0 and doc[k].pos_ == "ADJ":
        k -= 1
    return k >= 0 and doc[k].lower_ in _COUNTING_DETS


_LENGTHENED = re.compile(r"([a-z])\1\1")  # "Sooo", "Awww", "Yesss": a word stretched for feeling


_QUOTES = frozenset({'"', "“", "”", "'", "‘", "’"})


def _quoted(doc: Any, i: int, j: int) -> bool:
    """The capitalised span sits inside quotes, alone or after a leading article ("The Santa Clause")."""
    k = i - 1
    if k >= 0 and doc[k].lower_ in ("the", "a", "an") and doc[k].text[:1].isupper():
        k -= 1
    return k >= 0 and doc[k].text in _QUOTES and j < len(doc) and doc[j].text in _QUOTES


_TITLE_SMALL = frozenset({"a", "an", "and", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to",
                          "with", "&", ":", "-", "'s", "’s"})


def _quoted_titles(doc: Any) -> list[Mention]:
    """Title-case spans inside quotes ("Pride and Prejudice", "A Dance with Dragons"): one work each."""
    out = []
    n = len(doc)
    k = 0
    while k < n:
        if doc[k].text not in _QUOTES:
            k += 1
            continue
        close = next((c for c in range(k + 1, min(n, k + 12)) if doc[c].text in _QUOTES), None)
        if close is None or close == k + 1:
            k += 1
            continue
        inner = doc[k + 1:close]
        words = [t for t in inner if t.text not in _TITLE_SMALL]
        if inner[0].text[:1].isupper() and words and all(t.text[:1].isupper() or t.like_num for t in words) \
                and inner[-1].text not in _TITLE_SMALL:
            m = Mention(k + 1, close, inner.text, source="cap", kind="work")
            m.vote(CONCEPT, 1.0)
            out.append(m)
        k = close + 1
    return out


def _verb_after(doc: Any, k: int) -> bool:
    """A verb at ``k``, or after one or two lower-case adverbs there ("Eliza still uses X")."""
    k = after_adverbs(doc, k)
    return k < len(doc) and doc[k].pos_ in ("VERB", "AUX")


def _turn_opening(doc: Any, i: int) -> bool:
    """Token ``i`` opens its sentence, or follows only greetings, interjections and commas there."""
    k = i - 1
    while k >= 0 and not doc[k + 1].is_sent_start and (
            doc[k].lower_ in GREETING_WORDS | INTERJECTIONS or doc[k].text in (",", "!", "-", "…", "...")):
        k -= 1
    return k < 0 or doc[k + 1].is_sent_start or doc[k].text in (".", "!", "?", ":", "\n")


def addressed_name(st: Parse, i: int, j: int) -> bool:
    """A name said to the listener: after greetings at a sentence start ("Hey Nate,", "Thanks, Mel!") or
    set off by a comma at a sentence end ("Thanks for the tip, Caroline.")."""
    doc = st.doc
    n = len(doc)
    if j - i > 2 or st.lex.get(doc[i:j].text) is not None or doc[i].lower_ in INTERJECTIONS | GREETING_WORDS:
        return False  # "Take care, OK?", "Aww, bummer!": words said, not names
    after = doc[j] if j < n else None
    closes = after is None or after.text in (",", "!", ".", "?", "...", "…", "-", "—", ":", ")") or after.is_space
    if not closes:
        return False
    lead = [t for t in doc[doc[i].sent.start:i]]
    if lead and lead[0].lower_ in GREETING_WORDS and all(
            t.lower_ in GREETING_WORDS | INTERJECTIONS | {"you", "so", "much", "for", "again"} or t.text in (",", "!")
            for t in lead):
        return True
    final = after is None or after.text in ("!", ".", "?", "...", "…") or after.is_space
    sent = doc[i].sent
    talking_to = any(t.lower_ in ("you", "your", "thanks", "thank", "congrats") for t in sent)
    appositive = any(t.lower_ in ("his", "her", "their", "its", "own", "called", "named", "my", "our")
                     for t in doc[max(0, i - 5):i]) \
        or (i >= 2 and doc[i - 2].lower_ in ROLE_NOUNS | PEOPLE_NOUNS)  # "we hired a new designer, Noor."
    return final and i >= 2 and doc[i - 1].text == "," and st.at[i - 2] == -1 and (j - i == 1 or talking_to) \
        and not appositive and doc[i - 2].lower_ not in ("and", "or") and not doc[i - 2].is_punct \
        and not is_capish(doc[i - 2])


_VERSION = re.compile(r"^(v\d+(\.\d+)*|\d+(\.\d+)+|\d{1,2})$", re.I)
_YEAR_AFTER_NAME = re.compile(r"^\d{4}$")
_UNITS = frozenset({"km", "kms", "k", "mi", "mile", "miles", "kg", "kgs", "lb", "lbs", "mins", "min", "hrs", "hr", "h",
                    "secs", "sec", "s", "ms", "m", "metres", "meters", "litres", "liters", "l", "gb", "mb", "tb",
                    "x", "%", "pounds", "quid", "grand", "stone", "st"})
_COUNTED = frozenset({"week", "weeks", "day", "days", "month", "months", "year", "years", "hour", "hours", "time",
                      "times", "people", "minute", "minutes", "%", "k", "m"})


def _is_version(doc: Any, k: int, year: bool = False) -> bool:
    """A version right after a name: "4" in "Godot 4", "v2", "3.12" (not "2 weeks", not a year unless ``year``:
    a year-like number written right after a capitalised name is part of it, "Cyberpunk 2077")."""
    t = doc[k]
    if not (year or _VERSION.match(t.text)) or (t.whitespace_ == "" and k + 1 < len(doc) and doc[k + 1].is_alpha):
        return False
    nxt = doc[k + 1] if k + 1 < len(doc) else None
    if re.match(r"^v\d+(\.\d+)*$", t.text, re.I) or (re.match(r"^\d+(\.\d+)+$", t.text) and not (
            nxt is not None and (nxt.lower_ in _COUNTED or nxt.lower_ in _UNITS))):
        return True  # "the Buoy v3 board", "a Python 3.12 runtime": no count (but "TikTok 2.5 hours a day")
    return not (nxt is not None and (nxt.lower_ in _COUNTED or nxt.pos_ == "NOUN"))


def _best_vote(m: Mention) -> str:
    return max(m.votes.items(), key=lambda kv: kv[1])[0] if m.votes else ""


def _lowercase_named_work(st: Parse) -> list[Mention]:
    """Lower-case names given a work-item appositive: "I maintain quill, a Rust crate for ..." → project."""
    out = []
    doc = st.doc
    for t in doc:
        if not t.is_lower or not t.is_alpha or t.is_stop or len(t) < 3 or t.pos_ not in ("NOUN", "PROPN", "X", "ADJ"):
            continue
        if any(c.dep_ in ("det", "poss", "amod", "compound") for c in t.children):
            continue
        if t.i + 2 >= len(doc) or doc[t.i + 1].text != ",":
            continue
        k = t.i + 2
        while k < len(doc) and k < t.i + 8 and doc[k].pos_ in ("DET", "PRON", "ADJ", "NOUN", "PROPN", "NUM") \
                and doc[k].lower_ not in PROJECT_APPOS_HEADS:
            k += 1
        if k < len(doc) and doc[k].lower_ in PROJECT_APPOS_HEADS and doc[t.i + 2].pos_ in ("DET", "PRON"):
            m = Mention(t.i, t.i + 1, t.text, source="np-strong")
            m.vote(PROJECT, 1.2)
            m.owned = any(x.lower_ in ("my", "our") for x in doc[t.i + 2:k]) or any(
                x.lower_ in ("i", "we") and x.dep_ == "nsubj" for x in doc[t.sent.start:t.i])
            out.append(m)
    return out


def _ambiguous_ok(st: Parse, span: Any) -> bool:
    first = span[0]
    if not first.text[:1].isupper() and not camel(first.text):
        return False
    if first.is_sent_start and first.pos_ in ("VERB", "AUX", "ADV", "ADJ", "INTJ", "PRON", "DET", "ADP"):
        return False
    # "Go ahead", "Make sure": verbs at clause start
    return not (len(span) == 1 and first.pos_ == "VERB" and first.dep_ in ("ROOT", "conj", "xcomp"))


def _extend_caps(doc: Any, j: int) -> int:
    """End of a capitalised name starting before ``j``: through "'s <Org word>" ("St. Mary's Hospital"),
    "<Org word> of <Name>" ("University of Leeds"), "&" ("Marks & Spencer") and a hyphen between capitalised
    words ("Lopez-Ruiz")."""
    n = len(doc)
    start = j - 1
    while j < n:
        t = doc[j]
        if is_capish(t) and t.lower_ not in PRONOUNS and doc[j - 1].text not in {"'s", "’s"} \
                and t.lower_ not in STOP_CAPS:
            j += 1
            continue
        nxt = doc[j + 1] if j + 1 < n else None
        if t.lower_ == "of" and nxt is not None and nxt.lower_ == "the" and j + 2 < n and is_capish(doc[j + 2]) \
                and doc[j + 2].lower_ not in PRONOUNS and doc[j - 1].lower_ not in ROLE_NOUNS:
            j += 3  # "Lord of the Rings", "The Name of the Wind": a title is one name, not "Lord" and "Rings"
            continue
        if nxt is None or not is_capish(nxt) or nxt.lower_ in PRONOUNS or nxt.lower_ in STOP_CAPS:
            break
        if t.text in ("'s", "’s") and nxt.lower_ in ORG_SUFFIXES and (j + 2 >= n or not is_capish(doc[j + 2])):
            j += 2
            continue
        if t.text in ("'s", "’s") and any(x.text in ("St", "St.", "Saint") for x in doc[max(0, start - 2):start + 1]):
            j += 2  # "St Aidan's Primary", "St Brendan's Community Hall": a saint's name opens the whole name
            continue
        if t.lower_ == "of" and doc[j - 1].lower_ in ORG_OF_HEADS:
            j += 2
            continue
        if t.lower_ == "of" and doc[j - 1].lower_ not in ROLE_NOUNS:
            j += 2  # "Cliffs of Moher", "House of Blues": one name, not two
            continue
        if t.text == ":" and not doc[j - 1].whitespace_ and j + 1 < n and nxt.text[:1].isupper() \
                and nxt.is_alpha and nxt.lower_ not in PRONOUNS and (not t.whitespace_ or j - start >= 2):
            j += 2  # "Monster Hunter: World", "CS:GO": a subtitle is part of the title (not "iOS: SwiftUI")
            continue
        if t.text == "&":
            j += 2
            continue
        if t.text in ("'", "’") and not doc[j - 1].whitespace_ and doc[j - 1].lower_.endswith("s") \
                and is_capish(doc[j - 1]) and nxt.text[:1].isupper() and nxt.is_alpha:
            j += 2  # "Landworkers' Alliance", "the Writers' Guild": a plural possessive inside one name
            continue
        if t.text == "-" and not doc[j - 1].whitespace_ and not t.whitespace_ and is_capish(doc[j - 1]) \
                and nxt.text[:1].isupper() and nxt.is_alpha:
            j += 2  # "Ana Lopez-Ruiz", "Jean-Luc Moreau": a hyphenated name is one name
            continue
        break
    return j


def _quality_adjective(t: Any) -> bool:
    """An adjective that praises or describes rather than classifies ("a supportive team", "a helpful group",
    "an amazing crew"): it names no particular group."""
    low = t.lower_
    return low in EVALUATIVE_ADJ or low in GENERIC_ADJ or low.endswith(QUALITY_ADJ_SUFFIXES)


_BUILD_VERBS = frozenset({"make", "build", "create", "design", "develop", "code"})  # "making my first game"
_MAKE_VERBS = frozenset({"work", "write", "paint", "draw", "knit", "sew", "build", "make", "start", "edit", "draft",
                         "record", "compose", "film", "shoot", "bake", "design", "plan", "create"})


def _generic_np(toks: list[Any]) -> bool:
    """A noun phrase that names no particular thing: "a new hobby", "my kids", "different types"."""
    content = [t for t in toks if t.lower_ not in GENERIC_ADJ and t.pos_ != "ADJ"]
    return not content or all(t.lower_ in GENERIC_NOUNS | PEOPLE_NOUNS | PET_NOUNS for t in content)


def _interest_cue(chunk: Any, gword: str, prep: str) -> bool:
    """The noun phrase is what someone is into: "interested in X", "all about X", "getting into X"."""
    root = chunk.root
    owner = root.head.head if root.dep_ == "pobj" else root.head
    if any(c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in owner.children):
        return False  # "your love for dancing", "his passion for X": not the speaker's taste
    if (gword, prep) in INTEREST_PAIRS:
        return True
    if prep == "into" and gword == "be":
        return True  # "I'm into hiking"
    if prep == "into" and gword == "get":  # "I've been getting into pottery" (not "we got into an accident")
        verb = root.head.head
        return verb.tag_ == "VBG" or any(c.lower_ in ("'ve", "have", "has", "'s") for c in verb.children)
    if prep in ("about", "in", "on", "with", "of", "for") and root.dep_ == "pobj":
        word = root.head.head  # "hooked on": the word the preposition hangs from
        before = root.doc[root.head.i - 1] if root.head.i > 0 else word  # "all about": the word before it
        return (word.lower_, prep) in INTEREST_PAIRS or (before.lower_, prep) in INTEREST_PAIRS
    return False


# verbs whose definite object with a work-item head is the subject's work: "rebuilding the intake dashboard"
_OWNER_VERBS = frozenset({
    "maintain", "own", "lead", "build", "rewrite", "launch", "ship", "run", "start", "manage", "take", "inherit",
    "finish", "design", "write", "draft", "create", "rebuild", "redesign", "rework", "revamp", "refactor",
    "overhaul", "develop", "prototype", "polish", "port", "edit", "produce", "coordinate", "organise", "organize",
    "plan", "update", "revise", "co-write", "co-author", "co-lead", "co-maintain", "co-run", "oversee", "supervise",
    "spearhead", "head", "steer"})
# (word, preposition) of being answerable for a work item: "in charge of X", "responsible for X"
_CHARGE_OF_PAIRS = frozenset({("charge", "of"), ("responsible", "for"), ("accountable", "for")})
# words "on" follows for the work one is busy with: "heads-down on X", "focused on X", "busy on X"
_ON_WORK_WORDS = frozenset({"be", "focus", "down", "busy", "concentrate", "crunch", "grind"})


_CODE_NAME_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "appos", "attr", "conj", "oprd", "compound",
                             "npadvmod", "dep", "ROOT"})


def _code_name_mention(st: Parse, i: int) -> Mention | None:
    """A lower-case hyphenated or underscored software name in a noun's place ("a module called tally-core",
    "the Go bindings, quill-go, ...", "we depend on fern-utils"): a tool, or the speaker's project where it names
    a module, a library or bindings of theirs."""
    tok = st.doc[i]
    if not code_name(tok.text) or tok.dep_ not in _CODE_NAME_DEPS or tok.pos_ in ("ADJ", "ADV", "VERB") \
            or st.lex.get(tok.text) is not None:
        return None
    if any((c.dep_ == "det" and c.lower_ in _COUNTING_DETS) or c.dep_ in ("amod", "advmod") for c in tok.children) \
            or (i > 0 and st.doc[i - 1].pos_ == "ADV") or (i > 1 and st.doc[i - 1].lower_ == "the"
                                                             and st.doc[i - 2].lower_ in ("quite", "such", "rather")):
        return None  # "a natural soul-soother", "kinda nerve-wracking", "quite the go-getter": an English compound
    m = Mention(i, i + 1, tok.text, source="np-strong")
    holder = tok.head if tok.dep_ in ("appos", "oprd") else None
    if tok.dep_ == "oprd" or (i > 0 and st.doc[i - 1].lower_ in ("called", "named")):
        holder = tok.head.head if tok.head.lower_ in ("called", "named") else tok.head
    if holder is not None and holder.lemma_.lower() in CODE_NAME_HOLDERS | WORK_ITEM_HEADS:
        m.vote(PROJECT, 0.9)
    else:
        m.vote(TOOL, 0.7)
    return m


def _named_work_item(st: Parse, toks: list[Any], head: Any) -> bool:
    """"Maple Road expansion", "Northgate Plan review", "KX-9 wheat trials": a name opening with a capital (no known
    tool or organisation) and ending in a lower-case work-item head (not a made thing such as "a Gryffindor scarf")."""
    if len(toks) < 2 or toks[-1].i != head.i or not head.is_lower or head.lower_ not in WORK_ITEM_HEADS \
            or head.lower_ in WORK_OF_HEADS:
        return False  # "that Finals game", "the Expanse series": a work one watches, not one's project
    if not toks[0].text[:1].isupper() or not all(t.dep_ in ("compound", "amod", "nmod") for t in toks[:-1]):
        return False
    caps = [t for t in toks[:-1] if t.text[:1].isupper()]
    return st.lex.get(" ".join(t.text for t in caps)) is None and not any(st.lex.get(t.text) for t in caps)


def _capped_work_item(toks: list[Any], head: Any) -> bool:
    """"the ICU discharge checklist", "the iOS onboarding flow": a work item whose name opens with a capitalised
    word, then a lower-case noun, then a work-item head."""
    if len(toks) < 3 or toks[-1].i != head.i or head.lower_ not in WORK_ITEM_HEADS:
        return False
    before = toks[-2]
    if not (before.is_lower and before.pos_ == "NOUN" and before.dep_ == "compound"):
        return False
    caps = [t for t in toks[:-2] if t.text[:1].isupper() or t.text[:2].isupper() or not t.is_lower]
    return bool(caps) and all(t.dep_ in ("compound", "amod", "nmod") for t in toks[:-1])


_GERUND_BLOCKERS = frozenset({"dobj", "attr", "ccomp", "xcomp", "acomp", "oprd", "dative", "prt", "nsubj", "advcl",
                              "aux", "auxpass", "neg", "conj", "det", "poss", "amod", "compound"})
_GERUND_PREPS = frozenset({"with", "in", "at", "on", "around", "outdoors", "outside",
                           "over", "during", "since", "after", "before", "until"})  # where or when, no object


def _gerund_of(verb: Any) -> str | None:
    """The pastime a bare verb names, as its gerund: "travel" → traveling, "hike" → hiking, "swim" → swimming."""
    lem = verb.lemma_.lower()
    for form in (lem + "ing", lem[:-1] + "ing", lem + lem[-1:] + "ing"):
        if form in PASTIMES:
            return form
    return None


def _activity_infinitives(st: Parse) -> list[Mention]:
    """A pastime the speaker loves to do: "I love to travel", "we enjoy to hike" (the concept is named by its
    gerund, "traveling"); not "I'd love to travel" (a wish: the clause is a plan) nor "love to travel there"."""
    out = []
    for t in st.doc:
        if t.tag_ != "VB" or t.dep_ != "xcomp" or not t.is_lower or t.head.lemma_.lower() not in _TASTE_VERBS:
            continue
        if not any(c.dep_ == "aux" and c.lower_ == "to" for c in t.children) \
                or any(c.dep_ not in ("aux", "punct") for c in t.children):
            continue
        if not any(c.dep_ == "nsubj" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in t.head.children):
            continue
        name = _gerund_of(t)
        if name is not None:
            m = Mention(t.i, t.i + 1, name, source="np")
            m.vote(CONCEPT, 1.0)
            out.append(m)
    return out


def _activity_gerunds(st: Parse) -> list[Mention]:
    """An activity named by a bare gerund that the speaker loves or took up: "I love camping (with my cousins)",
    "I started surfing", "we enjoy gardening" (not "I love being ...", "I love finding new spots": a light verb,
    or one with an object, names no activity)."""
    out = []
    for t in st.doc:
        pastime = t.tag_ == "VBG" and t.dep_ in ("ROOT", "conj", "ccomp") and t.lower_ in PASTIMES and t.is_lower
        gerund = (t.tag_ == "VBG" or (t.tag_ == "NN" and t.lower_.endswith("ing"))) and t.dep_ in ("xcomp", "dobj") \
            and t.is_lower and t.is_alpha and t.lower_ not in LIGHT_GERUNDS and len(t) >= 5
        if not (pastime or gerund):
            continue  # ("I've been knitting": a pastime as the verb itself, checked below)
        verb = t.head
        lem = verb.lemma_.lower()
        been = any(c.dep_ == "aux" and c.lower_ == "been" for c in t.children)
        if t.tag_ == "VBG" and t.lower_ in PASTIMES and been and not any(
                (c.dep_ == "dobj" and c.lower_ not in ("lot", "bit", "ton")) or c.dep_ in ("prt", "ccomp", "xcomp")
                for c in t.children):
            m = Mention(t.i, t.i + 1, t.text, source="np")  # "I've been knitting a lot lately"
            m.vote(CONCEPT, 1.0)
            out.append(m)
            continue
        if not (lem in PREFER_VERBS or takes_up(verb)):
            continue
        if not any(c.dep_ == "nsubj" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in verb.children):
            continue
        if any(c.dep_ in _GERUND_BLOCKERS or (c.dep_ == "prep" and c.lower_ not in _GERUND_PREPS)
               for c in t.children):
            continue
        m = Mention(t.i, t.i + 1, t.text, source="np")
        m.vote(CONCEPT, 1.0)
        out.append(m)
    return out


def _activities_got_into(st: Parse) -> list[Mention]:
    """An activity the speaker got into, named by a gerund (with its compounds): "I got into rock climbing",
    "we're getting into birdwatching" (not "got into an accident", "got into trouble": no activity)."""
    out = []
    for t in st.doc:
        if t.dep_ not in ("pobj", "pcomp") or t.head.lower_ != "into" or t.head.head.lemma_.lower() != "get" \
                or not t.is_lower or not t.is_alpha or t.lower_ in LIGHT_GERUNDS or not (
                    t.tag_ == "VBG" or (t.tag_ == "NN" and t.lower_.endswith("ing") and len(t) >= 6)):
            continue
        if any(c.dep_ in ("dobj", "det", "poss", "prep", "ccomp", "xcomp") for c in t.children):
            continue  # "getting into making bread", "got into the swing of it"
        if not any(c.dep_ == "nsubj" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in t.head.head.children):
            continue
        start = t.i
        while start - 1 >= 0 and st.doc[start - 1].dep_ in ("compound", "amod", "npadvmod") \
                and st.doc[start - 1].head.i == t.i and st.doc[start - 1].is_lower and st.doc[start - 1].is_alpha:
            start -= 1  # "rock climbing", "salsa dancing"
        m = Mention(start, t.i + 1, st.doc[start:t.i + 1].text, source="np")
        m.vote(CONCEPT, 1.0)
        out.append(m)
    return out


_TASTE_VERBS = frozenset({"love", "adore", "enjoy"})  # not "prefer dark mode designs": a choice among options
_SIGNING_UP = frozenset({"sign", "enroll", "enrol", "register"})
_PRODUCT_VENDORS = word_class("product_vendors")  # "Firebase Crashlytics", "Google Firebase"
_GOING = word_class("class_going_verbs")  # "I went to a yoga class"
_IN_CLASS = word_class("in_class_nouns")  # "I made it in ceramics class", "at salsa class"
_NOT_THE_PUPILS = word_class("not_pupil_verbs")  # "took my kids to ...", "she teaches at ..."


def _class_subjects(st: Parse) -> list[Mention]:
    """What a class teaches: "a pottery class", "a creative writing course" → "pottery", "creative writing" (the
    words before the class noun, without time words or praise: "a weekend yoga class" → "yoga")."""
    out = []
    skip = set(TIME_WORDS["units"]) | GENERIC_ADJ | EVALUATIVE_ADJ
    for t in st.doc:
        if t.lower_ not in CLASS_NOUNS or t.pos_ != "NOUN":
            continue
        taken = t.dep_ == "dobj" and t.head.lemma_.lower() in CLASS_TAKING_VERBS
        signed = t.dep_ == "pobj" and t.head.lower_ in ("for", "in") and t.head.head.lemma_.lower() in _SIGNING_UP
        gone = t.dep_ == "pobj" and t.head.lower_ == "to" and t.head.head.lemma_.lower() in _GOING \
            and not t.lower_.startswith("workshop")  # "went to a car workshop": a garage, maybe
        verb = t.head.head if t.head.head.dep_ != "dobj" else t.head.head.head  # "made a bowl in ... class"
        inside = t.dep_ == "pobj" and t.head.lower_ in ("in", "at") and t.lower_ in _IN_CLASS \
            and verb.pos_ == "VERB" and verb.lemma_.lower() not in _NOT_THE_PUPILS \
            and not any(c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in t.children)
        if not (taken or signed or gone or inside):
            continue  # "took my son to a cooking class", "she teaches at a dance class": not the speaker's class
        k = t.i - 1
        while k >= 0 and st.doc[k].head.i in range(k + 1, t.i + 1) and st.doc[k].dep_ in ("compound", "amod", "nmod") \
                and st.doc[k].is_lower and st.doc[k].is_alpha and st.doc[k].lower_ not in skip:
            k -= 1
        if k + 1 < t.i:
            m = Mention(k + 1, t.i, st.doc[k + 1:t.i].text, source="np")
            m.vote(CONCEPT, 1.0)
            out.append(m)
    return out


def _np_mention(st: Parse, chunk: Any) -> Mention | None:
    """Lower-case noun phrases that name teams, projects or concepts."""
    toks = [t for t in chunk if t.pos_ not in ("DET", "PRON", "PUNCT", "NUM") and t.dep_ != "poss"
            and t.tag_ != "POS"]
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
    text = st.doc[start:end].text
    hl = head.lower_
    after = st.doc[chunk.end] if chunk.end < len(st.doc) else None
    if after is not None and after.lower_ in ("called", "named", "codenamed", "dubbed"):
        return None  # "a side project named Quill": the name that follows is the entity
    # "the platform team", "the data science team" → organisation
    joined = (head.dep_ == "dobj" and head.head.lemma_.lower() == "join") or joined_by_speaker(head)
    if joined and hl in COMMUNITY_HEADS and head.is_lower and all(t.pos_ == "ADJ" and t.is_lower for t in mods) \
            and not any(t.dep_ == "poss" for t in chunk):
        m = Mention(head.i, head.i + 1, head.text, source="np")
        m.vote(ORGANIZATION, 1.0)  # "I joined a choir", "we joined a local gym": a group, though it has no name
        return m
    # "I joined a hiking club", "the knitting circle we joined"
    if (hl in TEAM_HEADS or (hl in GROUP_HEADS | JOINABLE_HEADS | COMMUNITY_HEADS and joined and all(
            (t.pos_ == "NOUN" or t.lower_ in PASTIMES) and t.is_lower for t in mods))) \
            and mods and any(t.pos_ in ("NOUN", "PROPN") or t.text[:1].isupper() or (joined and t.lower_ in PASTIMES)
                             or (t.pos_ == "ADJ" and t.lower_ not in GENERIC_ADJ and not _quality_adjective(t))
                             for t in mods):
        known = st.lex.get(st.doc[start:head.i].text)
        if known is not None and known.type == ORGANIZATION:
            return None
        m = Mention(start, end, text, source="np-strong")
        m.vote(ORGANIZATION, 1.2)
        return m
    # "the Maple Road expansion", "the KX-9 wheat trials": a capitalised name before a work-item head, as the object
    # of a verb or preposition, is one project (not the place or code it opens with)
    if _named_work_item(st, toks, head) and chunk_governor(chunk) is not None:
        m = Mention(start, end, text, source="np-strong", aliases=[st.doc[start:head.i].text])
        m.vote(PROJECT, 1.2)
        return m
    # "the search revamp project" → project (a capitalised "Orion project" is a cap mention)
    if hl in PROJECT_HEADS and mods and not any(t.text[:1].isupper() for t in mods) and not _generic_np(toks) \
            and all(t.pos_ in ("NOUN", "ADJ", "PROPN", "VERB") for t in mods):
        m = Mention(start, end, text, source="np-strong",
                     aliases=[st.doc[start:head.i].text])
        m.vote(PROJECT, 1.2)
        return m
    # cue positions for concepts and work items
    gov = chunk_governor(chunk)
    if gov is None:
        return None
    gword, prep = gov
    capped_work = _capped_work_item(toks, head)
    if any(t.text[:1].isupper() and t.lower_ not in GENERIC_CAPS for t in toks) \
            and not any(t.lower_ in CONCEPT_HEADS for t in toks[-1:]) and not capped_work:
        return None
    if _interest_cue(chunk, gword, prep) and head.pos_ in ("NOUN", "PROPN", "VERB") and not any(
            t.text[:1].isupper() for t in toks) and not _generic_np(toks):
        m = Mention(start, end, text, source="np")
        m.vote(CONCEPT, 1.0)  # "I'm all about romcoms", "getting into pottery", "interested in marine life"
        return m
    if prep == "" and gword in _TASTE_VERBS and head.dep_ == "dobj" and head.pos_ == "NOUN" and head.is_lower \
            and not any(t.dep_ in ("det", "poss") or t.lower_ in PRONOUNS | LIGHT_GERUNDS or t.tag_ in ("VBG", "VBN")
                        for t in chunk) \
            and not _generic_np(toks) \
            and any(c.dep_ == "nsubj" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in head.head.children) \
            and not any(c.dep_ in ("relcl", "acl", "prep") for c in head.children):
        m = Mention(start, end, text, source="np")
        m.vote(CONCEPT, 1.0)  # "I love live music", "we adore ginger snaps": a taste, no particular thing
        return m
    if prep == "" and gword == "do" and head.dep_ == "dobj" and hl in PASTIMES and head.is_lower and not mods \
            and head.head.tag_ in ("VBP", "VBZ") and not any(t.dep_ in ("det", "poss") for t in chunk):
        m = Mention(head.i, head.i + 1, head.text, source="np")
        m.vote(CONCEPT, 1.0)  # "I do yoga", "we do pottery on Sundays": a pastime practised
        return m
    if prep == "" and gword in INSTRUMENT_VERBS and head.dep_ == "dobj" \
            and hl in INSTRUMENTS and not any(t.dep_ == "poss" and t.lower_ not in ("my", "our") for t in chunk):
        m = Mention(head.i, head.i + 1, head.text, source="np")
        m.vote(CONCEPT, 1.0)  # "I play the cello", "learning the piano": an instrument played
        return m
    if (prep in ("in", "of") and gword in {"believer", "fan", "advocate", "proponent", "champion"}) \
            or (prep == "" and gword in {"follow", "practice", "practise", "embrace", "apply"}) \
            or (prep == "about" and gword in {"lot", "know", "learn", "read", "expert"}) \
            or (prep == "in" and gword in {"expert", "interested", "experienced", "specialist"}):
        if len(toks) >= 1 and head.pos_ in ("NOUN", "PROPN") and (mods or hl in CONCEPT_HEADS
                                                                 or head.tag_ in ("NNS",)):
            m = Mention(start, end, text, source="np")
            m.vote(CONCEPT, 0.9)
            return m
        return None
    definite = any(t.lower_ in ("the", "our", "my", "this") for t in chunk)
    mine = any(t.lower_ in ("my", "our") for t in chunk)
    if ((hl in CREATIVE_HEADS and gword in FINISH_VERBS | _MAKE_VERBS)
            or (hl in WORK_NOUNS and gword in _BUILD_VERBS)) \
            and head.pos_ == "NOUN" and mine \
            and (prep == "" or (prep == "on" and gword == "work")) and not _generic_np(toks):
        m = Mention(start, end, text, source="np")  # "my screenplay", "finished the quilt": a personal project
        m.vote(PROJECT, 1.0)
        m.owned = mine
        return m
    own = [t for t in chunk if t.lower_ == "own" and t.head.i == head.i]
    if head.pos_ == "NOUN" and head.is_lower and any(c.dep_ == "poss" and c.lower_ in ("my", "our")
                                                     for c in head.children) \
            and ((hl in OWN_WORK_NOUNS and all(t.lower_ in EDITION_WORDS for t in mods) and not own)
                 or (own and hl in CREATIVE_HEADS | WORK_NOUNS | OWN_WORK_NOUNS)):
        first = own[0].i + 1 if own else start  # "my own cooking show" is a cooking show
        m = Mention(first, end, st.doc[first:end].text, source="np")  # "for my album": one's own work
        m.vote(PROJECT, 1.0)
        return m
    nxt = st.doc[chunk.end] if chunk.end < len(st.doc) else None
    if nxt is not None and nxt.lower_ in ("called", "named", "codenamed", ","):
        return None
    if capped_work and not (((gword in _OWNER_VERBS and prep == "") or (gword, prep) in _CHARGE_OF_PAIRS) and definite):
        return None  # "the ICU discharge checklist" only as the object of a making verb
    if ((prep == "on" and gword in WORK_VERBS | COLLAB_VERBS | _ON_WORK_WORDS)
            or (prep == "" and (definite or sum(t.dep_ == "compound" for t in mods) >= 2) and gword in _OWNER_VERBS)
            or ((gword, prep) in _CHARGE_OF_PAIRS and definite)) \
            and hl in WORK_ITEM_HEADS and mods \
            and all(t.pos_ in ("NOUN", "ADJ", "PROPN", "VERB") for t in mods):
        m = Mention(start, end, text, source="np")
        m.vote(PROJECT, 0.9)
        return m
    return None
