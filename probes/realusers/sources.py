"""Ingest sources' secrets: the token is made here, shown once, and only its SHA-256 is kept.

A SHA-256 rather than a slow password hash: the token is 256 random bits, not something a person chose, so
no dictionary attack applies, and every OTLP request looks it up by its hash (one indexed equality)."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.db import transaction
from django.db.models import F
from django.utils import timezone

TOKEN_PREFIX = "lat_"
BROWSER_KEY_PREFIX = "pk_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_browser_key() -> str:
    return BROWSER_KEY_PREFIX + secrets.token_urlsafe(18)


def create_source(name: str, allowed_origins: list[str] | None = None, **fields):
    """A new enabled source; returns (source, token). The token is not kept anywhere."""
    from probes.models import IngestSource

    token = new_token()
    source = IngestSource(
        name=name,
        token_hash=hash_token(token),
        browser_key=new_browser_key(),
        allowed_origins=list(allowed_origins or []),
        **fields,
    )
    source.full_clean()
    source.save()
    return source, token


def rotate(source) -> str:
    """A new token for the source; the old one stops working at once. Returns the new token."""
    from probes.models import IngestSource

    token = new_token()
    with transaction.atomic():
        IngestSource.objects.filter(pk=source.pk).update(token_hash=hash_token(token), rotated_at=timezone.now())
    source.refresh_from_db(fields=["token_hash", "rotated_at"])
    return token


def authenticate(token: str):
    """The enabled source of a token, or None."""
    from probes.models import IngestSource

    if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    digest = hash_token(token)
    source = IngestSource.objects.filter(token_hash=digest).first()
    # The lookup is by the hash already; compare again in constant time so the answer's timing says nothing.
    if source is None or not hmac.compare_digest(source.token_hash, digest) or not source.enabled:
        return None
    return source


def by_browser_key(key: str):
    from probes.models import IngestSource

    if not key or not key.startswith(BROWSER_KEY_PREFIX) or len(key) > 60:
        return None
    return IngestSource.objects.filter(browser_key=key, enabled=True).first()


def tally(source_id: int, *, calls: int = 0, ignored: int = 0, rejected: int = 0, reason: str = "", now=None) -> None:
    """Add what one export or beacon brought to the source's counters, and mark it seen. One UPDATE of
    increments, so concurrent requests all count."""
    from probes.models import IngestSource

    changes: dict = {
        "last_seen_at": now or timezone.now(),
        "calls_stored": F("calls_stored") + calls,
        "spans_ignored": F("spans_ignored") + ignored,
        "rejected": F("rejected") + rejected,
    }
    if rejected and reason:
        changes["last_rejection"] = reason[:300]
    IngestSource.objects.filter(pk=source_id).update(**changes)
