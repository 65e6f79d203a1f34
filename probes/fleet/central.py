"""The central site's signing key: what makes a run order or a heartbeat reply
the central site's, for region workers (probes.worker.orders, .heartbeat).

One Ed25519 key, kept in the database (CentralKey) with its private half
encrypted by AES-GCM under a key derived from SECRET_KEY with HKDF (the
SECRET_KEY_FALLBACKS still decrypt after SECRET_KEY is rotated): a dump of the
database alone cannot sign. It is made on first need, by whichever process
needs it first (an advisory lock makes that one key, not two). Region hosts
get its public key inside their credential (probes.fleet.keys.issue_key).

Rotation (`manage.py central_key --rotate`) is as for region keys: a new key
signs from then on, and the previous one signs beside it until the overlap
ends; a worker accepts a message any key of its credential signed. So the
region credentials must be issued again within the overlap: a credential
holds only the central keys in force when it was issued.

The hot path (the scheduler signs every order, the ingest worker every reply)
reads the keys once per process and then every KEYS_TTL_S, never per message.
"""

from __future__ import annotations

import base64
import os
import threading
import time
from datetime import UTC, datetime, timedelta

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import connection, transaction

from probes.worker.protocol import MAX_CENTRAL_KEYS, Credential, PublicKey

_INFO = b"latency-atlas central signing key v1"
# How long a process signs with the keys it read before reading them again: a rotation made elsewhere
# (manage.py central_key) reaches the scheduler and the ingest workers within this.
KEYS_TTL_S = 30.0


class UnreadableCentralKey(Exception):
    """The stored private key cannot be decrypted with SECRET_KEY or its fallbacks."""


def _aead(secret: str) -> AESGCM:
    return AESGCM(HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret.encode()))


def seal_private(seed: bytes, key_id: str) -> str:
    nonce = os.urandom(12)
    # The key id is bound in: a sealed key copied onto another row does not open there.
    sealed = _aead(settings.SECRET_KEY).encrypt(nonce, seed, key_id.encode())
    return base64.b64encode(nonce + sealed).decode("ascii")


def open_private(sealed: str, key_id: str) -> bytes:
    raw = base64.b64decode(sealed)
    for secret in [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]:
        try:
            return _aead(secret).decrypt(raw[:12], raw[12:], key_id.encode())
        except InvalidTag:
            continue
    raise UnreadableCentralKey(
        f"central key {key_id} cannot be decrypted with SECRET_KEY or SECRET_KEY_FALLBACKS: put the old "
        "SECRET_KEY back into SECRET_KEY_FALLBACKS, or rotate the central key (manage.py central_key --rotate) "
        "and issue the region credentials again"
    )


def _lock() -> None:
    from probes.rollups.locks import LockSpace

    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, 0)", [int(LockSpace.CENTRAL_KEY)])


def _new_key(now: datetime):
    from probes.models import CentralKey

    private = Ed25519PrivateKey.generate()
    signer = Credential(private)
    return CentralKey.objects.create(
        key_id=signer.key_id,
        public_key=signer.public_key,
        sealed_private_key=seal_private(Credential.seed_of(private), signer.key_id),
        created_at=now,
    )


def _live(now: datetime):
    from probes.models import CentralKey

    return CentralKey.objects.exclude(retires_at__lte=now).order_by("-created_at")


def ensure_key(now: datetime | None = None) -> None:
    """Make the central key if none is in force (race-safe)."""
    now = now or datetime.now(UTC)
    if _live(now).exists():
        return
    with transaction.atomic():
        _lock()
        if not _live(now).exists():
            _new_key(now)
            _signers.forget()


def rotate(overlap: timedelta, now: datetime | None = None):
    """A new central key; the keys in force keep signing for `overlap` (a key already ending sooner keeps its end).
    Returns the new CentralKey."""
    now = now or datetime.now(UTC)
    ends = now + overlap
    with transaction.atomic():
        _lock()
        live = _live(now)
        live.filter(retires_at__isnull=True).update(retires_at=ends)
        live.filter(retires_at__gt=ends).update(retires_at=ends)
        key = _new_key(now)
    _signers.forget()
    return key


def public_keys(now: datetime | None = None) -> tuple[PublicKey, ...]:
    """The central keys in force, newest first, as a region credential carries them (made when there is none)."""
    now = now or datetime.now(UTC)
    ensure_key(now)
    return tuple(PublicKey(k.key_id, k.public_key) for k in _live(now)[:MAX_CENTRAL_KEYS])


class Signers:
    """The central keys in force, decrypted, per process: read from the database once and then every
    KEYS_TTL_S (or at once when none read is still in force), never per message."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: list[tuple[Credential, datetime | None]] = []
        self._read_at = -1e18

    def forget(self) -> None:
        with self._lock:
            self._read_at = -1e18

    def get(self, now: datetime | None = None) -> list[Credential]:
        now = now or datetime.now(UTC)
        with self._lock:
            live = [signer for signer, ends in self._keys if ends is None or ends > now]
            if live and time.monotonic() - self._read_at < KEYS_TTL_S:
                return live
        ensure_key(now)
        keys = [
            (Credential.from_seed(open_private(k.sealed_private_key, k.key_id)), k.retires_at)
            for k in _live(now)[:MAX_CENTRAL_KEYS]
        ]
        with self._lock:
            self._keys, self._read_at = keys, time.monotonic()
        return [signer for signer, _ends in keys]


_signers = Signers()


def signers(now: datetime | None = None) -> list[Credential]:
    """The keys a central message is signed with now: one, or two during a rotation's overlap."""
    return _signers.get(now)


def forget() -> None:
    """Read the keys again at the next signature (a test that rolled its database back, a rotation here)."""
    _signers.forget()
