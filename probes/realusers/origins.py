"""Web origins of ingest sources (the pages that may send beacons), written the way browsers write them in
the Origin header: scheme://host[:port], lower case, host in punycode, the default port left out. Stored in
that form, so the beacon compares the header with a plain equality."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")


def origin_of(text: str) -> str | None:
    """The serialised origin of `text`, or None when it is not exactly an origin (a path, a query, user info,
    another scheme: a browser never sends those, so a source naming one would never match)."""
    text = text.strip()
    if text.endswith("/"):  # "https://example.com/" is how people copy an origin from the address bar
        text = text[:-1]
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path or parts.query or parts.fragment:
        return None
    if parts.username is not None or parts.password is not None or text.endswith(("?", "#", ":")):
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address, bracketed as in the header
    else:
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
        if not _HOST.match(host):
            return None
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != DEFAULT_PORTS[scheme] else "")


def clean_origins(values: Iterable[str]) -> list[str]:
    """Origins as stored: each one normalised, blanks skipped, repeats dropped, in the order given. A value
    that is not an origin is refused, named in the message."""
    origins: list[str] = []
    for value in values:
        if not value.strip():
            continue
        origin = origin_of(value)
        if origin is None:
            raise ValidationError(
                _(
                    "%(value)s is not an origin: write scheme://host or scheme://host:port "
                    "(http or https, no path), as in https://app.example.com"
                ),
                code="invalid",
                params={"value": value.strip()},
            )
        if origin not in origins:
            origins.append(origin)
    return origins
