"""Browser-borne attacks on the service: a web page the user visits can send requests to a server on their own
machine (cross-site POST) or reach it through a DNS name it controls (DNS rebinding, a foreign ``Host``).

- Only allowed ``Host`` names are served: loopback names when no API keys are configured, else the configured
  ``allowed_hosts`` (Starlette's ``TrustedHostMiddleware``).
- State-changing requests (POST, PUT, PATCH, DELETE) that carry a foreign ``Origin`` — not the server's own, not in
  ``allowed_origins`` — are refused with 403 before any route runs.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("loregraph.api")

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def served_hosts(allowed_hosts: list[str], auth_enabled: bool) -> list[str]:
    """The Host names to serve: the configured ones, else loopback only without keys, else any."""
    if allowed_hosts:
        return allowed_hosts
    return LOOPBACK_HOSTS if not auth_enabled else ["*"]


def _origin_key(value: str) -> tuple[str, str] | None:
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc:
        return None
    return parts.scheme.lower(), parts.netloc.lower()


class OriginGuardMiddleware:
    """403 for a state-changing request whose ``Origin`` is neither the server's own nor allowed."""

    def __init__(self, app: ASGIApp, allowed_origins: list[str]):
        self.app = app
        self.allowed = {k for k in (_origin_key(o) for o in allowed_origins) if k is not None}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in UNSAFE_METHODS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin")
        if origin is None:  # not a browser's cross-site request (browsers send Origin on those)
            await self.app(scope, receive, send)
            return
        key = _origin_key(origin.decode("latin-1"))
        own = (scope.get("scheme", "http"), headers.get(b"host", b"").decode("latin-1").lower())
        if key is not None and (key == own or key in self.allowed):
            await self.app(scope, receive, send)
            return
        log.warning("refused a %s %s from a foreign origin", scope.get("method"), scope.get("path"))
        body = json.dumps({"detail": "cross-origin request refused: the Origin is not this server's (configure "
                                     "allowed_origins to permit it)"}).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


__all__ = ["LOOPBACK_HOSTS", "OriginGuardMiddleware", "served_hosts"]
