"""Stage 5, endings: typed events raised while relating clauses, turned into endings of offered facts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loregraph.extract.base import SPEAKER
from loregraph.extract.local.kinds import DEPENDS_ON, KNOWS, PART_OF, USES, WORKS_ON, WORKS_WITH

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


EndingEvent = SpeakerDropped | MovedProject | MovedOrg | OrgDropped | ProjectDropped | NewRole


def apply_supersede(p: Parse) -> None:
    """Endings of offered facts that the message clearly replaces."""
    facts = p.ctx.candidate_facts
    if not facts:
        return
    speaker_names = {"user", "speaker", "me", p.speaker_name.lower()}
    speaker_projects = {f.target_id for f in facts if f.type == WORKS_ON
                        and f.source_name.casefold() in speaker_names}
    for event in p.out.events:
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
                         (s is SPEAKER and f.source_name.casefold() in speaker_names)
                if src_ok:
                    p.out.end_fact(f.id, f"moved to {newp.name}")
            continue
        if isinstance(event, OrgDropped):
            org, tool = event.org, event.tool
            member = any(f.type == PART_OF and f.source_name.casefold() in speaker_names and (
                (org.existing_id and f.target_id == org.existing_id) or f.target_name.casefold() == org.name.casefold())
                for f in facts)
            if member:
                for f in facts:
                    if f.type == USES and f.source_name.casefold() in speaker_names and (
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
                src_ok = (s is not SPEAKER and (f.source_id == s.existing_id or
                                                f.source_name.casefold() == sname.casefold())) or \
                         (s is SPEAKER and f.source_name.casefold() in speaker_names)
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
            if f.source_name.casefold() in speaker_names or f.fact.lower().startswith(
                    tuple(speaker_names)) or re.search(r"\b(user|speaker)'s\b", f.fact, re.I):
                p.out.end_fact(f.id, f"new {role}: {m.name}")
