"""Storage: the Store protocol and its backends, chosen once by URL scheme.

Each backend is one module with one class (``sqlite.SQLiteStore``, ``postgres.PostgresStore``) registered here by
scheme; ``open_store(url)`` is the only place a URL is looked at. A backend describes itself through
``Store.capabilities`` and opens its own job queue (``Store.open_queue``), so no caller branches on its class.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from loregraph.errors import EmbedderMismatchError, NotFoundError, StoreError
from loregraph.store.base import Hit, Store, StoreCapabilities, TimeFilter

StoreFactory = Callable[[str], Store]

# scheme -> "module:Class" whose ``from_url(url)`` opens it (imported only when used: psycopg loads lazily)
_BACKENDS: dict[str, str | StoreFactory] = {
    "sqlite": "loregraph.store.sqlite:SQLiteStore",
    "postgresql": "loregraph.store.postgres:PostgresStore",
    "postgres": "loregraph.store.postgres:PostgresStore",
}


def register_backend(scheme: str, factory: StoreFactory) -> None:
    """Make ``scheme://...`` URLs open with ``factory(url)`` (for third-party backends)."""
    _BACKENDS[scheme.lower()] = factory


def url_scheme(url: str | Path) -> str:
    """The backend scheme of a database URL; a bare path means SQLite."""
    text = str(url)
    if "://" not in text:
        return "sqlite"
    return text.split("://", 1)[0].lower()


def open_store(url: str | Path) -> Store:
    """Open (and migrate) the store at ``url``: ``sqlite:///path.db`` or a bare file path (SQLite; ``:memory:``
    is refused), or ``postgresql://user@host:port/db`` (PostgreSQL 15 + pgvector)."""
    scheme = url_scheme(url)
    backend = _BACKENDS.get(scheme)
    if backend is None:
        known = ", ".join(f"{s}://" for s in sorted(_BACKENDS))
        raise StoreError(f"unsupported database URL scheme {scheme!r}: use one of {known} or a file path")
    if callable(backend):
        return backend(str(url))
    module_name, _, cls_name = backend.partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    store: Store = cls.from_url(str(url))
    return store


__all__ = ["EmbedderMismatchError", "Hit", "NotFoundError", "Store", "StoreCapabilities", "StoreError", "TimeFilter",
           "open_store", "register_backend", "url_scheme"]
