"""Stage 6, collector: relations and endings gathered once each, with their fact sentences."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loregraph.extract.base import SPEAKER, ExtractedEnding, ExtractedRelation
from loregraph.extract.local.endings import EndingEvent, OrgDropped, ProjectDropped, SpeakerDropped
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
    RELATED_TO,
    TOOL,
    USES,
    WORKS_ON,
    WORKS_WITH,
)
from loregraph.extract.local.words import GROUP_HEADS, TEAM_HEADS

FACT_TEMPLATES: dict[str, str] = {
    USES: "{s} uses {o}",
    PREFERS: "{s} prefers {o}",
    DECIDED: "{s} decided to use {o}",
    WORKS_ON: "{s} works on {o}",
    WORKS_WITH: "{s} works with {o}",
    KNOWS: "{s} knows {o}",
    DEPENDS_ON: "{s} depends on {o}",
    PART_OF: "{s} is part of {o}",
    RELATED_TO: "{o} is {s}'s pet",  # the one generic relation the rules state (context "pet")
}


@dataclass(slots=True)
class Collector:
    """Relations, endings and ending events of one message; ``SPEAKER`` or mentions as endpoints."""

    speaker_ok: bool
    speaker_name: str
    relations: list[ExtractedRelation] = field(default_factory=list)
    endings: list[ExtractedEnding] = field(default_factory=list)
    events: list[EndingEvent] = field(default_factory=list)
    clause_we: bool = False  # the clause being related speaks as "we"
    clause_at: Any = None  # the time the clause being related names ("last week"), if any
    _rel_keys: set[tuple[str, str, str]] = field(default_factory=set)
    _end_keys: set[tuple[Any, ...]] = field(default_factory=set)
    _pairs: set[tuple[str, str]] = field(default_factory=set)

    def ref(self, x: Any) -> str | None:
        if x is SPEAKER:
            return SPEAKER if self.speaker_ok else None
        return x.ref or None

    def display(self, x: Any) -> str:
        return self.speaker_name if x is SPEAKER else x.name

    def has(self, s: Any, rtype: str, o: Any) -> bool:
        """Whether the relation ``s rtype o`` was added."""
        sr, orf = self.ref(s), self.ref(o)
        return bool(sr and orf and (sr, rtype, orf) in self._rel_keys)

    def related(self, s: Any, o: Any) -> bool:
        """Whether a relation or an ending between ``s`` and ``o`` (either direction) is already there."""
        sr, orf = self.ref(s), self.ref(o)
        return bool(sr and orf and ({(sr, orf), (orf, sr)} & self._pairs))

    def add(self, s: Any, rtype: str, o: Any, cl: Any, conf: float, qualifier: str = "",
            role: str = "", trace: str = "rules", context: str = "") -> None:
        """Add the relation ``s rtype o`` unless it (or its symmetric twin) is already there."""
        if rtype == USES and getattr(o, "type", "") == ORGANIZATION and (s is SPEAKER or s.type == PERSON) \
                and o.name.split()[-1].lower() in TEAM_HEADS | GROUP_HEADS:
            rtype = PART_OF  # "sits on the payments team", "trains with the Harbour Triathlon Club": people belong
            # to teams and clubs, they don't use them
        if rtype == USES and s is not SPEAKER and getattr(s, "type", "") == TOOL:
            rtype = DEPENDS_ON  # "ArcGIS Enterprise, backed by SQL Server": a tool that uses another depends on it
        if rtype in (WORKS_ON, WORKS_WITH, KNOWS) and s is not SPEAKER and getattr(s, "type", "") != PERSON:
            return  # "so it's just me on Atlas" read with the work before it as the subject: only people work
        sr, orf = self.ref(s), self.ref(o)
        if not sr or not orf or sr == orf or (s is not SPEAKER and o is not SPEAKER
                                              and self.display(s).casefold() == self.display(o).casefold()):
            return  # nothing is related to itself, even when the name was read as two things
        key = (sr, rtype, orf)
        if key in self._rel_keys:
            return
        if rtype in (WORKS_WITH, KNOWS) and (orf, rtype, sr) in self._rel_keys:
            return
        self._rel_keys.add(key)
        self._pairs.add((sr, orf))
        sd, od = self.display(s), self.display(o)
        poss = "their" if s is SPEAKER else (f"{sd}'s")
        fact = FACT_TEMPLATES[rtype].format(s=sd, o=od)
        if role:
            fact = f"{od} is {sd}'s {role}" if s is not SPEAKER else f"{sd} works with {od}, {poss} {role}"
            if rtype == KNOWS:
                fact = f"{sd} knows {od}, {poss} {role}"
        if qualifier:
            fact = f"{fact} {qualifier}"
        when = getattr(cl, "when", None)
        valid_at, attrs = (when.when, {"time_phrase": when.phrase}) if when is not None else (None, {})
        if context:
            attrs["context"] = context
        self.relations.append(ExtractedRelation(source=sr, type=rtype, target=orf, fact=fact,
                                                confidence=round(conf, 2), trace=trace, valid_at=valid_at,
                                                attributes=attrs))

    def close(self, s: Any, rtype: str, o: Any, cl: Any, at: Any, trace: str) -> None:
        """``s rtype o`` held until ``at`` ("I finished X last week"): the relation with its end, and the ending
        of the same fact if it is already stored."""
        self.add(s, rtype, o, cl, 0.8, trace=trace)
        sr, orf = self.ref(s), self.ref(o)
        for r in self.relations:
            if (r.source, r.type, r.target) == (sr, rtype, orf):
                # a later "so good to have it done" confirms an end said earlier; it does not move it
                r.invalid_at = at if r.invalid_at is None else min(r.invalid_at, at)
                at = r.invalid_at
                r.valid_at = r.valid_at if r.valid_at is not None and r.valid_at <= at else at
        self.end(s, rtype, o, reason="finished", at=at)

    def end(self, s: Any, rtype: str | None, o: Any, reason: str = "ended", at: Any = None) -> None:
        """Say that ``s rtype o`` has ended (``rtype`` None: any relation between the two)."""
        sr, orf = self.ref(s), self.ref(o)
        if not sr or not orf or sr == orf or (s is not SPEAKER and o is not SPEAKER
                                              and self.display(s).casefold() == self.display(o).casefold()):
            return  # nothing is related to itself, even when the name was read as two things
        key = (sr, rtype, orf)
        if key in self._end_keys or (sr, None, orf) in self._end_keys:
            return
        self._end_keys.add(key)
        self._pairs.add((sr, orf))
        # "we moved X from A to B last week": the ending happened when the clause says, like its successor
        self.endings.append(ExtractedEnding(source=sr, type=rtype, target=orf, reason=reason,
                                            at=at if at is not None else self.clause_at))  # a code, never raw text
        if s is SPEAKER and rtype in (None, USES) and getattr(o, "type", "") in (TOOL, CONCEPT) \
                and (self.clause_we or reason == "replaced"):  # ("X got replaced by Y": on the speaker's side)
            self.events.append(SpeakerDropped(o))
        if s is not SPEAKER and getattr(s, "type", "") == ORGANIZATION and rtype in (None, USES) \
                and getattr(o, "type", "") in (TOOL, CONCEPT):
            self.events.append(OrgDropped(s, o))  # "Acme moved off X": a member's use of X ends too
        if s is not SPEAKER and getattr(s, "type", "") == PROJECT and rtype in (None, USES, DEPENDS_ON) \
                and getattr(o, "type", "") in (TOOL, CONCEPT):
            self.events.append(ProjectDropped(s, o))  # "moved X off Y": "Z uses Y for X" ends too

    def names(self, ref: str) -> bool:
        """Whether a relation or an ending said so far has the entity ``ref`` at either end."""
        return any(ref in pair for pair in self._pairs)

    def forget(self, ref: str) -> None:
        """Take back the relations of the entity ``ref`` said so far (a later stage retyped it)."""
        self.relations = [r for r in self.relations if ref not in (r.source, r.target)]
        self._rel_keys = {k for k in self._rel_keys if ref not in (k[0], k[2])}
        self._pairs = {p for p in self._pairs if ref not in p}

    def cancel_end(self, s: Any, o: Any) -> None:
        """Take back the endings of ``s`` → ``o`` said so far (a later stage read the clause as the start)."""
        sr, orf = self.ref(s), self.ref(o)
        if not sr or not orf:
            return
        self.endings = [e for e in self.endings if (e.source, e.target) != (sr, orf)]
        self._end_keys = {k for k in self._end_keys if not (len(k) == 3 and (k[0], k[2]) == (sr, orf))}

    def end_fact(self, fact_id: str, reason: str, at: Any = None) -> None:
        """End an offered candidate fact by id."""
        if ("fact", fact_id) in self._end_keys:
            return
        self._end_keys.add(("fact", fact_id))
        self.endings.append(ExtractedEnding(fact_id=fact_id, reason=reason, at=at))
