"""One error tree (loregraph.errors), raised by every layer and mapped once by each interface."""

from __future__ import annotations

import asyncio
import inspect
import socket
import threading
import time

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

import loregraph.errors as errors_module
from loregraph.api.rest.errors import register_error_handlers
from loregraph.errors import (
    ConfigError,
    ConflictError,
    InvalidInputError,
    LoregraphError,
    NotFoundError,
    SchemaViolationError,
    StoreError,
    Violation,
)


def test_every_error_of_the_module_is_in_the_tree():
    classes = [c for _, c in inspect.getmembers(errors_module, inspect.isclass)
               if issubclass(c, Exception) and c.__module__ == errors_module.__name__]
    assert len(classes) >= 10
    assert all(issubclass(c, LoregraphError) for c in classes)


def test_layers_raise_the_tree_not_bare_builtins(tmp_path):
    from loregraph.graph.types import validate_group_id
    from loregraph.schema import Schema
    from loregraph.store import open_store

    with pytest.raises(InvalidInputError, match="group_id"):
        validate_group_id("no spaces allowed")
    with pytest.raises(LoregraphError, match="not found"):
        Schema.load(tmp_path / "missing.json")
    with pytest.raises(StoreError, match="scheme"):
        open_store("mysql://somewhere/db")
    with pytest.raises(StoreError, match="file path"):
        open_store("sqlite:///:memory:")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def error_server():
    """A real server on loopback whose routes raise each error of the tree; mapped by the REST mapping."""
    app = FastAPI()
    register_error_handlers(app)
    raising = {
        "invalid": InvalidInputError("limit: must be at least 1"),
        "violation": SchemaViolationError([Violation("facts[0]", "type", "unknown edge type 'X'", "f1")]),
        "missing": NotFoundError("entity e1 not found in group g"),
        "conflict": ConflictError("id e1 names records in several of your groups"),
        "store": StoreError("disk I/O error"),
        "bare": ValueError("a bug, not an input problem"),
        "config": ConfigError("db: unsupported URL"),
    }
    def raiser(exc: Exception):
        async def route() -> None:
            raise exc
        return route

    for name, exc in raising.items():
        app.add_api_route(f"/{name}", raiser(exc), methods=["GET"])
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def test_rest_maps_the_tree_once(error_server):
    async def go() -> dict[str, httpx.Response]:
        out = {}
        for n in ("invalid", "violation", "missing", "conflict", "store", "bare", "config"):
            async with httpx.AsyncClient(base_url=error_server, timeout=10) as c:  # a 500 closes the connection
                out[n] = await c.get(f"/{n}")
        return out

    got = asyncio.run(go())
    assert got["invalid"].status_code == 422 and "limit" in got["invalid"].json()["detail"]
    assert got["violation"].status_code == 422
    assert got["violation"].json()["detail"] == [{"loc": ["facts[0]", "type"], "msg": "unknown edge type 'X'",
                                                  "id": "f1"}]
    assert got["missing"].status_code == 404
    assert got["conflict"].status_code == 409
    assert got["store"].status_code == 503 and "disk" not in got["store"].text  # no internals leak
    assert int(got["store"].headers["Retry-After"]) > 0
    # a bare ValueError is a bug, not bad input: it is not dressed up as a 422
    assert got["bare"].status_code == 500
    # configuration errors never reach a running service's clients as input problems
    assert got["config"].status_code == 500
