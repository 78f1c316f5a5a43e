"""The stored time format, shared by every module that writes times as text (the SQLite store, the job queue)."""

from __future__ import annotations

from datetime import UTC, datetime


def ts(value: datetime | None) -> str | None:
    """Fixed-width ISO-8601 UTC text: lexical order equals time order."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ts(value: str | None) -> datetime | None:
    """The datetime of a stored time text (None stays None)."""
    if value is None:
        return None
    return datetime.fromisoformat(value)


__all__ = ["parse_ts", "ts"]
