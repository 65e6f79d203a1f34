"""API tokens: made here, shown once, and only their SHA-256 kept (as ingest sources' tokens are:
probes.realusers.sources says why a fast hash is right for 256 random bits).

Nothing here logs a token, and no error message quotes one."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

# Its own prefix, so a token found in a log or a repository says what it opens (and secret scanners can match it).
TOKEN_PREFIX = "lapi_"
# Longer than any token made here, short enough that hashing what a client sent costs nothing.
MAX_TOKEN_LENGTH = 200
# The last use is written at most this often per token: an API client polling every second would otherwise
# make every read a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def issue(user, name: str = ""):
    """A new token for `user`; returns (ApiToken, token). The token itself is not kept anywhere."""
    from probes.apitokens.models import ApiToken

    token = new_token()
    row = ApiToken(user=user, name=name, token_hash=hash_token(token))
    row.full_clean()
    row.save()
    return row, token


def authenticate(token: str, now: datetime | None = None):
    """The ApiToken of `token` when it is valid (not revoked, its user active), with its last use recorded;
    else None."""
    from probes.apitokens.models import ApiToken

    if not token or not token.startswith(TOKEN_PREFIX) or len(token) > MAX_TOKEN_LENGTH:
        return None
    digest = hash_token(token)
    row = ApiToken.objects.select_related("user").filter(token_hash=digest, revoked_at__isnull=True).first()
    # Looked up by its hash already; compared again in constant time so the answer's timing says nothing.
    if row is None or not hmac.compare_digest(row.token_hash, digest) or not row.user.is_active:
        return None
    now = now or timezone.now()
    ApiToken.objects.filter(pk=row.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ).update(last_used_at=now)
    return row


def revoke(tokens, now: datetime | None = None) -> int:
    """Revoke the tokens of a queryset (those not revoked yet); they stop working at once. Returns how many."""
    return int(tokens.filter(revoked_at__isnull=True).update(revoked_at=now or timezone.now()))
