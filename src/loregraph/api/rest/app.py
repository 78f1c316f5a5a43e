"""The FastAPI application: routes, error mapping, size limit, and the worker's lifecycle.

The worker starts with the application and stops with it: on shutdown it takes no new job, the running
one finishes, and whatever is still pending stays in the database for the next start.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from loregraph import __version__
from loregraph.api.rest import documents, explorer, graphiti, native
from loregraph.api.rest.auth import KeyRing
from loregraph.api.rest.errors import register_error_handlers
from loregraph.api.rest.guard import OriginGuardMiddleware, served_hosts
from loregraph.api.rest.limits import BodyLimitMiddleware
from loregraph.assembly.service import Service
from loregraph.config import Settings
from loregraph.memory import Memory

log = logging.getLogger("loregraph.api")

DESCRIPTION = """Temporal knowledge-graph memory. `POST /messages` queues one durable job per message (202);
a worker ingests them in order (per group). Graphiti-compatible routes plus loregraph's own under `/groups/{id}`.
Authenticate with `Authorization: Bearer <key>` or `X-API-Key`; a key reaches only its groups."""


DOCS_ASSETS = "/docs/assets"


def _offline_docs(app: FastAPI) -> None:
    """Swagger UI at ``/docs`` from the files of the ``swagger-ui-bundle`` package: it works with no internet."""
    import swagger_ui_bundle

    app.mount(DOCS_ASSETS, StaticFiles(directory=str(swagger_ui_bundle.swagger_ui_path)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title="loregraph API",
                                   swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png")


def create_app(settings: Settings, memory: Memory | None = None, *, url: str | None = None,
               announce: Callable[[str], None] | None = None) -> FastAPI:
    """The REST interface of a ``Service`` over ``memory`` (opened from ``settings`` at start-up when not given;
    closed at shutdown).
    Once started, ``announce`` (default: the log) gets "loregraph serving on <url>"."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = await Service.start(settings, memory)
        app.state.services = service
        if url:
            (announce or log.info)(f"loregraph serving on {url} (worker {service.worker_state})")
        try:
            async with mcp_http.running():  # MCP tools at /mcp (streamable HTTP), same keys as REST
                yield
        finally:
            app.state.services = None
            await service.stop()

    app = FastAPI(title="loregraph", version=__version__, description=DESCRIPTION, lifespan=lifespan, docs_url=None,
                  redoc_url=None)
    _offline_docs(app)
    app.state.keyring = KeyRing(settings.api_keys)
    app.state.services = None
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_request_bytes,
                       read_timeout_s=settings.request_read_timeout_s)
    app.add_middleware(OriginGuardMiddleware, allowed_origins=settings.allowed_origins)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=served_hosts(settings.allowed_hosts,
                                                                         settings.auth_enabled))
    register_error_handlers(app)
    app.include_router(graphiti.router)
    app.include_router(native.router)
    app.include_router(native.health_router)
    app.include_router(documents.router)
    app.include_router(explorer.router)
    explorer.mount_ui(app)
    from loregraph.api.mcp.http import mount_mcp  # here: api.mcp imports api.rest.auth (and so this package)

    mcp_http = mount_mcp(app, settings)
    return app
