"""Storage: the Store protocol and its backends."""

from __future__ import annotations

from pathlib import Path

from loregraph.store.base import EmbedderMismatchError, Hit, NotFoundError, Store, StoreError, TimeFilter


def open_store(url: str | Path) -> Store:
    """Open a store from a URL: ``sqlite:///path.db``, ``sqlite:///:memory:`` is refused, a bare path is SQLite."""
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        raise StoreError("the PostgreSQL backend is not available in this version; use sqlite:///path.db")
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
