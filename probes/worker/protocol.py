"""What a region worker and the central site say to each other, and how each
knows the other means it. Plain Python (no Django, no Celery): both sides
import it, and a region host runs it without the site's settings.

Trust. Each region has a credential: an Ed25519 private key, given to the
region's hosts once (`manage.py region_key SLUG` or the admin) as
`la1_` + 43 base64url characters. The central site stores only the public
key, so its database cannot sign for anyone. A worker signs every message it
sends (results, heartbeats) together with the region it speaks for; the
ingest stores a measurement only when the signature is good, the key belongs
to that region and is not retired, and the measurement names that region.
A stolen Lagos credential forges only Lagos rows, until it is rotated.

Keys are named by `key_id`, the first 16 hex digits of the SHA-256 of the
public key: printable in logs and pages, and not a piece of the credential.

Versions. Every message carries `schema`. A side that reads another schema
refuses it with a reason naming both schemas and releases, never guesses.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# The message schema: bumped whenever a field changes meaning or a required
# field is added. Schema 1 was the unsigned list of measurements of release 0.1.
SCHEMA = 2
PREFIX = "la1_"
_SEED_CHARS = 43  # 32 bytes in unpadded base64url
_DOMAIN = b"latency-atlas/v2"

# Message kinds, part of what is signed: a heartbeat's signature cannot be
# replayed as a batch of results.
RESULTS = "results"
HEARTBEAT = "heartbeat"
KINDS = (RESULTS, HEARTBEAT)

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,49}$")
KEY_ID_RE = re.compile(r"^[0-9a-f]{16}$")


@functools.cache
def release() -> str:
    """This installation's release (the package version). Cached: the
    metadata lookup costs ~3 ms, and every sealed message and every refusal
    names it."""
    try:
        return metadata.version("latency-atlas")
    except metadata.PackageNotFoundError:  # a checkout that was never installed
        return "unknown"


def region_queue(slug: str) -> str:
    """The queue a region's workers consume."""
    return f"probes.{slug}"


def reply_queue(slug: str, instance: str) -> str:
    """Where the central site answers one worker's heartbeats. Under the
    region's own prefix, so a RabbitMQ user per region may read it, and so
    the central side can refuse to publish anywhere a heartbeat names."""
    return f"probes.{slug}.reply.{instance}"


REPLY_QUEUE_RE = re.compile(r"^probes\.(?P<slug>[a-z0-9][a-z0-9-]{0,49})\.reply\.(?P<instance>[0-9a-f]{32})$")


class BadCredential(ValueError):
    """The credential text cannot be a region credential. The message never
    quotes the text: it is a secret."""


class Refused(ValueError):
    """A message that is not stored or obeyed, with the reason why."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id_of(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:16]


@dataclass(frozen=True)
class PublicKey:
    """A region key as the central site keeps it."""

    key_id: str
    public_key: str  # base64url of the 32 raw bytes

    @classmethod
    def from_text(cls, public_key: str) -> PublicKey:
        raw = _unb64(public_key)
        if len(raw) != 32:
            raise ValueError("an Ed25519 public key is 32 bytes")
        return cls(key_id_of(raw), public_key)

    def verify(self, data: bytes, signature: str) -> bool:
        try:
            raw_sig = _unb64(signature)
            Ed25519PublicKey.from_public_bytes(_unb64(self.public_key)).verify(raw_sig, data)
        except (InvalidSignature, ValueError, binascii.Error, TypeError):
            return False
        return True


class Credential:
    """A region's private key, as a region host holds it."""

    __slots__ = ("_private", "key_id", "public_key")

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = _b64(raw)
        self.key_id = key_id_of(raw)

    @classmethod
    def new(cls) -> tuple[Credential, str]:
        """A fresh credential and its text, to be shown once."""
        private = Ed25519PrivateKey.generate()
        from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat

        seed = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls(private), PREFIX + _b64(seed)

    @classmethod
    def parse(cls, text: str | None, *, name: str = "LATENCY_REGION_KEY") -> Credential:
        if not text or not text.strip():
            raise BadCredential(f"{name} is not set: give the region's credential (manage.py region_key SLUG)")
        text = text.strip()
        body = text[len(PREFIX) :]
        if not text.startswith(PREFIX) or len(body) != _SEED_CHARS or not re.fullmatch(r"[A-Za-z0-9_-]+", body):
            raise BadCredential(
                f"{name} is not a region credential (expected {PREFIX} followed by {_SEED_CHARS} "
                f"base64url characters, got {len(text)} characters)"
            )
        try:
            seed = _unb64(body)
        except (binascii.Error, ValueError):
            raise BadCredential(f"{name} is not valid base64url") from None
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    def public(self) -> PublicKey:
        return PublicKey(self.key_id, self.public_key)

    def sign(self, data: bytes) -> str:
        return _b64(self._private.sign(data))

    def __repr__(self) -> str:  # never the private key, not even part of it
        return f"<Credential {self.key_id}>"


def _signed_bytes(kind: str, region: str, key_id: str, body: str) -> bytes:
    return b"\x00".join([_DOMAIN, kind.encode(), region.encode(), key_id.encode(), body.encode("utf-8")])


def seal(kind: str, region: str, credential: Credential, content: Any) -> dict:
    """The message a worker sends: `content` as JSON text, signed with the
    kind and region it is sent for."""
    if kind not in KINDS:
        raise ValueError(f"unknown message kind {kind!r}")
    body = json.dumps(content, separators=(",", ":"), allow_nan=False)
    return {
        "schema": SCHEMA,
        "kind": kind,
        "region": region,
        "key_id": credential.key_id,
        "release": release(),
        "body": body,
        "signature": credential.sign(_signed_bytes(kind, region, credential.key_id, body)),
    }


@dataclass(frozen=True)
class Opened:
    kind: str
    region: str
    key_id: str
    release: str
    content: Any


def schema_refusal(their_schema: object, their_release: object, *, sender: str = "worker") -> str:
    ours = f"schema {SCHEMA} (release {release()})"
    theirs = f"schema {str(their_schema)[:20]} (release {str(their_release)[:40]})"
    if isinstance(their_schema, int) and not isinstance(their_schema, bool) and their_schema > SCHEMA:
        advice = "upgrade the central site"
    else:
        advice = f"upgrade the {sender} to release {release()}"
    return f"the {sender} speaks message {theirs}; this site reads {ours}: {advice}"


def envelope_header(message: object) -> tuple[str, str, str]:
    """(kind, region, key_id) of a sealed message, checked for shape and
    schema before any key is looked up. Raises Refused."""
    if isinstance(message, list):
        # Release 0.1 sent a bare list of unsigned measurements.
        raise Refused(schema_refusal(1, "0.1.x"))
    if not isinstance(message, dict):
        raise Refused(f"not a signed message (a {type(message).__name__})")
    schema = message.get("schema")
    if schema != SCHEMA:
        raise Refused(schema_refusal(schema, message.get("release", "?")))
    kind, region, key_id = message.get("kind"), message.get("region"), message.get("key_id")
    if kind not in KINDS:
        raise Refused(f"unknown message kind {str(kind)[:40]!r}")
    if not isinstance(region, str) or not SLUG_RE.match(region):
        raise Refused(f"the message names no valid region ({str(region)[:60]!r})")
    if not isinstance(key_id, str) or not KEY_ID_RE.match(key_id):
        raise Refused("the message names no valid key id")
    if not isinstance(message.get("body"), str) or not isinstance(message.get("signature"), str):
        raise Refused("the message has no body or no signature")
    return kind, region, key_id


def open_sealed(message: dict, key: PublicKey, *, kind: str) -> Opened:
    """Verify a sealed message with the key its key_id names (looked up by
    the caller, who checked that the key belongs to the region the message
    claims and is in force). Raises Refused."""
    got_kind, region, key_id = envelope_header(message)
    if got_kind != kind:
        raise Refused(f"expected a {kind} message, got {got_kind}")
    if key.key_id != key_id:
        raise Refused("the message was checked against the wrong key")
    body = message["body"]
    if not key.verify(_signed_bytes(kind, region, key_id, body), message["signature"]):
        raise Refused(f"bad signature for region {region} (key {key_id})")
    try:
        content = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise Refused(f"the signed body is not JSON ({str(exc)[:100]})") from None
    return Opened(kind, region, key_id, str(message.get("release", "?"))[:40], content)
