"""Notification channel URLs, encrypted at rest.

An Apprise URL carries the secret that lets anyone post to the channel (a
Slack webhook token, an SMTP password, a bot token), so the database holds
only a Fernet token of it (AES-128-CBC with HMAC-SHA256, from cryptography),
under a key derived from the site's SECRET_KEY with HKDF. A database dump
alone reveals no channel. SECRET_KEY_FALLBACKS still decrypt after the key
is rotated; a channel saved again is encrypted under the current key.

What may be shown of a URL is its service (the scheme: "slack", "mailtos"),
never a character of the rest.
"""

from __future__ import annotations

import base64
import re

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

_INFO = b"latency-atlas notification channel urls v1"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]{0,38})://")


class UnreadableURL(Exception):
    """The stored URL cannot be decrypted with SECRET_KEY or its fallbacks."""


def _fernet(secret: str) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def _keys() -> MultiFernet:
    # Read per call: tests and key rotation change settings at run time.
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return MultiFernet([_fernet(s) for s in secrets])


def encrypt_url(url: str) -> str:
    return _keys().encrypt(url.encode()).decode("ascii")


def decrypt_url(stored: str) -> str:
    try:
        return _keys().decrypt(stored.encode("ascii")).decode()
    except (InvalidToken, ValueError, UnicodeError):
        raise UnreadableURL(
            "the channel's URL cannot be decrypted with SECRET_KEY or SECRET_KEY_FALLBACKS: enter it again"
        ) from None


def service_of(url: str) -> str:
    """The scheme of an Apprise URL ("slack"), or "" when it has none: the only part ever shown."""
    match = _SCHEME.match(url.strip())
    return match.group(1).lower() if match else ""
