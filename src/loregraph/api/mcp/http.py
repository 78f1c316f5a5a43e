"""MCP over streamable HTTP, mounted on the REST application at ``/mcp``: the same API keys as REST (a key reaches
only its groups; a missing or unknown key gets 401 before any MCP message is read)."""

from __future__ import annotations

import json
import logging
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from loregraph.api.mcp.server import build_server
from loregraph.api.rest.auth import KeyRing
from loregraph.config import Settings
from loregraph.errors import StoreError
from loregraph.memory import Memory

log = logging.getLogger("loregraph.mcp")
PATH = "/mcp"


class _RequireKey:
    """ASGI wrapper: 401 unless the request carries a known API key (when keys are configured)."""

    def __init__(self, app: Any, keyring: KeyRing):
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.keyring.enabled:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            auth = headers.get("authorization", "")
            presented = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get("x-api-key")
            if self.keyring.authenticate(presented) is None:
                log.warning("mcp: unauthorized: %s API key", "unknown" if presented else "missing")
                body = json.dumps({"detail": "missing or unknown API key"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class McpHttp:
    """The MCP server of one REST application; ``running()`` belongs in the application's lifespan."""

    def __init__(self, app: FastAPI, settings: Settings):
        keyring: KeyRing = app.state.keyring

        def memory() -> Memory:
            services = app.state.services
            if services is None:
                raise StoreError("the service is not started")
            return services.memory

        self.server: MCPServer = build_server(memory, keyring=keyring)
        # with API keys, keys guard the endpoint (any Host); without, only loopback names (DNS rebinding)
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if keyring.enabled else None
        self.server.streamable_http_app(streamable_http_path=PATH, transport_security=security,
                                        max_request_body_size=settings.max_request_bytes)
        endpoint = _RequireKey(StreamableHTTPASGIApp(self.server.session_manager), keyring)
        app.router.routes.append(Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"],
                                       include_in_schema=False))

    def running(self) -> AbstractAsyncContextManager[None]:
        return self.server.session_manager.run()


def mount_mcp(app: FastAPI, settings: Settings) -> McpHttp:
    """Serve the MCP tools at ``/mcp`` of ``app`` (call ``running()`` in its lifespan)."""
    return McpHttp(app, settings)


__all__ = ["PATH", "McpHttp", "mount_mcp"]
