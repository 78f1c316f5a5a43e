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
    """The group of a record named only by id. A record outside the caller's groups is reported exactly like a
    missing one (404), so ids of other groups can be neither read, changed nor probed."""
    gid = await svc.memory.record_group(kind, record_id)
    if gid is None or not who.can(gid):
        raise HTTPException(404, f"{kind} {record_id} not found")
    return gid
