"""Times given by people: ISO 8601, or relative to now (15m, 24h, 7d, 2w).

Every time read from a person (the forms of the pages, the JSON API, the exports and /api/v1/, the silence
form, the management commands) goes through here, so one range holds everywhere: a time outside it is a
ValueError saying so, never an OverflowError (a 500) from the arithmetic or the database further on."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from django.utils.translation import gettext as _

_REL = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}

# The times this site reads, in UTC. Nothing was measured before 1970, and a year short of datetime's end
# leaves room for the windows, buckets and slot bounds computed around a time (until + a bucket, a partition's
# day after it) without overflowing. PostgreSQL stores every time in this range.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 1, 1, tzinfo=UTC)


def _out_of_range(text: str) -> ValueError:
    return ValueError(
        _("%(text)r is outside the times this site reads (%(earliest)s to %(latest)s UTC)")
        % {"text": text, "earliest": f"{EARLIEST:%Y-%m-%d}", "latest": f"{LATEST - timedelta(days=1):%Y-%m-%d}"}
    )


def in_range(when: datetime, text: str | None = None) -> datetime:
    """`when` in UTC (a naive time taken as UTC), or ValueError quoting `text` (what was typed) when it falls
    outside [EARLIEST, LATEST): 0001-01-01T00:00:00+14:00 is a valid ISO 8601 time whose UTC value is before
    year 1, and converting it alone overflows."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        utc = when.astimezone(UTC)
    except OverflowError:
        raise _out_of_range(when.isoformat() if text is None else text) from None
    if not EARLIEST <= utc < LATEST:
        raise _out_of_range(when.isoformat() if text is None else text)
    return utc


def parse_duration(text: str) -> timedelta:
    m = _REL.match(text.strip().lower())
    if not m:
        raise ValueError(_("%(text)r is not a duration such as 15m, 24h or 7d") % {"text": text})
    try:
        return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    except (OverflowError, ValueError):
        # More days than timedelta holds (99999999999d), or more digits than int() reads from text.
        raise ValueError(_("%(text)r is a longer duration than this site reads") % {"text": text}) from None


def parse_when(text: str, now: datetime) -> datetime:
    """A point in time, in UTC: '24h' means 24 hours before now; ISO 8601 otherwise (a time without zone is
    taken as UTC). ValueError for anything else, or a time outside [EARLIEST, LATEST) (in_range)."""
    text = text.strip()
    if _REL.match(text.lower()):
        try:
            return in_range(now - parse_duration(text), text)
        except OverflowError:
            # Before year 1: a duration timedelta holds but now minus it does not.
            raise _out_of_range(text) from None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            _("%(text)r is neither an ISO 8601 time nor a relative one such as 24h or 7d") % {"text": text}
        ) from None
    return in_range(when, text)
