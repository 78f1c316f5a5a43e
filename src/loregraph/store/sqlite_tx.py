"""One SQLite write transaction, as the store and the job queue each open it on their own connection."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from loregraph.errors import StoreError, lock_timeout_error

log = logging.getLogger("loregraph.store")


@contextmanager
def immediate_transaction(conn: Any, label: str, *, before_commit: Callable[[], None] | None = None,
                          on_failure: Callable[[], None] | None = None) -> Iterator[Any]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` on ``conn`` (``label`` names the database in logs).

    A lock wait past the busy timeout is a ``StoreBusyError`` (nothing written; retry). Any failure, the COMMIT's
    own included (a constraint checked at COMMIT, a full disk, an I/O error), rolls back what SQLite still has
    open — it keeps a transaction, and the write lock with it, open after some failed COMMITs — so the connection
    takes the next write; a failed COMMIT is a ``StoreError``. ``before_commit`` runs last inside the transaction,
    ``on_failure`` first when it fails."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except Exception as exc:  # another writer held the lock past the busy timeout
        busy = lock_timeout_error(exc)
        if busy is not None:
            raise busy from exc
        raise
    committing = False
    try:
        yield conn
        if before_commit is not None:
            before_commit()
        committing = True
        conn.execute("COMMIT")
    except BaseException as exc:
        if on_failure is not None:
            on_failure()
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except Exception as rollback_exc:  # the original failure is what the caller needs to see
                log.error("rollback failed on %s: %s", label, type(rollback_exc).__name__)
        if not isinstance(exc, Exception):
            raise
        busy = lock_timeout_error(exc)
        if busy is not None and busy is not exc:
            raise busy from exc
        if committing and not isinstance(exc, StoreError):
            log.error("commit failed on %s: %s", label, type(exc).__name__)
            raise StoreError(f"the transaction could not be committed ({type(exc).__name__}: {exc}); "
                             "nothing was written") from exc
        raise


__all__ = ["immediate_transaction"]
