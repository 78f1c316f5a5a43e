"""Stage 5, endings: typed events raised while relating clauses, turned into endings of offered facts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loregraph.extract.base import SPEAKER
from loregraph.extract.local.kinds import DEPENDS_ON, KNOWS, PART_OF, TOOL, USES, WORKS_ON, WORKS_WITH
from loregraph.extract.local.words import PASTIME_GROUP_HEADS, word_class

LASTING_ROLES = word_class("lasting_roles")

if TYPE_CHECKING:
    from loregraph.extract.local.state import Mention, Parse


@dataclass(frozen=True, slots=True)
class SpeakerDropped:
    """The speaker (as "we") stopped using a tool: their own projects stop using it too."""

    tool: Mention


@dataclass(frozen=True, slots=True)
class MovedProject:
    """Someone moved to a project: their other WORKS_ON facts end."""

    subject: Any  # SPEAKER or a Mention
    project: Mention


@dataclass(frozen=True, slots=True)
class MovedOrg:
    """Someone moved to an organisation: their PART_OF facts to other organisations end."""

    subject: Any  # SPEAKER or a Mention
    org: Mention


@dataclass(frozen=True, slots=True)
class OrgDropped:
    """An organisation the speaker belongs to stopped using a tool: the speaker's use of it ends too."""

    org: Mention
    tool: Mention


@dataclass(frozen=True, slots=True)
class ProjectDropped:
    """A project stopped using a tool: anyone's use of the tool *for that project* ends too."""

    project: Mention
    tool: Mention


@dataclass(frozen=True, slots=True)
class NewRole:
    """"my new manager X": the speaker's earlier fact naming that role for someone else ends."""

    role: str
    person: Mention


@dataclass(frozen=True, slots=True)
class LeftOrg:
    """Someone left an organisation: working together through it ends (a colleague who leaves the speaker's
    organisation, or the speaker leaving the organisation of a colleague)."""

    subject: Any  # SPEAKER or a Mention
    org: Mention


@dataclass(frozen=True, slots=True)
class PersonLeft:
    """"Ana quit", "Ana is no longer with us", "Ana retired": her place in the speaker's organisations and her work
    on the speaker's projects end (after retiring: every place and every work of hers)."""

    person: Mention
    retired: bool = False


EndingEvent = SpeakerDropped | MovedProject | MovedOrg | OrgDropped | ProjectDropped | NewRole | LeftOrg | PersonLeft


def speaker_names(p: Parse) -> set[str]:
    """How facts of the graph name the speaker, lower case ("user", their own name, ...)."""
    return {"user", "speaker", "me", p.speaker_name.lower()}


def speaker_org_names(p: Parse) -> set[str]:
    """Names (case-folded) of the organisations and teams the graph says the speaker is part of."""
    names = speaker_names(p)
    return {f.target_name.casefold() for f in p.ctx.candidate_facts
            if f.type == PART_OF and f.source_name.casefold() in names}


def apply_supersede(p: Parse) -> None:
    """Endings of offered facts that the message clearly replaces."""
    facts = p.ctx.candidate_facts
    if not facts:
        return
    names = speaker_names(p)
    speaker_projects = {f.target_id for f in facts if f.type == WORKS_ON
                        and f.source_name.casefold() in names}
    for event in p.out.events:
        if isinstance(event, LeftOrg):
            _left_org(p, facts, names, event)
            continue
        if isinstance(event, PersonLeft):
            _person_left(p, facts, names, speaker_projects, event)
            continue
        if isinstance(event, SpeakerDropped):
            # "we ditched Firebase": the speaker's own projects stop using it too
            tool = event.tool
            for f in facts:
                if f.type in (USES, DEPENDS_ON) and f.source_id in speaker_projects and (
                        f.target_id == tool.existing_id or f.target_name.casefold() == tool.name.casefold()):
                    p.out.end_fact(f.id, f"the speaker dropped {tool.name}")
            continue
        if isinstance(event, MovedProject):
            s, newp = event.subject, event.project
            sname = p.speaker_name if s is SPEAKER else s.name
            for f in facts:
                if f.type != WORKS_ON or f.target_name.casefold() == newp.name.casefold():
                    continue
                if newp.existing_id and f.target_id == newp.existing_id:
                    continue
                src_ok = (s is not SPEAKER and (f.source_id == s.existing_id or
                                                f.source_name.casefold() == sname.casefold())) or \
                         (s is SPEAKER and f.source_name.casefold() in names)
                if src_ok:
                    p.out.end_fact(f.id, f"moved to {newp.name}")
            continue
        if isinstance(event, OrgDropped):
            org, tool = event.org, event.tool
            # its members, as far as the offered facts say ("the design team moved off Sketch": Greta, on the
            # design team, stops using Sketch too); the speaker counts by name, others by id
            members = {f.source_id for f in facts if f.type == PART_OF and (
                (org.existing_id and f.target_id == org.existing_id)
                or f.target_name.casefold() == org.name.casefold())}
            speaker_member = any(f.source_name.casefold() in names for f in facts
                                 if f.type == PART_OF and f.source_id in members)
            for f in facts:
                if f.type == USES and (f.source_id in members or (
                        speaker_member and f.source_name.casefold() in names)) and (
                        (tool.existing_id and f.target_id == tool.existing_id)
                        or f.target_name.casefold() == tool.name.casefold()):
                    p.out.end_fact(f.id, f"{org.name} dropped {tool.name}")
            continue
        if isinstance(event, ProjectDropped):
            # "we switched Forecast from pandas to Polars": "Marcus uses pandas for Forecast" ends too
            proj, tool = event.project, event.tool
            for_proj = re.compile(rf"\b(for|on|in)\s+(the\s+)?{re.escape(proj.name)}\b", re.I)
            for f in facts:
                if f.type in (USES, DEPENDS_ON) and (
                        (tool.existing_id and f.target_id == tool.existing_id)
                        or f.target_name.casefold() == tool.name.casefold()) and for_proj.search(f.fact):
                    p.out.end_fact(f.id, f"{proj.name} dropped {tool.name}")
            continue
        if isinstance(event, MovedOrg):
            s, org = event.subject, event.org
            sname = p.speaker_name if s is SPEAKER else s.name
            for f in facts:
                if f.type != PART_OF or f.target_name.casefold() == org.name.casefold() or (
                        org.existing_id and f.target_id == org.existing_id):
                    continue
                if f.target_name.split()[-1].lower() in PASTIME_GROUP_HEADS | {"group"}:
                    continue  # a new job or a new group ends no church, band, club or support group one is in
                src_ok = (s is not SPEAKER and (f.source_id == s.existing_id or
                                                f.source_name.casefold() == sname.casefold())) or \
                         (s is SPEAKER and f.source_name.casefold() in names)
                if src_ok:
                    p.out.end_fact(f.id, f"moved to {org.name}")
            continue
        role, m = event.role, event.person
        for f in facts:
            if f.type not in (WORKS_WITH, KNOWS):
                continue
            if f.target_name.casefold() == m.name.casefold() or (m.existing_id and f.target_id == m.existing_id):
                continue
            if not re.search(rf"\b{re.escape(role)}\b", f.fact, re.I):
                continue
            if f.source_name.casefold() in names or f.fact.lower().startswith(
                    tuple(names)) or re.search(r"\b(user|speaker)'s\b", f.fact, re.I):
                p.out.end_fact(f.id, f"new {role}: {m.name}")


def _left_org(p: Parse, facts: list[Any], speaker_names: set[str], event: LeftOrg) -> None:
    """"Bettina left Corvid Works" while the speaker belongs to it: the speaker's WORKS_WITH Bettina ends;
    "I left Corvid Works": the speaker's WORKS_WITH its members ends."""
    org = event.org

    def is_org(f: Any) -> bool:
        return bool(org.existing_id and f.target_id == org.existing_id) or \
            f.target_name.casefold() == org.name.casefold()

    def is_speaker(name: str) -> bool:
        return name.casefold() in speaker_names

    if event.subject is SPEAKER:
        members = {f.source_id for f in facts if f.type == PART_OF and is_org(f) and not is_speaker(f.source_name)}
        colleagues = [f for f in facts if f.type == WORKS_WITH and (
            (is_speaker(f.source_name) and f.target_id in members)
            or (is_speaker(f.target_name) and f.source_id in members))]
    else:
        if not any(f.type == PART_OF and is_org(f) and is_speaker(f.source_name) for f in facts):
            return
        person = event.subject
        names = {person.name.casefold(), *(a.casefold() for a in person.aliases)}
        ids = {person.existing_id} if person.existing_id else set()

        def is_person(pid: str, pname: str) -> bool:
            return pid in ids or pname.casefold() in names or pname.casefold().split()[0] in names

        colleagues = [f for f in facts if f.type == WORKS_WITH and (
            (is_speaker(f.source_name) and is_person(f.target_id, f.target_name))
            or (is_speaker(f.target_name) and is_person(f.source_id, f.source_name)))]
    for f in colleagues:
        if not LASTING_ROLES & set(re.findall(r"[a-z]+", f.fact.lower())):  # a mentor stays one after a move
            p.out.end_fact(f.id, f"left {org.name}")


def _person_left(p: Parse, facts: list[Any], speaker_names: set[str], speaker_projects: set[str],
                 event: PersonLeft) -> None:
    person = event.person
    names = {person.name.casefold(), *(a.casefold() for a in person.aliases)}

    def is_person(pid: str, pname: str) -> bool:
        return (bool(person.existing_id) and pid == person.existing_id) or pname.casefold() in names

    speaker_orgs = {f.target_id for f in facts if f.type == PART_OF and f.source_name.casefold() in speaker_names}
    for f in facts:
        if not is_person(f.source_id, f.source_name):
            continue
        ours = speaker_orgs if f.type == PART_OF else speaker_projects if f.type == WORKS_ON else None
        if ours is not None and (event.retired or f.target_id in ours):
            p.out.end_fact(f.id, "retired" if event.retired else "left")


def end_replaced_on_return(p: Parse) -> None:
    """"Coda got too expensive, so we're back on Notion": going back to a tool ends the speaker's use of the other
    tool the message names (what replaced it), unless the message says that one is still used."""
    doc = p.doc
    back = [t for t in doc if t.lower_ == "back" and t.i + 1 < len(doc) and doc[t.i + 1].lower_ in ("on", "to")]
    if not back or not p.speaker_ok:
        return
    for b in back:  # "Back on Figma after ...": a fragment that opens the sentence is the speaker's own return
        first = b.i == b.sent.start or all(t.is_punct or t.pos_ in ("INTJ", "ADV") for t in doc[b.sent.start:b.i])
        at = p.at[b.i + 2] if b.i + 2 < len(doc) else -1
        if first and at != -1 and p.mentions[at].type == TOOL and p.mentions[at].ref:
            p.out.add(SPEAKER, USES, p.mentions[at], None, 0.8, trace="rules: back on X")
    returned = {r.target for r in p.out.relations if r.source == SPEAKER and r.type == USES
                and any(b.i < next((m.start for m in p.mentions if m.ref == r.target), -1) <= b.i + 3 for b in back)}
    if not returned:
        return
    used = {r.target for r in p.out.relations if r.type == USES}
    for m in p.mentions:
        if m.type == TOOL and m.ref and m.ref not in returned and m.ref not in used:
            p.out.end(SPEAKER, USES, m, reason="went back")
