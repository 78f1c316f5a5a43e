"""Stage 4, relation typing: objects of each clause related to its subject by verb class and preposition."""

from __future__ import annotations

import re
from typing import Any

from loregraph.extract.base import SPEAKER
from loregraph.extract.local.endings import (
    LeftOrg,
    MovedOrg,
    MovedProject,
    NewRole,
    PersonLeft,
    speaker_names,
    speaker_org_names,
)
from loregraph.extract.local.kinds import (
    CONCEPT,
    DECIDED,
    DEPENDS_ON,
    ENTITY,
    KNOWS,
    ORGANIZATION,
    PART_OF,
    PERSON,
    PREFERS,
    PROJECT,
    RELATED_TO,
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
    controller,
    gov_lemma,
    is_team,
    joined_by_speaker,
    lemma,
    moves_a_thing,
    prep_before,
    resolve_it,
    unit_of,
)
from loregraph.extract.local.words import (
    ACQUIRING_VERBS,
    COLLAB_VERBS,
    CONSUMING_VERBS,
    DECIDE_VERBS,
    DEPEND_VERBS,
    DONE_MARKERS,
    ENDED_MARKERS,
    FINISH_VERBS,
    FOND_OF,
    FOND_OF_PAIRS,
    FRIEND_ROLES,
    GROUP_HEADS,
    GROUP_RUNNING_VERBS,
    INTEREST_PAIRS,
    KNOW_VERBS,
    LEAVE_VERBS,
    MEMBERSHIP_WORDS,
    NON_USE_VERBS,
    ORG_NOUNS,
    OWN_WORK_NOUNS,
    PASTIME_GROUP_HEADS,
    PET_NOUNS,
    PREFER_VERBS,
    PROJECT_APPOS_HEADS,
    PROJECT_HEADS,
    ROLE_NOUNS,
    SPEAKER_WORDS,
    SWITCH_VERBS,
    TEAM_HEADS,
    TOOL_HEADS,
    USE_IMPLYING_PAIRS,
    USE_VERBS,
    VERDICT_WORDS,
    WE_WORDS,
    WORK_ITEM_HEADS,
    WORK_THINGS,
    WORK_VERBS,
    first_name,
    takes_up,
    word_class,
)


def relate(st: Parse, cl: Clause, prev: Clause | None) -> None:
    doc = st.doc
    st.out.clause_we = any(t.lower_ in ("we", "our", "us") for t in doc[cl.start:cl.end])
    ms = [m for m in clause_mentions(st, cl) if m.type]
    subj_ids = {id(s) for s in cl.subj if s is not SPEAKER}
    objs = [m for m in ms if id(m) not in subj_ids]
    # "it" objects resolved to the last project ("we deploy it on Kubernetes")
    it_obj: Mention | None = None
    for t in doc[cl.start:cl.end]:
        if t.lower_ == "it" and t.dep_ in ("dobj", "pobj") and st.at[t.i] == -1:
            it_obj = resolve_it(st, t.i)
    # a subject mention's own modifiers: "Marta from Northwind Labs"; a person named on the copula's other side too
    # ("our vet is Siân Morgan at Usk Valley Vets")
    # an object only with "from", and not in a one-off past ("co-running it with Abi from Harbourside Housing"; not
    # "we hired Tom from Deloitte")
    named = [m for m in ms if m.type == PERSON and doc[m.end - 1].dep_ == "attr" and lemma(doc[m.end - 1].head) == "be"]
    for s in ms:
        if s.type != PERSON:
            continue
        preps = ("from", "at", "of", "in", "on") if s in cl.subj or s in named else () if _one_off(cl) else ("from",)
        for o in objs:
            gap = [t for t in doc[s.end:o.start] if t.pos_ != "DET"]
            if o.type == ORGANIZATION and len(gap) == 1 and gap[0].lower_ in preps:
                st.out.add(s, PART_OF, o, cl, 0.85, trace="rules: person from/at organisation")
    # appositive role: "my colleague Ingrid" → speaker works with Ingrid
    for m in ms:
        if m.type == PERSON and m.role and st.speaker_ok and _role_is_speakers(st, m):
            rel = KNOWS if (m.role in FRIEND_ROLES and not _role_at_work(st, m) and not _business_service(st, m)) \
                or _former_role(st, m) else WORKS_WITH  # ("my old boss Kofi": someone one knows, no colleague now)
            if not cl.question and not (cl.negated and not cl.ended):  # a role holds whatever the verb says
                st.out.add(SPEAKER, rel, m, cl, 0.85, role=m.role, trace=f"rules: role noun ({m.role})")
                if _is_new_role(st, m):
                    st.out.events.append(NewRole(m.role, m))
    # "Ana quit", "Ana retired", "Ana left last week": the speaker no longer works with her
    if not cl.question and not cl.hypothetical and not cl.negated and cl.verbs and st.speaker_ok:
        v0 = lemma(cl.verbs[0])
        stepping = v0 == "retire" or (v0 == "step" and any(
            c.lower_ in ("down", "back", "away", "aside") for c in cl.verbs[0].children))
        leaving = v0 in LEAVE_VERBS or stepping
        later = [m for m in ms if m.start > cl.verbs[0].i]
        # "stepped down as co-editor of X": a role of a project after the verb still says who left
        role_of = bool(later) and stepping and all(m.type == PROJECT and doc[m.start - 1].lower_ == "of"
                                                    for m in later)
        if leaving and (not later or role_of) and not _left_a_plain_thing(st, cl.verbs[0]):
            sent = doc[cl.start].sent
            for s in cl.subj:
                if s is not SPEAKER and s.type == PERSON:
                    st.out.end(SPEAKER, WORKS_WITH, s, reason="left")
                    st.out.events.append(PersonLeft(s, retired=v0 == "retire"))
                    if stepping:  # "X stepped down ... and Y took over Z": X's work on Z ends
                        for m in st.mentions:
                            if m.type == PROJECT and m.ref and sent.start <= m.start < sent.end:
                                st.out.end(s, WORKS_ON, m, reason="stepped down")
    # "Mirela's no longer with us", "Ana isn't with us any more": she left the speaker's organisation
    if cl.ended and not cl.question and st.speaker_ok and cl.verbs and lemma(cl.verbs[0]) == "be" and any(
            t.lower_ == "with" and t.i + 1 < cl.end and doc[t.i + 1].lower_ == "us" for t in doc[cl.start:cl.end]):
        for s in cl.subj:
            if s is not SPEAKER and s.type == PERSON:
                st.out.end(SPEAKER, WORKS_WITH, s, reason="left")
                st.out.events.append(PersonLeft(s))
    # "X, a Zig crate for ...", "X, our Flutter app": the project is made with the tool that names its kind
    if not cl.question and not cl.hypothetical and not cl.negated:
        for m in ms:
            if m.type != PROJECT:
                continue
            k = m.end
            if k < len(doc) and doc[k].text == ",":
                k += 1
                while k < len(doc) and k < m.end + 6 and (doc[k].pos_ in ("DET", "PRON", "ADJ") or st.at[k] != -1):
                    tool = st.mentions[st.at[k]] if st.at[k] != -1 else None
                    if tool is not None and tool.type == TOOL and tool.end < len(doc) \
                            and doc[tool.end].lower_ in PROJECT_APPOS_HEADS | TOOL_HEADS:
                        st.out.add(m, USES, tool, cl, 0.8, trace="rules: X, a <tool> <kind noun>")
                    k = tool.end if tool is not None else k + 1
    # "I'm a big X person", "she's a huge X fan": a preference
    if not cl.question and not cl.hypothetical and not cl.negated and cl.verbs and lemma(cl.verbs[0]) == "be":
        for m in ms:
            if m.type in (TOOL, CONCEPT) and m.end < len(doc) \
                    and doc[m.end].lower_ in ("person", "fan", "guy", "girl") \
                    and doc[m.end].dep_ in ("attr", "ROOT", "appos"):
                for s in cl.subj:
                    if s is SPEAKER or s.type == PERSON:
                        st.out.add(s, PREFERS, m, cl, 0.8, trace="rules: a big X person")
    # "Initech hired Ana", "Initech hired me": membership; "Ana joined my team": a new colleague
    if not cl.question and not cl.hypothetical and not cl.negated and cl.verbs:
        v0 = lemma(cl.verbs[0])
        orgs = [s for s in cl.subj if s is not SPEAKER and s.type == ORGANIZATION]
        if v0 in ("hire", "recruit", "employ", "onboard") and orgs:
            for m in ms:
                if m.type == PERSON and m.start > cl.verbs[0].i:
                    st.out.add(m, PART_OF, orgs[0], cl, 0.8, trace="rules: <org> hired X")
            if any(t.lower_ == "me" and t.i > cl.verbs[0].i for t in doc[cl.start:cl.end]):
                st.out.add(SPEAKER, PART_OF, orgs[0], cl, 0.8, trace="rules: <org> hired me")
        if v0 == "join" and st.speaker_ok and any(
                t.lower_ in ("team", "squad", "group", "lab", "crew")
                and any(c.lower_ in ("my", "our") for c in t.children) for t in doc[cl.start:cl.end]):
            for s in cl.subj:
                if s is not SPEAKER and s.type == PERSON:
                    st.out.add(SPEAKER, WORKS_WITH, s, cl, 0.8, trace="rules: X joined my team")
        if v0 == "join" and st.speaker_ok:  # "Marco joined the platform team": a team the graph says is the speaker's
            teams = speaker_org_names(st)
            joined = [m for m in ms if m.type == ORGANIZATION and m.start > cl.verbs[0].i
                      and m.name.casefold() in teams]
            if joined and is_team(joined[0].name):
                for s in cl.subj:
                    if s is not SPEAKER and s.type == PERSON:
                        st.out.add(SPEAKER, WORKS_WITH, s, cl, 0.8, trace="rules: X joined the speaker's team")
    # the speaker's own work item: "my plugin X", "X, our app", "New project: X"
    for m in ms:
        if m.type == PROJECT and m.owned and st.speaker_ok and not cl.question and not cl.hypothetical \
                and not cl.negated and not cl.ended:
            st.out.add(SPEAKER, WORKS_ON, m, cl, 0.8, trace="rules: the speaker's own work item")
    if cl.question or cl.hypothetical:
        return
    for m in ms:
        if m.type == TOOL and m not in objs and st.speaker_ok and not cl.negated and not cl.ended \
                and _possessed_tool(st, m):
            st.out.add(SPEAKER, USES, m, cl, 0.8, trace="rules: possessed tool (my X code)")  # as a subject too
        if _my_own_work(st, m) and not cl.negated and not cl.ended:
            st.out.add(SPEAKER, WORKS_ON, m, None, 0.8, trace="rules: my <work>")  # dated by the message
        if _my_group(st, m) and not cl.negated and not cl.ended:
            # a standing membership, not the clause's event: no date of its own ("shared it with my choir last week")
            st.out.add(SPEAKER, PART_OF, m, None, 0.8, trace="rules: my <kind> group")
    verbs = cl.verbs
    if not verbs and not (cl.inherited or cl.introduction or cl.on_work):
        return
    subj = [s for s in cl.subj if (s is SPEAKER and st.speaker_ok) or s is not SPEAKER]
    if not subj:
        if cl.subj_role and st.speaker_ok:
            subj = []  # "my designer is X" handled via role above
        else:
            return
    hedge = 0.6 if cl.hedged else None
    # projects that are objects or in "for/in" phrases
    proj_obj: Mention | None = it_obj
    proj_pp: list[tuple[Mention, str]] = []
    for o in objs:
        if o.type != PROJECT:
            continue
        p = prep_before(st, o, cl)
        g = gov_lemma(st, o, cl)
        if p in ("for", "in", "inside", "within", "for-ing") and not (
                p == "for" and g in WORK_VERBS and g != "build"):
            proj_pp.append((o, p))
        elif p == "" and g in (USE_VERBS | SWITCH_VERBS) - WORK_VERBS:
            proj_obj = o  # "we deploy Orion on ...", "we switched Orion from X to Y"
        elif p == "" and g in WORK_VERBS | SWITCH_VERBS and _has_tool_after(st, o, cl):
            proj_obj = o  # "we build Orion with React": Orion uses React (and we work on it)
    switch_from: list[Mention] = []
    for o in objs:
        p = prep_before(st, o, cl)
        g = gov_lemma(st, o, cl)
        if (g in SWITCH_VERBS and p in ("from", "off")) or (g == "replace" and p == ""):
            switch_from.append(o)
    for o in objs:
        if o.start > 0 and doc[o.start - 1].lower_ in ("not", "never", "nor"):
            continue  # "I use Figma (not Sketch)", "Figma, never Sketch": the thing set against the one used
        if o is proj_obj and (gov_lemma(st, o, cl) not in WORK_VERBS - SWITCH_VERBS
                              or cl.negated or cl.ended):
            continue
        g = gov_lemma(st, o, cl)
        p = prep_before(st, o, cl)
        gv = clause_gov_verb(st, o, cl)
        conf = hedge or 0.85
        srcs: list[Any] = list(subj)
        # participle modifiers: "a message broker written in Rust" → the named thing it modifies
        if gv is not None and gv.dep_ == "acl" and gv.lemma_ not in ("call", "name"):
            owner = _acl_owner(st, gv) if gv.tag_ == "VBN" else None
            if owner is None:
                continue  # "a cluster running Slurm": the participle's subject is no entity
            srcs = [owner]
        doer = controller(st, gv) if gv is not None else None
        if doer is not None:
            srcs = [doer]  # "Brisa hired me to run X", "I asked Tamsin to join X": the object does it
        if o.type == TOOL and _possessed_tool(st, o) and not (cl.negated or cl.ended):
            if st.speaker_ok:
                # "all my Python code"
                st.out.add(SPEAKER, USES, o, cl, conf, trace="rules: possessed tool (my X code)")
            continue
        if o in switch_from:
            for s in srcs if proj_obj is None else [proj_obj]:
                st.out.end(s, None, o)
            continue
        if cl.ended or (cl.negated and g not in LEAVE_VERBS):
            if cl.negated and not cl.ended and (g in ("be",) or not verbs):
                continue
            if o.type in (TOOL, CONCEPT) and (p in ("for", "with", "to", "onto") or _in_favour_of(st, o)) \
                    and not cl.negated and not (p == "for" and g in ("pay", "subscribe", "look", "wait", "budget")) \
                    and not any(mk in " ".join(t.lower_ for t in doc[cl.start:cl.end]) for mk in ENDED_MARKERS):
                for s in srcs if proj_obj is None else [proj_obj]:
                    st.out.add(s, USES, o, cl, conf, trace="rules: dropped X for Y (the successor)")
                continue
            rtype = _rel_for(st, g, p, o, cl)
            if rtype == DECIDED:
                rtype = None  # "we decided to stop using X": whatever the speaker had with X ends
            if rtype is None and cl.ended and o.type == PERSON and p == "with":
                rtype = WORKS_WITH  # "I miss brainstorming with X": the work together ended, not the acquaintance
            if any(st.out.has(s, USES, o) for s in srcs):
                continue  # "ditched X for Y, everything's in Y now": Y was just taken up
            for s in srcs if proj_obj is None else [proj_obj]:
                if cl.ended or (cl.negated and rtype in (USES, WORKS_ON, PART_OF)
                                and any(t.tag_ in ("VBP", "VBZ", "VBG") for t in verbs)):
                    st.out.end(s, rtype, o)
                    past = " used to " in f" {doc[cl.start:cl.end].text.lower()} "
                    if rtype == WORKS_WITH and o.type == PERSON and past:
                        st.out.add(s, KNOWS, o, cl, 0.7, trace="rules: a former colleague is known")
            continue
        if g in LEAVE_VERBS and o.type == ORGANIZATION and _left_for(st, o, cl):
            for s in srcs:  # "Jun left Haldane for a startup called Tiller": the one gone to
                if s is SPEAKER or s.type == PERSON:
                    st.out.add(s, PART_OF, o, cl, conf, trace=_why("left for", g, "for"))
                    st.out.events.append(MovedOrg(s, o))
                if s is not SPEAKER and s.type == PERSON and st.speaker_ok and not any(
                        c.dep_ == "dobj" for c in verbs[0].children if verbs):
                    st.out.end(SPEAKER, WORKS_WITH, s, reason="left")  # "Aoife left for a job at Monzo"
            continue
        if g in LEAVE_VERBS and o.type in (ORGANIZATION, PROJECT):
            for s in srcs:
                st.out.end(s, PART_OF if o.type == ORGANIZATION else WORKS_ON, o)
                if o.type == ORGANIZATION and (s is SPEAKER or s.type == PERSON):
                    st.out.events.append(LeftOrg(s, o))  # colleagues through it stop working together
            continue
        if o.type == ORGANIZATION and g in SWITCH_VERBS | {"go", "join"} and p in ("to", "") \
                and not cl.negated and not cl.ended and not moves_a_thing(st, o, cl) \
                and not (g == "join" and o.name.split()[-1].lower() in PASTIME_GROUP_HEADS):  # "joined a choir"
            for s in srcs:
                if s is SPEAKER or s.type == PERSON:
                    st.out.events.append(MovedOrg(s, o))  # "Ana moved to Initech": her other PART_OF facts end
                if s is not SPEAKER and s.type == PERSON and st.speaker_ok and not _speakers_org(st, o) and (
                        g in ("move", "transfer") or (g == "go" and _gone(st, o, cl))):
                    st.out.end(SPEAKER, WORKS_WITH, s, reason="moved away")  # "Tomasz moved over to the fraud
                    # squad": no longer the speaker's colleague (but "Ana moved to our team" is one)
        rtype = _rel_for(st, g, p, o, cl)
        if rtype is None:
            continue
        if o.type in (TOOL, CONCEPT) and rtype in (USES, DEPENDS_ON, DECIDED, PREFERS):
            sources = [proj_obj] if proj_obj is not None and rtype in (USES, DEPENDS_ON) else srcs
            if rtype == DECIDED:
                sources = srcs
            for s in sources:
                rt = rtype
                if s is not SPEAKER and s.type == PROJECT and rtype == USES and g in DEPEND_VERBS:
                    rt = DEPENDS_ON
                st.out.add(s, rt, o, cl, conf, qualifier=_qualifier(st, o, cl, proj_pp),
                           trace=_why("verb class", g, p))
                if rt == PREFERS and o.type == TOOL and _use_implied(st, o):
                    st.out.add(s, USES, o, cl, conf, trace="rules: a taste that says use (swears by X)")
                if rt == DECIDED and o.type == TOOL and gv is not None and gv.tag_ in ("VBD", "VBN") \
                        and lemma(gv) in ("go", "settle", "opt", "choose", "pick") and not cl.hedged and s is SPEAKER:
                    st.out.add(s, USES, o, cl, conf, trace="rules: a tool chosen is used (went with X)")
                if rt == USES and gv is not None and gv.tag_ == "VBG" and gv.head.i != gv.i \
                        and lemma(gv.head) == "prefer":
                    st.out.add(s, PREFERS, o, cl, conf, trace="rules: prefers doing it in X")  # "I prefer
                    # writing the triggers in Python over the Perl ones": the tool of the preferred way
            if rtype in (USES, DECIDED, DEPENDS_ON):
                for pp, prep in proj_pp:
                    st.out.add(pp, USES if rtype != DEPENDS_ON else DEPENDS_ON, o, cl, conf,
                               trace=_why("tool for a project", g, p))
                    if prep == "for" and rtype == USES and SPEAKER in srcs and st.speaker_ok:
                        st.out.add(SPEAKER, WORKS_ON, pp, cl, conf, trace="rules: uses X for a project")
        elif o.type == ENTITY and rtype == PREFERS:
            for s in srcs:  # "We love "Home Alone"": a taste for a named work
                st.out.add(s, PREFERS, o, cl, conf, trace=_why("taste for a work", g, p))
        elif o.type == PROJECT and rtype == WORKS_ON:
            for s in srcs:
                if s is not SPEAKER and s.type != PERSON:
                    continue  # "Kestrel is a module of Atlas": a part of the work, no one working on it
                st.out.add(s, WORKS_ON, o, cl, conf, trace=_why("work verb on a project", g, p))
                if g in SWITCH_VERBS | _REASSIGN_VERBS and p in ("to", "onto"):
                    st.out.events.append(MovedProject(s, o))
        elif o.type == PERSON and rtype in (WORKS_WITH, KNOWS):
            for s in srcs:
                if s is not SPEAKER and s.type != PERSON:
                    continue
                st.out.add(s, rtype, o, cl, conf if g != "report" else 0.6,
                           trace=_why("verb class with a person", g, p))
        elif o.type == ORGANIZATION and rtype in (PART_OF, USES):
            unit = unit_of(st, o)
            if unit is not None:
                if not (" " not in o.name and first_name(o.name)):  # "Dana's team": a person's, not a unit
                    st.out.add(unit, PART_OF, o, cl, conf, trace="rules: an organisation's team is part of it")
                o = unit  # "moved to Kelham's night team": one joins the team, which is part of Kelham
            for s in srcs:
                if rtype == PART_OF and s is not SPEAKER and s.type not in (PERSON, PROJECT, ORGANIZATION):
                    continue
                st.out.add(s, rtype, o, cl, conf, trace=_why("membership", g, p))
    # "Vim is my favourite editor", "Postgres is our main database"
    if verbs and lemma(verbs[0]) == "be" and st.speaker_ok and not cl.negated and not cl.ended:
        for s in cl.subj:
            if s is SPEAKER or s.type not in (TOOL, CONCEPT):
                continue
            for a in doc[cl.start:cl.end]:
                if a.dep_ != "attr" or (a.pos_ != "NOUN" and a.lower_ != "go-to") or st.at[a.i] != -1:
                    continue
                if not any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in a.children):
                    continue
                fav = a.lower_ == "go-to" or any(c.lower_ in ("favourite", "favorite", "preferred", "go-to", "beloved")
                                                 for c in a.children)
                st.out.add(SPEAKER, PREFERS if fav else USES, s, cl, hedge or 0.8,
                           trace="rules: X is my (favourite) <noun>")
                if not fav:  # "neovim is my daily driver, rust-analyzer plus plugins": the rest of the setup
                    for c in a.children:
                        if c.dep_ in ("appos", "conj") and st.at[c.i] != -1 \
                                and st.mentions[st.at[c.i]].type == TOOL and st.mentions[st.at[c.i]].ref:
                            st.out.add(SPEAKER, USES, st.mentions[st.at[c.i]], cl, hedge or 0.8,
                                       trace="rules: X is my <noun>, Y and Z")
    # "Dmitri took it over", "she joined it": work verbs on a project named earlier
    if it_obj is not None and not cl.negated and not cl.ended:
        for t in doc[cl.start:cl.end]:
            if t.lower_ != "it" or t.dep_ != "dobj":
                continue
            lem = lemma(t.head)
            over = any(c.lower_ == "over" for c in t.head.children) or "over" in {
                x.lower_ for x in doc[t.i:min(cl.end, t.i + 2)]}
            if (lem == "take" and over) or lem in {"join", "lead", "own", "maintain", "manage",
                                                   "inherit", "head", "drive", "run"}:
                rt = PART_OF if it_obj.type == ORGANIZATION else WORKS_ON
                for s in subj:
                    if s is SPEAKER or s.type == PERSON:
                        st.out.add(s, rt, it_obj, cl, hedge or 0.8, trace="rules: took it over")
        for t in doc[cl.start:cl.end]:  # "I'm still on it", "she's been on it since May": on the project named
            if t.lower_ == "it" and t.dep_ == "pobj" and t.head.lower_ == "on" and it_obj.type == PROJECT \
                    and lemma(t.head.head) in ("be", "stay", "remain", "work", "keep"):
                for s in subj:
                    if s is SPEAKER or s.type == PERSON:
                        st.out.add(s, WORKS_ON, it_obj, cl, hedge or 0.8, trace="rules: on it (the project named)")
    # "Aoife is covering PenCheck with me", "Ravi's running design on Saltmarsh with me": the speaker works with X
    if st.speaker_ok and verbs and not cl.negated and not cl.ended:
        for v in verbs:
            with_me = any(c.dep_ == "prep" and c.lower_ in ("with", "alongside") and any(
                g.dep_ == "pobj" and g.lower_ in ("me", "us") for g in c.children) for c in v.children)
            staying_on = lemma(v) == "stay" and any(c.dep_ == "prt" and c.lower_ == "on" for c in v.children)
            if with_me and (lemma(v) in WORK_VERBS | USE_VERBS | COLLAB_VERBS | _JOINT_WORK_VERBS or staying_on):
                # ("he's staying on with us": kept on where the speaker works)
                for s in subj:
                    if s is not SPEAKER and s.type == PERSON:
                        st.out.add(SPEAKER, WORKS_WITH, s, cl, 0.8, trace=_why("X <verb> with me", lemma(v), "with"))
    # "X and I started ..." → speaker works with X
    if SPEAKER in subj and st.speaker_ok:
        for s in subj:
            if s is not SPEAKER and s.type == PERSON:
                lem = lemma(verbs[0]) if verbs else ""
                # "Anna and I use X": working together needs a work verb or a thing in the clause
                # or an object ("Dario and I do pipeline reviews"); "Anna and I were sitting by the sea" is company
                thing = any(o.type not in (PERSON, "") for o in objs) \
                    or bool(verbs and any(c.dep_ == "dobj" and c.pos_ == "NOUN" for c in verbs[0].children))
                work_obj = any(o.type in (PROJECT, TOOL) for o in objs) or bool(verbs and any(
                    c.dep_ == "dobj" and c.lower_ in _WORK_THINGS | WORK_ITEM_HEADS for c in verbs[0].children))
                if not s.addressed and (lem in WORK_VERBS | COLLAB_VERBS or (lem in USE_VERBS and thing)
                                        or (lem in _JOINT_WORK_VERBS and work_obj)):  # (not "share a flat")
                    st.out.add(SPEAKER, WORKS_WITH, s, cl, 0.7, trace="rules: X and I <verb>")
    # "I'm on X alone now" → the speaker no longer works with people named in this message
    # "we don't work together anymore": the speaker's working tie with the people named here ends
    together = any(t.lower_ == "together" for t in doc[cl.start:cl.end])
    if cl.ended and together and SPEAKER in subj and st.speaker_ok and any(lemma(v) == "work" for v in verbs):
        for m in st.mentions:
            if m.type == PERSON and m.ref:
                st.out.end(SPEAKER, WORKS_WITH, m, reason="no longer together")
                if " used to " in f" {doc[cl.start:cl.end].text.lower()} ":
                    st.out.add(SPEAKER, KNOWS, m, cl, 0.7, trace="rules: a former colleague is known")
    if cl.alone and SPEAKER in subj and st.speaker_ok:
        for m in st.mentions:
            if m.type == PERSON and m.ref:
                st.out.end(SPEAKER, WORKS_WITH, m)
    # "I don't use X anymore, Y is faster" → the speaker uses Y now
    if prev is not None and prev.ended and SPEAKER in prev.subj and st.speaker_ok and not cl.negated:
        comp = any(t.tag_ in ("JJR", "RBR") or t.lower_ in ("better", "faster", "now", "instead")
                   for t in doc[cl.start:cl.end])
        if comp:
            for s in cl.subj:
                if s is not SPEAKER and s.type == TOOL:
                    st.out.add(SPEAKER, USES, s, cl, 0.7, qualifier="instead", trace="rules: instead, after an ending")


_DECISION_HEADINGS = (("decided",), ("decision",), ("decision", "made"), ("final", "call"), ("final", "decision"),
                      ("verdict",), ("settled",), ("it", "'s", "official"), ("decision", "'s", "in"),
                      ("decision", "is", "in"), ("it", "'s", "decided"), ("ok", "decided"), ("so", "decided"))


def relate_decision_heading(st: Parse, cl: Clause) -> None:
    """"Decided: the newsletter moves to X", "Final call: X for the wiki": a sentence headed by a decision word
    and a colon or dash; the speaker decided the tools it names."""
    if not st.speaker_ok or cl.question or cl.negated:
        return
    doc = st.doc
    if any(t.tag_ == "MD" and t.lower_ not in ("will", "'ll", "wo") for t in doc[cl.start:cl.end]):
        return  # "Final call - we might try X": still open (a plan for later is decided all the same)
    sent = doc[cl.start].sent
    words = [t for t in sent if not t.is_space]
    colon = next((k for k, t in enumerate(words[:9]) if t.text in (":", "-", "—", "–")), None)
    heading = tuple(t.lower_ for t in words[:colon]) if colon is not None else ()
    # "Final call: X", "final call on the partner programme: we're signing Y" (the heading may say on what)
    if colon is None or not any(heading == h or (heading[:len(h)] == h and len(heading) > len(h)
                                                 and heading[len(h)] in ("on", "for", "about", "re"))
                                for h in _DECISION_HEADINGS):
        return
    for m in st.mentions:
        if m.type in (TOOL, ORGANIZATION) and m.ref and cl.start <= m.start < cl.end and m.start > words[colon].i \
                and doc[m.start - 1].lower_ not in ("from", "off"):  # (not what is moved away from)
            st.out.add(SPEAKER, DECIDED, m, cl, 0.8, trace="rules: a decision heading")


_SETUP_HEADS = word_class("tool_slot_nouns") | word_class("setup_heading_nouns")


def relate_setup_heading(st: Parse, cl: Clause) -> None:
    """"Our stack is pretty boring: Django, Postgres, Redis", "My setup: Ableton, a Push 2": a sentence headed by
    the speaker's own setup and a colon; the speaker uses the tools listed after it."""
    if not st.speaker_ok or cl.question or cl.negated or cl.hypothetical:
        return
    doc = st.doc
    sent = doc[cl.start].sent
    words = [t for t in sent if not t.is_space]
    colon = next((k for k, t in enumerate(words[:9]) if t.text == ":"), None)
    if colon is None or cl.start <= words[colon].i:
        return
    heads = [t for t in words[:colon] if t.lower_ in _SETUP_HEADS and t.pos_ == "NOUN"]
    if not any(c.dep_ == "poss" and c.lower_ in ("my", "our") for t in heads for c in t.children):
        return
    for m in st.mentions:
        if m.type == TOOL and m.ref and cl.start <= m.start < cl.end:
            st.out.add(SPEAKER, USES, m, cl, 0.8, trace="rules: the speaker's setup, listed after a colon")


def relate_pets(st: Parse, cl: Clause) -> None:
    """The speaker's own pet, with the generic relation and the context "pet": one got or adopted in this clause
    and named in the message ("I got a puppy two weeks ago! Her name's Coco": from then), or called the speaker's
    ("my dog Bailey", "Bailey, our cat", "I named her Tilly": dated by the message)."""
    if cl.question or cl.hypothetical or cl.negated or not st.speaker_ok:
        return
    pets = [m for m in st.mentions if m.type == ENTITY and m.kind == "pet" and m.ref
            and _pet_owner(st, m) not in ("other", "past")]
    if not pets:
        return
    for v in cl.verbs:
        if lemma(v) not in ACQUIRING_VERBS or v.tag_ not in ("VBD", "VBN") or not any(
                c.dep_ == "nsubj" and c.lower_ in SPEAKER_WORDS | WE_WORDS for c in v.children):
            continue
        got = [c for c in v.children if c.dep_ == "dobj"
               and (c.lower_ in PET_NOUNS or c.lemma_.lower() in PET_NOUNS or c.lower_ == "addition")]
        for m in pets if got else []:
            if m.start > got[0].i:  # named after it: "... a puppy! Her name's Coco", "a new pup, Ned"
                st.out.add(SPEAKER, RELATED_TO, m, cl, 0.8, trace="rules: a pet the speaker got", context="pet")
    for m in pets:
        if cl.start <= m.start < cl.end and _pet_owner(st, m) == "speaker":
            st.out.add(SPEAKER, RELATED_TO, m, None, 0.8, trace="rules: the speaker's pet", context="pet")


def _pet_owner(st: Parse, m: Mention) -> str:
    """Who the pet noun beside the name belongs to: "my"/"our" → "speaker" ("my dog Bailey", "Bailey, our cat",
    "I named him Ned"), another owner → "other" ("her dog Bailey", "my sister's cat Miso"), one of the past →
    "past" ("my childhood dog"), else nothing."""
    doc = st.doc
    nouns = [t for t in doc[max(doc[m.start].sent.start, m.start - 3):m.start] if t.lower_ in PET_NOUNS]
    if m.end + 2 < len(doc) and doc[m.end].text == ",":
        nouns += [t for t in doc[m.end + 1:min(len(doc), m.end + 4)] if t.lower_ in PET_NOUNS]
    for noun in nouns:  # (the parser may hang "our" on the name: "Our dog Bailey")
        owners = [c for c in noun.children if c.dep_ == "poss"] \
            + [c for c in doc[m.end - 1].children if c.dep_ == "poss" and c.i < m.start]
        if any(c.lower_ in _PAST_PET for c in noun.children):
            return "past"  # "Max, my childhood dog", "my late cat Milo": no pet of the speaker's now
        if owners:
            return "speaker" if all(c.lower_ in ("my", "our") for c in owners) else "other"
    before = [t.lower_ for t in doc[max(doc[m.start].sent.start, m.start - 3):m.start]]
    if before[-2:] in (["named", "him"], ["named", "her"], ["named", "it"]):
        return "speaker" if before[-3:-2] in (["i"], ["we"]) else "other"
    return ""


def relate_finished(st: Parse, cl: Clause) -> None:
    """"I finished X last week", "finally wrapped up X", "it's done now": the speaker's work on X ended then
    (the relation, with its end; a stored one ends too)."""
    if cl.question or cl.hypothetical or cl.negated or not st.speaker_ok:
        return
    doc = st.doc
    text = " " + " ".join(t.lower_ for t in doc[cl.start:cl.end]) + " "
    finished = any(lemma(v) in FINISH_VERBS and v.tag_ in ("VBD", "VBN") for v in cl.verbs) or (
        " wrapped up " in text)
    kept_adverbs = ("not", "no", "never", "up", "almost", "nearly", "over")
    bare = " " + " ".join(t.lower_ for t in doc[cl.start:cl.end] if t.pos_ != "ADV" or t.lower_ in kept_adverbs) + " "
    done = any(mk in text or mk in bare for mk in DONE_MARKERS)  # "is officially wrapped", "'s finally done"
    if not (finished or done) or (finished and SPEAKER not in cl.subj and not done):
        return
    at = cl.when.when if cl.when is not None else st.ctx.reference_time
    targets = [m for m in clause_mentions(st, cl) if m.type == PROJECT and m.ref]
    if not targets and done and any(t.dep_ in ("nsubj", "nsubjpass") and t.pos_ in ("NOUN", "PROPN")
                                    and st.at[t.i] == -1 for t in doc[cl.start:cl.end]):
        return  # "cutover's done", "the migration is finished": a step named, not the work item
    if not targets and done:
        it = resolve_it(st, cl.start)  # "... - it's done now": the work item named before
        targets = [it] if it is not None and it.ref else []
    for o in targets:
        st.out.close(SPEAKER, WORKS_ON, o, cl, at, trace="rules: finished work item")
    if targets or not done:
        return
    # "it's done now" with nothing named here: the speaker's one current work item named in recent messages
    recent = " ".join(e.content.lower() for e in st.ctx.previous_episodes[-4:])
    open_work = [f for f in st.ctx.candidate_facts if f.type == WORKS_ON and f.source_name.lower() in speaker_names(st)
                 and f.target_name.lower() in recent]
    if len(open_work) == 1:
        st.out.end_fact(open_work[0].id, "finished", at=at)


def _gone(st: Parse, o: Mention, cl: Clause) -> bool:
    """ "Dev's gone to Monzo" (read "is gone"), "Dev has gone to Monzo": gone for good (the perfect), not a
    visit ("went to")."""
    verb = clause_gov_verb(st, o, cl)
    perfect = ("has", "have", "is", "'s", "’s", "'ve", "’ve")
    said = {t.lower_ for t in st.doc[cl.start:cl.end]}
    return verb is not None and verb.lower_ == "gone" and any(
        c.dep_ in ("aux", "auxpass") and c.lower_ in perfect for c in verb.children) and not (said & _BACK_SOON)


_BACK_SOON = frozenset({"back", "lunch", "coffee", "break", "shop", "shops", "meeting", "appointment", "minute",
                        "minutes", "sec", "bit", "today", "tonight", "pick"})  # "Priya has gone to Tesco, back in ten"


def _my_own_work(st: Parse, m: Mention) -> bool:
    """ "the cover art for my album", "a breakthrough with my robotics project", "on my own cooking show": a work of
    a kind one makes, or a project, called one's own is one's work (dated by the message: the clause's time dates
    the cover or the breakthrough, not the work)."""
    if m.type != PROJECT or m.owned or not st.speaker_ok or m.source not in ("np", "np-strong"):
        return False
    head = st.doc[m.end - 1]
    mine = any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in head.children)
    own = m.start > 0 and st.doc[m.start - 1].lower_ == "own"  # "my own cooking show"
    return mine and (head.lower_ in OWN_WORK_NOUNS or own
                     or (head.lower_ in PROJECT_HEADS and m.end - m.start > 1)) and not _named_as(st, head)


def _named_as(st: Parse, head: Any) -> bool:
    """ "Orion is my side project", "my side project is Orion", "my side project, Orion": the kind noun is only
    what the named work is (the name is the entity)."""
    def named(t: Any) -> bool:
        return st.at[t.i] != -1 and st.mentions[st.at[t.i]].source not in ("np", "np-strong")
    verb = head.head
    if head.dep_ == "attr" and lemma(verb) == "be":
        return any(c.dep_ in ("nsubj", "nsubjpass") and named(c) for c in verb.children)
    if head.dep_ == "nsubj" and lemma(verb) == "be":
        return any(c.dep_ == "attr" and named(c) for c in verb.children)
    return any(c.dep_ == "appos" and named(c) for c in head.children) or (head.dep_ == "appos" and named(verb))


_FORMER_WORDS = frozenset({"old", "former", "previous", "ex", "last"})


def _my_group(st: Parse, m: Mention) -> bool:
    """ "my writers group", "our running club", "the knitting circle we joined": a group of a kind that the speaker
    calls theirs, or says they joined or attend, is one they belong to (not "my son's team": the possessive is
    someone else's)."""
    if m.type != ORGANIZATION or not st.speaker_ok or m.source not in ("np", "np-strong"):
        return False
    head = st.doc[m.end - 1]
    if head.lower_ not in GROUP_HEADS or any(ch.isupper() for ch in m.name):
        return False
    if head.lower_ in TEAM_HEADS and head.lower_ not in ("group", "crew"):
        return False  # "my platform team", "our data squad": work teams, read by the work rules
    if any(t.lower_ in _FORMER_WORDS for t in st.doc[max(0, m.start - 2):m.end]):
        return False  # "my old band", "our former choir"
    return any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in head.children) or joined_by_speaker(head)


def _why(rule: str, verb: str, prep: str) -> str:
    """The trace of a rule-made relation: the rule and the verb lemma and preposition it read."""
    return f"rules: {rule} ({verb or '-'} {prep or '-'})"


def _rel_for(st: Parse, g: str, p: str, o: Mention, cl: Clause) -> str | None:
    t = o.type
    if t == ENTITY:
        taste = (g in PREFER_VERBS and p == "") or _believer(st, o) or _interest(st, o) \
            or (g in CONSUMING_VERBS and p in ("", "to") and _praised_next(st, o))
        return PREFERS if o.kind == "work" and taste else None
    if t in (TOOL, CONCEPT):
        if p == "over" and g in _TALK_OVER_VERBS and t == TOOL and not cl.preference:
            return USES  # "we mostly collab over Discord", "we chat over Slack all day"
        if p in ("over", "than", "instead", "vs", "versus") or (p == "to" and g in PREFER_VERBS):
            return None
        if g in PREFER_VERBS or (cl.preference and p in ("", "in", "with", "on")):
            return PREFERS  # "I'd take X over Y", "she'd rather work in X than Y"
        if (g == "go" and p == "with") or (g == "land" and p == "on") or (g == "end" and p == "with"):
            return DECIDED
        if {lemma(v) for v in cl.verbs if not takes_up(v)} & DECIDE_VERBS:
            return DECIDED  # not "I picked up Rust", "picked up crocheting": taken up, not chosen
        if g in DEPEND_VERBS:
            return DEPENDS_ON
        if _believer(st, o) or _interest(st, o):
            return PREFERS
        if g == "replace":
            return USES if p in ("with", "by") else None
        if p not in ("", "in", "with", "on", "to", "onto", "into", "using", "via", "through", "inside",
                     "by", "for-ing", "in-ing", "with-ing"):
            return None  # "as a ... developer", "from X", "about X"
        if g in NON_USE_VERBS:
            return None
        if g in SWITCH_VERBS and p not in ("to", "onto", "with", "on", "in"):
            return None
        if g == "be":
            # "X is our database" is handled apart; "all our tasks are in Asana" → uses
            return USES if p in ("on", "with", "in", "inside") else None
        if g in USE_VERBS or g in WORK_VERBS:
            return USES
        if p in ("in", "with", "on", "using", "via", "through", "inside") and g:
            return USES  # "sketching in Procreate", "we visualise it with Looker"
        return None
    if t == PROJECT:
        if cl.on_work and g == "" and p == "on":
            return WORKS_ON  # "now on the Scorecard project"
        if (g in SWITCH_VERBS | _REASSIGN_VERBS and p in ("to", "onto")) or (g in _REASSIGN_VERBS and p == "into"):
            return WORKS_ON  # "moved to Atlas", "Dev's been pulled onto the Kestrel migration", "pulled into X"
        if g in WORK_VERBS or (g == "be" and p in ("on", "in")):
            if g in ("help",) and p not in ("with", "on"):
                return None
            return WORKS_ON
        if g == "be" and p in ("for", "of") and _role_attr(st, cl):
            return WORKS_ON
        if g in ("take",) and "over" in {x.lower_ for x in st.doc[cl.start:cl.end]}:
            return WORKS_ON
        if (g == "pick" and p in ("", "up") and "up" in {x.lower_ for x in st.doc[cl.start:cl.end]}) \
                or (g == "look" and p == "after"):
            return WORKS_ON  # "I picked up the Hollis audit", "I look after the Quill newsletter"
        if g in COLLAB_VERBS and p in ("on", "with"):
            return WORKS_ON
        return None
    if t == PERSON:
        if p in ("with", "alongside") and (g in WORK_VERBS | USE_VERBS | COLLAB_VERBS | _JOINT_WORK_VERBS
                                           or g in ("be",) or (cl.on_work and g == "")):
            return WORKS_WITH  # ("I'm coding alongside Anjali")
        if g in KNOW_VERBS and p == "":
            return KNOWS
        if g == "report" and p == "to":
            return WORKS_WITH
        if g in COLLAB_VERBS:
            return WORKS_WITH
        return None
    if t == ORGANIZATION:
        if p == "from":
            return None  # "joined us from Deliveroo": a former employer
        if any(x.lower_ in ("after", "before", "formerly", "previously", "used") for x in st.doc[cl.start:o.start]):
            return None  # "after four years at X": a former place
        if p in ("at", "for") and (g in ("work", "intern", "start", "join", "consult", "play", "volunteer", "coach")
                                   or (g == "be" and p == "for") or _role_attr(st, cl)):
            return PART_OF  # "I work at X", "I'm a nurse at X" (being at a place is no membership)
        if p == "at" and g in ("teach", "study", "nurse", "volunteer", "research", "lecture", "train", "cook", "help",
                               "practise", "practice", "intern", "clerk", "serve", "tutor", "coach", "report"):
            return PART_OF  # "I teach piano at X": where the speaker works
        if p == "at" and g in ("", "be") and (_role_attr(st, cl) or (not _one_off(cl) and not o.place)):
            return PART_OF  # "I'm at Initech", "who's at Uppsund" (not "we were at the bar last night")
        if p == "at" and SPEAKER in cl.subj and _role_attr(st, cl):
            return PART_OF
        if g == "join" or (g in SWITCH_VERBS and p == "to" and not moves_a_thing(st, o, cl)):
            return PART_OF
        if p == "" and g in ("found", "co-found", "cofound"):
            return PART_OF  # "I co-founded Lumen"
        if p == "" and g in ("lead", "run", "manage", "head", "chair") and (
                is_team(o.name) or _kind_word(st, o) in TEAM_HEADS):
            return PART_OF
        if p == "" and g in ("run", "own") and not (o.end < len(st.doc) and st.doc[o.end].text in ("'s", "’s")) \
                and any(s is SPEAKER or s.type == PERSON for s in cl.subj):
            return PART_OF  # "I run Pryce Plumbing", "run my own outfit (Kerrigan Electrical)": one's own business
        if p == "" and g in GROUP_RUNNING_VERBS and _kind_word(st, o) in GROUP_HEADS:
            return PART_OF  # "I'm co-hosting the Elm Street Book Club", "she organises the Larkhill Choir"
        if (g == "be" or (cl.on_work and g == "")) and p == "of" and _membership_word(st, o):
            return PART_OF  # "I'm a member of X", "she's part of X"
        if g == "be" and p == "on" and not _one_off(cl):
            return PART_OF  # "I'm on the board", "on the cardiac ICU"
        if g == "be" and p == "in" and (_kind_word(st, o) in GROUP_HEADS
                                        or _membership_word(st, o) or _role_attr(st, cl)):
            return PART_OF  # "I'm on the payments team", "I'm in the choir"
        if g == "be" and p == "with" and not o.place:
            return PART_OF  # "I'm with Lumen now"
        if p in ("in", "for") and g in _GROUP_PASTIME_VERBS and _kind_word(st, o) in GROUP_HEADS | TEAM_HEADS:
            return PART_OF  # "I sing in a community choir, the Harmonics", "she plays in the Ashdown Ramblers band"
        if p == "on" and g in ("work",) and o.name.lower().endswith(tuple(TEAM_HEADS)):
            return PART_OF
        if g in USE_VERBS and p in ("", "on", "with") and g not in WORK_VERBS:
            return USES
        return None
    return None


_JOINT_WORK_VERBS = word_class("joint_work_verbs")
_WORK_THINGS = WORK_THINGS | {"rota", "on-call", "shifts", "caseload", "workload", "support", "reviews"}
_GROUP_PASTIME_VERBS = frozenset({"sing", "play", "dance", "perform", "row", "race", "act", "drum", "compete",
                                  "swim", "run", "volunteer", "serve", "paddle", "skate"})


def _left_for(st: Parse, o: Mention, cl: Clause) -> bool:
    """``o`` comes after the "for" of a leaving verb: what one left for, not what one left."""
    v = clause_gov_verb(st, o, cl)
    return v is not None and any(c.dep_ == "prep" and c.lower_ == "for" and c.i < o.start for c in v.children)


def _kind_word(st: Parse, o: Mention) -> str:
    """The noun that says what kind of group ``o`` is: its last word ("the Elm Street Book Club" → club), or the
    noun it renames ("a youth team, the Falcons" → team)."""
    named = st.doc[o.end - 1]
    if named.dep_ == "appos" and named.head.i < o.start and named.head.pos_ == "NOUN":
        return named.head.lower_
    return o.name.lower().rsplit(" ", 1)[-1]


_INTO_INTENSIFIERS = frozenset({"really", "so", "totally", "big", "super", "pretty", "very", "quite", "seriously",
                                "deeply", "heavily", "majorly"})  # "I'm super into X"


def _interest(st: Parse, o: Mention) -> bool:
    """"interested in X", "I'm all about X", "getting into X", "I'm into X": a taste, stated now."""
    doc = st.doc
    k = o.start - 1
    while k >= 0 and doc[k].pos_ in ("DET", "ADJ", "ADV") and st.at[k] == -1 and o.start - k < 4:
        k -= 1
    if k < 1 or doc[k].pos_ != "ADP":
        return False
    prep, word = doc[k].lower_, doc[k - 1]
    if any(c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in word.children):
        return False  # "your love for dancing": someone else's taste
    if prep == "into" and (lemma(word) == "be" or word.lower_ in _INTO_INTENSIFIERS):
        return True  # "I'm (really) into X"
    if prep == "into" and lemma(word) == "get" and (word.tag_ == "VBG" or any(
            c.lower_ in ("'ve", "have", "has") for c in word.children)):
        return True  # "I've been getting into X", "I've gotten into X"
    return (word.lower_, prep) in INTEREST_PAIRS or (lemma(word), prep) in INTEREST_PAIRS


def _one_off(cl: Clause) -> bool:
    """A clause about one past occasion: a simple-past verb or a date ("we were there last night")."""
    return cl.when is not None or any(v.tag_ == "VBD" for v in cl.verbs)


def _membership_word(st: Parse, o: Mention) -> bool:
    """"a member of X", "part of X", "one of X's volunteers": the words before the preposition say membership."""
    words = [t.lower_ for t in st.doc[max(0, o.start - 4):o.start]]
    return any(w in MEMBERSHIP_WORDS for w in words)


def _possessed_tool(st: Parse, o: Mention) -> bool:
    """"my Python code", "our Go services": the speaker uses the tool."""
    doc = st.doc
    if o.end >= len(doc) or doc[o.end].lower_ not in TOOL_HEADS | {
            "services", "projects", "apps", "notebooks", "codebase", "backend", "launcher", "scripts", "stack",
            "setup", "plugins", "site", "website", "server", "servers", "tooling", "repo", "repos"}:
        return False
    k = o.start - 1
    while k >= 0 and doc[k].pos_ in ("ADJ", "DET") and doc[k].lower_ not in ("my", "our"):
        k -= 1
    return k >= 0 and doc[k].lower_ in ("my", "our")


def _role_is_speakers(st: Parse, m: Mention) -> bool:
    doc = st.doc
    window = doc[max(0, m.start - 6):min(len(doc), m.end + 7)]  # "Carmen, a friend from my MA"
    def on_someone_elses_team(role: Any) -> bool:  # "new starter on their team"
        return any(c.dep_ == "prep" and any(g.dep_ == "pobj" and any(
            x.dep_ == "poss" and x.lower_ not in ("my", "our") for x in g.children) for g in c.children)
            for c in role.children)

    if any(t.lower_ == m.role and on_someone_elses_team(t) for t in window):
        return False
    return any(t.lower_ in ("my", "our", "mine", "ours") for t in window) or any(
        t.lower_ == m.role and t.left_edge.is_sent_start and t.dep_ == "nsubj" and not any(
            c.dep_ in ("det", "poss") for c in t.children) for t in window) or any(  # "Director is Marguerite Lennox."
        t.lower_ == m.role and t.dep_ == "dobj" and t.head.lemma_ in ("have", "get", "hire") and any(
            c.dep_ == "nsubj" and c.lower_ in ("i", "we") for c in t.head.children) for t in window)  # "I've got a
    # new TA now, Kayleigh"


def _is_new_role(st: Parse, m: Mention) -> bool:
    doc = st.doc
    window = doc[max(0, m.start - 6):min(len(doc), m.end + 7)]  # "Carmen, a friend from my MA"
    return any(t.lower_ in ("new", "now") for t in window)


def _has_tool_after(st: Parse, m: Mention, cl: Clause) -> bool:
    return any(o.type == TOOL and o.start > m.start for o in clause_mentions(st, cl))


def _acl_owner(st: Parse, verb: Any) -> Any:
    head = verb.head
    for _ in range(3):
        if st.at[head.i] != -1:
            return st.mentions[st.at[head.i]]
        if head.dep_ == "appos":
            head = head.head
            continue
        # "project called Driftwood, a scheduler written in Go": the appos noun's anchor
        for c in head.children:
            if c.dep_ in ("acl",) and st.at[c.i] == -1:
                for cc in c.children:
                    if st.at[cc.i] != -1:
                        return st.mentions[st.at[cc.i]]
        break
    # "the docs are an mdBook site hosted on X": the speaker's thing, built with a tool, not the tool itself
    noun = verb.head
    if noun.dep_ == "attr" and noun.pos_ == "NOUN" and st.speaker_ok \
            and any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in noun.children):
        built_with = [st.mentions[st.at[c.i]] for c in noun.children if c.dep_ == "compound" and st.at[c.i] != -1]
        subj = [c for c in noun.head.children if c.dep_ == "nsubj" and c.pos_ == "NOUN"]
        if built_with and all(m.type == TOOL for m in built_with) and subj and not any(
                c.dep_ == "poss" and c.lower_ not in ("my", "our") for c in subj[0].children):
            return SPEAKER
    # linear fallback: nearest project/tool mention before the participle
    for m in reversed(st.mentions):
        if m.end <= verb.i and m.type in (PROJECT, TOOL) and verb.i - m.end <= 8:
            return m
    return None


def _left_a_plain_thing(st: Parse, verb: Any) -> bool:
    """"Dara left the meeting early", "he quit smoking": the verb's object is no job or group, so nobody left
    their work ("Ana left the company", "he quit his job" still do)."""
    return any(c.dep_ in ("dobj", "xcomp") and st.at[c.i] == -1 and c.lower_ not in _JOB_WORDS
               for c in verb.children)


_JOB_WORDS = ORG_NOUNS | TEAM_HEADS | GROUP_HEADS | word_class("job_words")


def _role_attr(st: Parse, cl: Clause) -> bool:
    if cl.introduction:
        return True  # "shift lead for Corran Foods, ...": the speaker's role, said without a verb
    for t in st.doc[cl.start:cl.end]:
        if t.dep_ in ("attr",) and t.pos_ in ("NOUN", "PROPN") and st.at[t.i] == -1:
            return True
    return False


def _use_implied(st: Parse, o: Mention) -> bool:
    """"swears by X", "hooked on X", "can't do without X": a taste for a tool that says it is used."""
    k = o.start - 1
    while k >= 0 and st.doc[k].pos_ in ("DET", "ADJ") and st.at[k] == -1:
        k -= 1
    return k >= 1 and (lemma(st.doc[k - 1]), st.doc[k].lower_) in USE_IMPLYING_PAIRS


def _praised_next(st: Parse, o: Mention) -> bool:
    """A work taken in and praised right after: "I watched "Arrival" last night! It was awesome!", "I tried Hades
    yesterday. Great game, so addictive!", "read "Dune" and loved it" (the rest of the sentence and the next one;
    not when they say no: "It wasn't great")."""
    doc = st.doc
    sent = doc[o.start].sent
    end = sent.end if sent.end >= len(doc) else doc[sent.end].sent.end
    after = doc[o.end:min(end, o.end + 25)]
    if any(t.dep_ == "neg" or t.lower_ in ("not", "never", "n't") for t in after):
        return False
    for t in after:
        if t.lower_ not in VERDICT_WORDS:
            continue
        if t.pos_ == "VERB":  # "loved it"
            if any(c.dep_ == "dobj" and c.lower_ in _IT for c in t.children):
                return True
            continue
        subj = [k for k in (t.head if t.dep_ == "acomp" else t).children if k.dep_ == "nsubj"]
        if not subj or subj[0].lower_ in _IT:  # "It was awesome!", "Great game": not "Ana is amazing"
            return True
    return False


_IT = frozenset({"it", "this", "that", "which", "they"})
_QUOTES = frozenset({'"', "“", "'", "‘"})
_PAST_PET = frozenset({"childhood", "late", "former", "old"})


def _believer(st: Parse, o: Mention) -> bool:
    """"a big believer in X", "a fan of X", "obsessed with X", "swears by X", "keen on X"."""
    doc = st.doc
    k = o.start - 1
    while k >= 0 and (doc[k].pos_ in ("DET", "ADJ", "NOUN") or doc[k].text in _QUOTES) and st.at[k] == -1 \
            and o.start - k < 4 and doc[k].lower_ not in FOND_OF:
        k -= 1  # (an opening quote: 'a huge fan of "The Expanse"')
    if k < 1:
        return False
    pair = (doc[k - 1].lower_, doc[k].lower_)
    return pair in FOND_OF_PAIRS or (doc[k].lower_ in ("in", "of") and doc[k - 1].lower_ in (
        "believer", "fan", "fans", "advocate", "proponent", "champion", "supporter", "lover"))


def _qualifier(st: Parse, o: Mention, cl: Clause, proj_pp: list[tuple[Mention, str]]) -> str:
    parts = []
    for pp, prep in proj_pp:
        parts.append(f"{prep} {pp.name}")
    # "prefer X over Y"
    for m in clause_mentions(st, cl):
        if m.start > o.end and prep_before(st, m, cl) in ("over", "to", "than") and \
                lemma(cl.verbs[0]) in PREFER_VERBS if cl.verbs else False:
            parts.append(f"over {m.name}")
    return " ".join(parts)


def _in_favour_of(st: Parse, o: Any) -> bool:
    """"retired Slack in favour of Teams", "dropped Asana in favor of Linear": the one taken up instead."""
    head = st.doc[o.end - 1].head
    return head.lower_ == "of" and head.head.lower_ in ("favour", "favor")


_TALK_OVER_VERBS = word_class("talk_over_verbs")
_REASSIGN_VERBS = word_class("reassign_verbs")
_WORK_ROLE_MODIFIERS = word_class("work_role_modifiers")


def _speakers_org(st: Parse, org: Mention) -> bool:
    """The organisation or team is the speaker's: "our team", or one the graph says the speaker is part of."""
    doc = st.doc
    if any(t.lower_ in ("our", "my") for t in doc[max(0, org.start - 2):org.end]):
        return True
    return org.name.casefold() in speaker_org_names(st)


def _business_service(st: Parse, m: Mention) -> bool:
    """"our vet is Siân Morgan" said of a farm or a practice: a service the speaker's business works with (but "my
    vet" is a pet owner's, "our doctor" a family's)."""
    sent = st.doc[m.start].sent
    return m.role in ("vet", "coach") and any(
        t.lower_ == m.role and t.i > sent.start and any(c.dep_ == "poss" and c.lower_ == "our" for c in t.children)
        for t in sent)


def _former_role(st: Parse, m: Mention) -> bool:
    """The role is a past one: "Kofi (my old boss)", "my former manager, Ines"."""
    sent = st.doc[m.start].sent
    if any(t.lower_ in ROLE_NOUNS and t.lower_ != m.role and any(c.dep_ == "poss" for c in t.children)
           for t in sent):
        return False  # "my old preceptor, Rosa, is our nurse manager now": a role held now too
    return any(t.lower_ == m.role and t.i > sent.start and abs(t.i - m.start) <= 8
               and any(st.doc[k].lower_ in _FORMER_WORDS and st.doc[k].head.i == t.i
                       for k in range(max(sent.start, t.i - 3), t.i)) for t in sent)  # ("my old uni lecturer")


def _role_at_work(st: Parse, m: Mention) -> bool:
    """A friend's or family word made a work role by the word before it: "my business partner", "my assistant
    coach", "my research partner"."""
    sent = st.doc[m.start].sent
    return any(t.lower_ == m.role and t.i > sent.start and st.doc[t.i - 1].lower_ in _WORK_ROLE_MODIFIERS
               for t in sent)


_PARTNER_TRACES = ("rules: verb class with a person", "rules: X and I", "rules: X <works> with me",
                   "rules: X <verb> with me", "construction: person_and_i", "construction: me_and_person")


def relate_partners(st: Parse, cl: Clause, new: list[Any]) -> None:
    """A partner on the speaker's work works on it too: "I'm building Orbit with Dana" (Dana works on Orbit),
    "Grace is co-running the campaign with me" (so does the speaker). ``new``: the relations this clause added."""
    if not st.speaker_ok:
        return
    by_ref = {m.ref: m for m in st.mentions if m.ref}
    partners = [by_ref[r.target if r.source == SPEAKER else r.source] for r in new
                if r.type == WORKS_WITH and SPEAKER in (r.source, r.target) and r.trace.startswith(_PARTNER_TRACES)
                and (r.target if r.source == SPEAKER else r.source) in by_ref]
    if not partners:
        return
    ids = {id(m) for m in partners}
    for r in new:
        if r.type != WORKS_ON or r.target not in by_ref:
            continue
        work = by_ref[r.target]
        if r.source == SPEAKER:
            for m in partners:
                st.out.add(m, WORKS_ON, work, cl, 0.7, trace="rules: a partner on the speaker's work")
        elif r.source in by_ref and id(by_ref[r.source]) in ids:
            st.out.add(SPEAKER, WORKS_ON, work, cl, 0.7, trace="rules: the speaker's partner on a work")


_ON_LEAVE = re.compile(r"\b(?:gone|going|off|is|'s|are|'re) on (?:\w+ ){0,2}(?:leave|sabbatical|secondment|furlough)\b")


def relate_away_on_leave(st: Parse, cl: Clause) -> None:
    """"Bea's gone on mat leave", "Farouk has gone on sabbatical for six months": a colleague away on leave no
    longer works with the speaker, for now."""
    if cl.question or cl.negated or cl.hypothetical or not st.speaker_ok:
        return
    if not _ON_LEAVE.search(st.doc[cl.start:cl.end].text.lower().replace("’", "'")):
        return
    for s in cl.subj:
        if s is not SPEAKER and s.type == PERSON:
            st.out.end(SPEAKER, WORKS_WITH, s, reason="on leave")


def relate_just_me_and(st: Parse, cl: Clause) -> None:
    """"it's just me and Kieran now", "the class is me and a band 5, Tom Whitlock": the people who are, with the
    speaker, all there is to a piece of work work with the speaker (not "it's just me and my husband now")."""
    if cl.question or cl.negated or cl.hypothetical or not st.speaker_ok:
        return
    doc = st.doc
    for t in doc[cl.start:cl.end]:
        end = t.sent.end
        if t.lower_ != "me" or t.dep_ not in ("attr", "ROOT") or t.i + 1 >= end or doc[t.i + 1].lower_ != "and":
            continue
        for k in range(t.i + 2, min(end, t.i + 10)):
            if doc[k].pos_ in ("VERB", "AUX") or doc[k].lower_ in FRIEND_ROLES:
                break
            if st.at[k] != -1:
                m = st.mentions[st.at[k]]
                if m.type == PERSON and m.ref:
                    st.out.add(SPEAKER, WORKS_WITH, m, cl, 0.7, trace="rules: just me and X")
                break


def relate_x_it_is(st: Parse, cl: Clause) -> None:
    """"Postgres it is then", "ok decided: scVI it is": a choice announced by "<name> it is" is decided."""
    if cl.question or cl.negated or not st.speaker_ok:
        return
    doc = st.doc
    for m in st.mentions:
        k = m.end
        if not (cl.start <= m.start < cl.end) or m.type not in (TOOL, CONCEPT, PROJECT) or not m.ref \
                or k + 1 >= len(doc) or doc[k].lower_ != "it" or doc[k + 1].lower_ not in ("is", "'s", "’s"):
            continue
        after = doc[k + 2] if k + 2 < len(doc) else None
        if after is None or after.is_punct or after.lower_ in ("then", "now", "for", "lol", "haha"):
            st.out.add(SPEAKER, DECIDED, m, cl, 0.75, trace="rules: X it is")
