"""How the SQL backends write times as text: fixed-width ISO-8601 UTC, so lexical order equals time order."""

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
    if value is None:
        return None
    return datetime.fromisoformat(value)


__all__ = ["parse_ts", "ts"]
