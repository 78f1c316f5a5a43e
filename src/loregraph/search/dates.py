"""Times a question names ("on October 24, 2023", "in March 2023", "the week before 3 May 2022", "in June"), as a
window over the times messages were said.

A question about a day or a month is answered by what was said then or shortly after ("yesterday I went
bowling" is said the next day), so the window runs from the start of the named day or month to
``FOLLOWING_DAYS`` days after its end. A period placed against a date ("the week before August 3, 2023",
"the Saturday after October 28, 2023") is told of on that date ("last week I...", "this Saturday we..."): the
window is that day's. A month without its year ("in June") matches that month of any year. Questions that
name a date as a bound ("as of", "before", "after", "since") ask about everything up to or from it and get no
window.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

FOLLOWING_DAYS = 7  # LoCoMo conversations 0-4: evidence of a dated question is said within a week of the date
_MONTH = ("(" + "|".join(m for m in calendar.month_name[1:]) + "|"
          + "|".join(m for m in calendar.month_abbr[1:]) + r")\.?")
_MDY = _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b"  # "October 24, 2023", "December 1,2023"
_DMY = r"(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s*(\d{4})\b"  # "16 March 2022", "4th October, 2023"
_MONTH_DAY_YEAR = re.compile(r"\b" + _MDY, re.I)
_DAY_MONTH_YEAR = re.compile(r"\b" + _DMY, re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r",?\s+(\d{4})\b", re.I)
_DAYS = "|".join(calendar.day_name)
# a period placed against a date: "the week before August 3, 2023", "the Monday before 24 July, 2023"
_PERIOD_AGAINST = re.compile(rf"\b(?:days?|weeks?|weekend|months?|night|morning|{_DAYS})\s+(?:before|after)\s+"
                             rf"(?:{_MDY}|{_DMY})", re.I)
# "in June", not "in June 2023" nor "in June, 2023"
_MONTH_ALONE = re.compile(r"\bin\s+(" + "|".join(calendar.month_name[1:]) + r")\b(?!\.?,?\s*\d)", re.I)
# "between August 11 and August 15 2023": the two ends, each parsed on its own
_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?=[?.!;]|$)", re.I)
_MONTH_DAY = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?", re.I)  # "August 11"
_DAY_MONTH = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH, re.I)  # "11 August"
_MONTH_ONLY = re.compile(_MONTH, re.I)  # "August"
_BOUND = re.compile(r"\b(as of|before|after|since)\b", re.I)
_AS_OF = re.compile(r"\b(as of|since)\b", re.I)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}


@dataclass(frozen=True)
class Window:
    """The times a question names: [``start``, ``end``), or, with ``month`` alone, that month of any year and the
    ``FOLLOWING_DAYS`` days after it."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None

    def __contains__(self, at: datetime) -> bool:
        if self.month is not None:
            return self.month in (at.month, (at - timedelta(days=FOLLOWING_DAYS)).month)
        return self.start is not None and self.end is not None and self.start <= at < self.end


def _month(name: str) -> int:
    return _MONTHS[name[:3].lower()]


def _day(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "February 30, 2023": not a date
        return None


def _the_day(start: datetime | None) -> Window | None:
    return Window(start, start + timedelta(days=1 + FOLLOWING_DAYS)) if start else None


def _span(text: str, year: int | None) -> tuple[datetime, datetime] | None:
    """[start, end) of the day or month ``text`` names entirely ("August 15 2023", "11 August", "November 2023");
    ``year`` for one named without its year (None: the year is required); None when ``text`` is no such date."""
    text = text.strip()
    start: datetime | None = None
    if m := _MONTH_DAY_YEAR.fullmatch(text):
        start = _day(int(m[3]), _month(m[1]), int(m[2]))
    elif m := _DAY_MONTH_YEAR.fullmatch(text):
        start = _day(int(m[3]), _month(m[2]), int(m[1]))
    elif year and (m := _MONTH_DAY.fullmatch(text)):
        start = _day(year, _month(m[1]), int(m[2]))
    elif year and (m := _DAY_MONTH.fullmatch(text)):
        start = _day(year, _month(m[2]), int(m[1]))
    else:
        if m := _MONTH_YEAR.fullmatch(text):
            y, month = int(m[2]), _month(m[1])
        elif year and (m := _MONTH_ONLY.fullmatch(text)):
            y, month = year, _month(m[1])
        else:
            return None
        return datetime(y, month, 1, tzinfo=UTC), datetime(y + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return (start, start + timedelta(days=1)) if start else None


def _between(text: str) -> Window | None:
    """The window of a range of days or months ("between August 11 and August 15 2023"), or None."""
    if not (m := _BETWEEN.search(text)) or not (last := _span(m[2], None)):
        return None
    first = _span(m[1], last[0].year)
    if first is None or first[0] >= last[1]:
        return None
    return Window(first[0], last[1] + timedelta(days=FOLLOWING_DAYS))


def named_window(text: str) -> Window | None:
    """The window of the first day or month ``text`` names (widened by ``FOLLOWING_DAYS``), of a range of them, of
    the date a period is placed against, or of a month named without its year; None when it names none or names a
    date as a bound."""
    if (m := _PERIOD_AGAINST.search(text)) and not _AS_OF.search(text):
        if m[1]:
            return _the_day(_day(int(m[3]), _month(m[1]), int(m[2])))
        return _the_day(_day(int(m[6]), _month(m[5]), int(m[4])))
    if _BOUND.search(text):
        return None
    if window := _between(text):
        return window
    if m := _MONTH_DAY_YEAR.search(text):
        return _the_day(_day(int(m[3]), _month(m[1]), int(m[2])))
    if m := _DAY_MONTH_YEAR.search(text):
        return _the_day(_day(int(m[3]), _month(m[2]), int(m[1])))
    if m := _MONTH_YEAR.search(text):
        year, month = int(m[2]), _month(m[1])
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return Window(datetime(year, month, 1, tzinfo=UTC), end + timedelta(days=FOLLOWING_DAYS))
    if m := _MONTH_ALONE.search(text):
        return Window(month=_month(m[1]))
    return None
