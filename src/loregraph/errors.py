"""The errors loregraph raises on purpose, as one tree.

Every layer raises these; every interface maps them once (REST: ``api/rest/errors.py``, gRPC: ``api/grpc/errors.py``,
CLI: ``cli/app.py``):

    LoregraphError
    ├── InvalidInputError       bad input, naming the field and the rule            → 422 / exit 1
    │   └── SchemaViolationError    a write broke the schema (every violation listed)
    ├── NotFoundError           a record asked for by id is not in the group          → 404
    ├── ConflictError           the request clashes with what exists (e.g. an id in two groups) → 409
    ├── StoreError              the store cannot be opened, migrated or written       → 503
    │   ├── StoreBusyError          a write waited too long for another writer's lock  → 503 + Retry-After / UNAVAILABLE
    │   └── EmbedderMismatchError   the database was built with another embedding model
    ├── SchemaError             an ontology file is unusable
    ├── ConfigError             settings are unusable; the message says what to fix
    ├── StartupError            a process cannot start; the message says what to fix
    └── ModelUnavailableError   a local model cannot be loaded or exported here

Errors keep their historical Python bases too (``ValueError``, ``LookupError``, ``RuntimeError``), so code
that caught those still works.
"""

from __future__ import annotations

from dataclasses import dataclass


class LoregraphError(Exception):
    """Base of every error loregraph raises on purpose."""


class InvalidInputError(LoregraphError, ValueError):
    """Input broke a rule; the message names the field and the rule."""


class NotFoundError(LoregraphError, LookupError):
    """A record asked for by id does not exist in the group."""


class ConflictError(LoregraphError):
    """The request clashes with what exists (e.g. an id that names records in several of the caller's groups)."""


class StoreError(LoregraphError, RuntimeError):
    """A storage failure (open, migrate, write)."""


class StoreBusyError(StoreError):
    """A write waited longer than the lock timeout for a lock another writer held (SQLite's busy timeout,
    PostgreSQL's ``lock_timeout``), or lost a deadlock/serialization conflict: nothing was written and the same
    call can be retried. The store raises it (``lock_timeout_error``); the interfaces answer with
    ``PUBLIC_MESSAGE`` and ``RETRY_AFTER_S``."""

    PUBLIC_MESSAGE = ("the store is busy: the write waited too long for a lock another writer held; nothing was "
                      "written, retry the call")
    RETRY_AFTER_S = 1


# PostgreSQL: lock_not_available (lock_timeout, NOWAIT), deadlock_detected, serialization_failure
_PG_LOCK_SQLSTATES = frozenset({"55P03", "40P01", "40001"})
_SQLITE_BUSY = 5  # "database is locked"; not SQLITE_LOCKED (6): a conflict inside one connection is a bug


def is_lock_timeout(exc: BaseException) -> bool:
    """Whether a database driver's error (or its cause) is a lock wait that timed out or lost a conflict: SQLite
    ``SQLITE_BUSY`` ("database is locked"), PostgreSQL SQLSTATE 55P03, 40P01 or 40001."""
    seen: BaseException | None = exc
    for _ in range(3):
        if seen is None:
            return False
        if isinstance(seen, StoreBusyError) or getattr(seen, "sqlstate", None) in _PG_LOCK_SQLSTATES:
            return True
        code = getattr(seen, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == _SQLITE_BUSY:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def lock_timeout_error(exc: BaseException) -> StoreBusyError | None:
    """The ``StoreBusyError`` a driver's lock-timeout error stands for (None for any other error)."""
    if isinstance(exc, StoreBusyError):
        return exc
    if not is_lock_timeout(exc):
        return None
    err = StoreBusyError(f"{StoreBusyError.PUBLIC_MESSAGE} ({type(exc).__name__})")
    err.__cause__ = exc
    return err


class EmbedderMismatchError(StoreError):
    """The database was built with another embedding model or dimension."""


class SchemaError(LoregraphError, ValueError):
    """An ontology (schema) file is unusable."""


class ConfigError(LoregraphError, ValueError):
    """The configuration is unusable; the message says what to fix."""


class StartupError(LoregraphError, RuntimeError):
    """A process cannot start; the message says what to fix."""


class ModelUnavailableError(LoregraphError, RuntimeError):
    """A local model cannot be loaded or exported in this environment."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: which record (e.g. ``facts[2]``), its id, which field, and why."""

    record: str
    field: str
    message: str
    record_id: str | None = None

    def __str__(self) -> str:
        rid = f" ({self.record_id})" if self.record_id else ""
        return f"{self.record}{rid}.{self.field}: {self.message}"


class SchemaViolationError(InvalidInputError):
    """A delta broke the schema. ``violations`` lists every problem found, not just the first."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        shown = "; ".join(str(v) for v in violations[:20])
        more = f" (+{len(violations) - 20} more)" if len(violations) > 20 else ""
        super().__init__(f"{len(violations)} schema violation(s): {shown}{more}")


__all__ = [
    "ConfigError", "ConflictError", "EmbedderMismatchError", "InvalidInputError", "LoregraphError",
    "ModelUnavailableError", "NotFoundError", "SchemaError", "SchemaViolationError", "StartupError", "StoreBusyError",
    "StoreError", "Violation", "is_lock_timeout", "lock_timeout_error",
]
