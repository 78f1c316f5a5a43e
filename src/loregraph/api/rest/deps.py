"""What every route needs: the Service (Memory facade, job queue, worker, settings) and the caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request

from loregraph.api.rest.auth import Principal, principal
from loregraph.assembly.service import Service
from loregraph.graph.types import GROUP_ID_PATTERN
from loregraph.store.base import SearchKind


def services(request: Request) -> Service:
    svc = getattr(request.app.state, "services", None)
    if svc is None:
        raise HTTPException(503, "the service is starting or stopping")
    return svc


Svc = Annotated[Service, Depends(services)]
Who = Annotated[Principal, Depends(principal)]
GroupPath = Annotated[str, Path(min_length=1, max_length=128, pattern=GROUP_ID_PATTERN.pattern,
                                description="Group id: 1-128 letters, digits, '_', '-', '.', ':' or '@'")]
IdPath = Annotated[str, Path(min_length=1, max_length=128)]


async def readable_group_of(svc: Service, who: Principal, kind: SearchKind, record_id: str) -> str:
    """The group of a record named only by id, among the groups the caller may read. Ids are per group: a record
    outside the caller's groups is reported exactly like a missing one (404), so ids of other groups can be
    neither read, changed nor probed; an id in several of the caller's groups is ambiguous (409)."""
    within = None if who.admin else sorted(who.groups)
    found = await svc.memory.record_groups(kind, record_id, within)
    if not found:
        raise HTTPException(404, f"{kind} {record_id} not found")
    if len(found) > 1:
        raise HTTPException(409, f"{kind} {record_id} exists in several of your groups ({', '.join(found)}); "
                                 f"use a route that names the group")
    return found[0]
