"""API keys scoped to groups. A key reads and writes only its groups; an admin key every group plus the
admin routes. With no keys configured every request is allowed (the server then binds to loopback only)."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from loregraph.config import ApiKey

log = logging.getLogger("loregraph.api")

_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="The API key (alternative header)")


@dataclass(frozen=True)
class Principal:
    name: str
    admin: bool
    groups: frozenset[str]
    keyless: bool = False
    """No API keys are configured: every group may be read and written, but nothing may be wiped."""

    def can(self, group_id: str) -> bool:
        return self.admin or group_id in self.groups

    def require(self, group_ids: str | Iterable[str]) -> None:
        """403 unless every group is in scope (checked before anything is read or written)."""
        for g in [group_ids] if isinstance(group_ids, str) else group_ids:
            if not self.can(g):
                log.warning("forbidden: key %r asked for a group outside its scope", self.name)
                raise HTTPException(403, f"this API key may not access group {g!r}")

    def require_destructive(self) -> None:
        """Routes that delete whole groups or the whole graph need a key even on a keyless (loopback) server: a
        web page the user visits could otherwise send the request."""
        if self.keyless:
            log.warning("forbidden: a destructive route on a server with no API keys")
            raise HTTPException(403, "this route deletes data wholesale and needs an admin API key: configure "
                                     "api_keys (LOREGRAPH_API_KEYS) with one marked admin: true")

    def require_admin(self) -> None:
        self.require_destructive()
        if not self.admin:
            log.warning("forbidden: key %r asked for an admin route", self.name)
            raise HTTPException(403, "this route needs an admin API key")


LOCAL = Principal("local (no API keys configured)", True, frozenset(), keyless=True)


class KeyRing:
    def __init__(self, keys: list[ApiKey]):
        self.keys = [(k.key.get_secret_value().encode(), k) for k in keys]

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    def authenticate(self, presented: str | None) -> Principal | None:
        if not self.enabled:
            return LOCAL
        if not presented:
            return None
        given = presented.encode()
        found = None
        for secret, key in self.keys:  # compare against every key: timing says nothing about which matched
            if hmac.compare_digest(given, secret):
                found = key
        if found is None:
            return None
        return Principal(found.name or f"key#{[k for _, k in self.keys].index(found)}", found.admin,
                         frozenset(found.groups))


async def principal(request: Request, bearer: HTTPAuthorizationCredentials | None = Depends(_bearer),
                    api_key: str | None = Depends(_header)) -> Principal:
    ring: KeyRing = request.app.state.keyring
    presented = bearer.credentials if bearer is not None else api_key
    who = ring.authenticate(presented)
    if who is None:
        log.warning("unauthorized: %s API key on %s %s", "unknown" if presented else "missing", request.method,
                    request.url.path)
        raise HTTPException(401, "missing or unknown API key", headers={"WWW-Authenticate": "Bearer"})
    return who
