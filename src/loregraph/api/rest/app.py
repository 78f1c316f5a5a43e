"""The FastAPI application: routes, error mapping, size limit, and the worker's lifecycle.

The worker starts with the application and stops with it: on shutdown it takes no new job, the running
one finishes, and whatever is still pending stays in the database for the next start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from loregraph import __version__
from loregraph.api.rest import graphiti, native
from loregraph.api.rest.auth import KeyRing
from loregraph.api.rest.deps import Services
from loregraph.api.rest.limits import BodyLimitMiddleware
from loregraph.config import Settings
from loregraph.jobs import Worker, open_queue
from loregraph.memory import Memory
from loregraph.schema import SchemaViolationError
from loregraph.store import NotFoundError, StoreError

log = logging.getLogger("loregraph.api")

DESCRIPTION = """Temporal knowledge-graph memory. `POST /messages` queues one durable job per message (202);
a worker ingests them in order (per group). Graphiti-compatible routes plus loregraph's own under `/groups/{id}`.
Authenticate with `Authorization: Bearer <key>` or `X-API-Key`; a key reaches only its groups."""


def _register_errors(app: FastAPI) -> None:
    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(SchemaViolationError)
    async def _schema(request: Request, exc: SchemaViolationError) -> JSONResponse:
        detail = [{"loc": [v.record, v.field], "msg": v.message, "id": v.record_id} for v in exc.violations]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(ValidationError)
    async def _validation(request: Request, exc: ValidationError) -> JSONResponse:
        detail = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                  for e in exc.errors(include_input=False, include_url=False)]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(ValueError)
    async def _value(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError) -> JSONResponse:
        log.error("store error on %s %s: %s", request.method, request.url.path, type(exc).__name__)
        return JSONResponse({"detail": "the store is unavailable"}, status_code=503)


def create_app(settings: Settings, memory: Memory | None = None, *, url: str | None = None,
               announce: Callable[[str], None] | None = None) -> FastAPI:
    """The service over ``memory`` (opened from ``settings`` at start-up when not given; closed at shutdown).
    Once started, ``announce`` (default: the log) gets "loregraph serving on <url>"."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if memory is None:
            from loregraph.api.rest.serve import open_memory

            mem = await asyncio.to_thread(open_memory, settings)
        else:
            mem = memory
        version = await mem.run_on_store_thread(lambda: mem.store.schema_version)
        queue = await asyncio.to_thread(open_queue, mem.store, max_attempts=settings.job_max_attempts)
        worker = Worker(mem, queue, max_attempts=settings.job_max_attempts)
        if settings.worker:
            await worker.start()
        app.state.services = Services(mem, queue, worker, settings, version)
        if url:
            where = "started" if worker.running else ("disabled" if not settings.worker else
                                                       "runs in another process")
            (announce or log.info)(f"loregraph serving on {url} (worker {where})")
        try:
            yield
        finally:
            await worker.stop(settings.shutdown_timeout_s)
            app.state.services = None
            queue.close()
            await mem.close()
            log.info("loregraph stopped")

    app = FastAPI(title="loregraph", version=__version__, description=DESCRIPTION, lifespan=lifespan)
    app.state.keyring = KeyRing(settings.api_keys)
    app.state.services = None
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_request_bytes)
    _register_errors(app)
    app.include_router(graphiti.router)
    app.include_router(native.router)
    app.include_router(native.health_router)
    return app
