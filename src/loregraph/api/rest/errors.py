"""The one place REST maps loregraph's errors (``loregraph.errors``) to HTTP answers."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from loregraph.errors import (
    ConflictError,
    InvalidInputError,
    NotFoundError,
    SchemaViolationError,
    StoreBusyError,
    StoreError,
)

log = logging.getLogger("loregraph.api")
STORE_RETRY_AFTER_S = 5


def register_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(ConflictError)
    async def _conflict(request: Request, exc: ConflictError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(SchemaViolationError)
    async def _schema(request: Request, exc: SchemaViolationError) -> JSONResponse:
        detail = [{"loc": [v.record, v.field], "msg": v.message, "id": v.record_id} for v in exc.violations]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(InvalidInputError)
    async def _invalid(request: Request, exc: InvalidInputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(ValidationError)
    async def _validation(request: Request, exc: ValidationError) -> JSONResponse:
        detail = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
                  for e in exc.errors(include_input=False, include_url=False)]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(StoreBusyError)
    async def _busy(request: Request, exc: StoreBusyError) -> JSONResponse:
        """A lock wait timed out: retry soon; the store itself is fine (health stays ok)."""
        log.warning("lock wait timed out on %s %s: %s", request.method, request.url.path,
                    type(exc.__cause__ or exc).__name__)
        return JSONResponse({"detail": StoreBusyError.PUBLIC_MESSAGE}, status_code=503,
                            headers={"Retry-After": str(StoreBusyError.RETRY_AFTER_S)})

    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError) -> JSONResponse:
        log.error("store error on %s %s: %s", request.method, request.url.path, type(exc).__name__)
        service = getattr(request.app.state, "services", None)
        if service is not None:
            service.note_store_failure()
        return JSONResponse({"detail": "the store is unavailable; try again later"}, status_code=503,
                            headers={"Retry-After": str(STORE_RETRY_AFTER_S)})


__all__ = ["register_error_handlers"]
