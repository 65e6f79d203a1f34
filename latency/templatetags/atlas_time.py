"""Times on pages: a <time> element holding the UTC instant, converted by static/js/time.js into the zone the
reader chose (the browser's by default, or UTC). Without the script the text is UTC and says so."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.utils import formats
from django.utils.html import format_html

register = template.Library()


def utc_iso(value: datetime) -> str:
    """The instant as ISO 8601 in UTC with a Z, to the second: what the script and the tests read."""
    return value.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@register.filter
def utc_time(value: datetime | None) -> str:
    if value is None:
        return "–"
    when = value.astimezone(UTC)
    # The text is only for a reader without scripts; the element's datetime is what the script converts.
    text = formats.date_format(when.replace(tzinfo=None), "DATETIME_FORMAT")
    return format_html('<time datetime="{}" data-utc>{} UTC</time>', utc_iso(when), text)
