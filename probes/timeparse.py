"""Times given by people: ISO 8601, or relative to now (15m, 24h, 7d, 2w)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from django.utils.translation import gettext as _

_REL = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    m = _REL.match(text.strip().lower())
    if not m:
        raise ValueError(_("%(text)r is not a duration such as 15m, 24h or 7d") % {"text": text})
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


def parse_when(text: str, now: datetime) -> datetime:
    """A point in time: '24h' means 24 hours before now; ISO 8601 otherwise
    (a time without zone is taken as UTC)."""
    text = text.strip()
    if _REL.match(text.lower()):
        return now - parse_duration(text)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            _("%(text)r is neither an ISO 8601 time nor a relative one such as 24h or 7d") % {"text": text}
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)
