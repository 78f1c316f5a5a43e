"""A consistent copy of a SQLite database while a service writes to it: SQLite's online backup API."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from loregraph.errors import InvalidInputError, StoreError
from loregraph.store import url_scheme

log = logging.getLogger("loregraph.transfer")


def sqlite_path(url: str | Path) -> Path:
    """The file of a ``sqlite:///`` URL or a bare path."""
    text = str(url)
    if url_scheme(text) != "sqlite":
        raise InvalidInputError(f"db: backup copies SQLite databases (sqlite:///path.db); for PostgreSQL use "
                                f"pg_dump or `loregraph export` (got {url_scheme(text)}://)")
    path = text[len("sqlite:///"):] if text.startswith("sqlite:///") else text  # as SQLiteStore.from_url
    if "://" in path or not path:
        raise InvalidInputError(f"db: {text!r} is not sqlite:///path.db or a file path")
    return Path(path).expanduser()


def backup_sqlite(url: str | Path, out: str | Path) -> dict[str, float]:
    """Copy the database at ``url`` into the new file ``out``. The copy is one step of the backup API, taken
    under a read transaction: it is the database as of one commit, whatever writers do meanwhile (WAL lets them
    go on). Returns pages copied and seconds."""
    import sqlean

    src_path, dst_path = sqlite_path(url), Path(out)
    if not src_path.is_file():
        raise InvalidInputError(f"db: no database file at {src_path}")
    if dst_path.exists():
        raise InvalidInputError(f"out: {dst_path} exists already; backup writes a new file")
    t0 = time.perf_counter()
    src = sqlean.connect(str(src_path), timeout=30.0)
    try:
        dst = sqlean.connect(str(dst_path))
        try:
            src.backup(dst, pages=-1)  # all pages in one step: one snapshot
            pages = dst.execute("PRAGMA page_count").fetchone()[0]
            ok = dst.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            dst.close()
    except Exception as exc:
        dst_path.unlink(missing_ok=True)
        raise StoreError(f"backup of {src_path} failed: {exc}") from exc
    finally:
        src.close()
    if ok != "ok":
        dst_path.unlink(missing_ok=True)
        raise StoreError(f"backup of {src_path} failed its integrity check: {ok}")
    took = time.perf_counter() - t0
    log.info("backed up %d pages in %.2f s", pages, took)
    return {"pages": float(pages), "seconds": took}


__all__ = ["backup_sqlite", "sqlite_path"]
