"""Dates a question names ("on October 24, 2023", "in March 2023", "3 May 2022"), as a time window over messages.

A question about a day or a month is answered by what was said then or shortly after ("yesterday I went
bowling" is said the next day), so the window runs from the start of the named day or month to
``FOLLOWING_DAYS`` days after its end. Questions that name a date as a bound ("as of", "before", "after",
"since") ask about everything up to or from it and get no window.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

FOLLOWING_DAYS = 7  # LoCoMo conversations 0-4: evidence of a dated question is said within a week of the date
_MONTH = ("(" + "|".join(m for m in calendar.month_name[1:]) + "|"
          + "|".join(m for m in calendar.month_abbr[1:]) + r")\.?")
_MONTH_DAY_YEAR = re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(\d{4})\b", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r",?\s+(\d{4})\b", re.I)
_BOUND = re.compile(r"\b(as of|before|after|since)\b", re.I)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}


def _month(name: str) -> int:
    return _MONTHS[name[:3].lower()]


def _day(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "February 30, 2023": not a date
        return None


def named_window(text: str) -> tuple[datetime, datetime] | None:
    """The window [start, end) of the first day or month ``text`` names, widened by ``FOLLOWING_DAYS``;
    None when it names none or names a date as a bound."""
    if _BOUND.search(text):
        return None
    start: datetime | None = None
    end: datetime | None = None
    if m := _MONTH_DAY_YEAR.search(text):
        start = _day(int(m[3]), _month(m[1]), int(m[2]))
        end = start + timedelta(days=1) if start else None
    elif m := _DAY_MONTH_YEAR.search(text):
        start = _day(int(m[3]), _month(m[2]), int(m[1]))
        end = start + timedelta(days=1) if start else None
    elif m := _MONTH_YEAR.search(text):
        year, month = int(m[2]), _month(m[1])
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    if start is None or end is None:
        return None
    return start, end + timedelta(days=FOLLOWING_DAYS)
