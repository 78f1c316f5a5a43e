"""Storage: the Store protocol and its backends."""

from __future__ import annotations

from pathlib import Path

from loregraph.store.base import EmbedderMismatchError, Hit, NotFoundError, Store, StoreError, TimeFilter


def open_store(url: str | Path) -> Store:
    """Open a store from a URL: ``sqlite:///path.db`` (``:memory:`` is refused), a bare path (SQLite), or
    ``postgresql://user@host:port/db`` (PostgreSQL 15 + pgvector)."""
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        from loregraph.store.postgres import PostgresStore

        return PostgresStore(text)
    if text.startswith("sqlite:///"):
        path = text[len("sqlite:///"):]
    elif "://" in text:
        raise StoreError(f"unsupported database URL {text!r}: use sqlite:///path.db or a file path")
    else:
        path = text
    if not path or path == ":memory:":
        raise StoreError("an SQLite database needs a file path (sqlite:///path/to/memory.db)")
    from loregraph.store.sqlite import SQLiteStore

    return SQLiteStore(Path(path).expanduser())


__all__ = ["EmbedderMismatchError", "Hit", "NotFoundError", "Store", "StoreError", "TimeFilter", "open_store"]
