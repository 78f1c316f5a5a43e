"""Request size and time limits: a body over ``max_bytes`` gets 413 before it is parsed (declared or streamed); a
body that stalls for ``read_timeout_s`` between chunks gets 408, so a slow client cannot hold a connection."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DRAIN_LIMIT = 64 * 1024 * 1024


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int, read_timeout_s: float = 30.0):
        self.app = app
        self.max_bytes = max_bytes
        self.read_timeout_s = read_timeout_s

    def _detail(self) -> str:
        return f"request body larger than {self.max_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                too_big = False
            if too_big:
                await self._drain(receive, int(declared))
                await self._reject(send)
                return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            try:
                msg = await asyncio.wait_for(receive(), self.read_timeout_s)
            except TimeoutError:
                raise HTTPException(408, f"the request body stalled for {self.read_timeout_s:g} s") from None
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, self._detail())  # FastAPI passes HTTPExceptions through
            return msg

        await self.app(scope, limited, send)

    async def _drain(self, receive: Receive, declared: int) -> None:
        """Read (and drop) a moderately oversized body so the client sees the 413 instead of a reset."""
        if declared > DRAIN_LIMIT:
            return
        while True:
            msg = await receive()
            if msg["type"] != "http.request" or not msg.get("more_body"):
                return

    async def _reject(self, send: Send) -> None:
        body: Any = json.dumps({"detail": self._detail()}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
