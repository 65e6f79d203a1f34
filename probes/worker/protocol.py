"""What a region worker and the central site say to each other, and how each
knows the other means it. Plain Python (no Django, no Celery): both sides
import it, and a region host runs it without the site's settings.

Trust. Each region has a credential: an Ed25519 private key, given to the
region's hosts once (`manage.py region_key SLUG` or the admin) as
`la2_` + 43 base64url characters, followed by the central site's public
key(s) in force when it was issued (`.` + 43 characters each). The central
site stores only the region's public key, so its database cannot sign for
anyone. A worker signs every message it
sends (results, heartbeats) together with the region it speaks for; the
ingest stores a measurement only when the signature is good, the key belongs
to that region and is not retired, and the measurement names that region.
A stolen Lagos credential forges only Lagos rows, until it is rotated.

The other way round, the central site signs every run order and every
heartbeat reply with its own Ed25519 key (probes.fleet.central), and a
worker believes only what verifies with a central key its credential holds:
anyone else on the broker (another region's host, a stolen broker password)
can neither make a worker run a request nor stop it.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# The message schema: bumped whenever a field changes meaning or a required
# field is added. Schema 1 was the unsigned list of measurements of release 0.1;
# schema 2 signed the workers' messages only; schema 3 signs the central site's
# run orders and heartbeat replies too.
SCHEMA = 3
PREFIX = "la2_"
# Credentials of earlier releases: they carry no central key.
OLD_PREFIXES = ("la1_",)
_SEED_CHARS = 43  # 32 bytes in unpadded base64url
_KEY_CHARS = 43
# A credential carries at most this many central keys, and a central message
# at most this many signatures (more is refused before any is checked).
MAX_CENTRAL_KEYS = 4
_DOMAIN = b"latency-atlas/v2"
# A credential's text, as `manage.py region_key` prints it and the admin shows it once.
CREDENTIAL_RE = re.compile(r"la2_[A-Za-z0-9_-]{43}(?:\.[A-Za-z0-9_-]{43}){1,4}")

# Message kinds, part of what is signed: a heartbeat's signature cannot be
# replayed as a batch of results, nor a reply's as a run order.
RESULTS = "results"
HEARTBEAT = "heartbeat"
KINDS = (RESULTS, HEARTBEAT)
# What the central site signs.
ORDER = "order"
REPLY = "reply"
CENTRAL_KINDS = (ORDER, REPLY)

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,49}$")
KEY_ID_RE = re.compile(r"^[0-9a-f]{16}$")


@functools.cache
def release() -> str:
    """This installation's release (the package version). Cached: the
    metadata lookup reads the installation's files, and every sealed message
    and every refusal names it."""
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
    """A message that is not stored or obeyed, with the reason why. `why` is
    a short class of the reason (unsigned, bad-signature, expired, ...): a
    worker logs the first refusal of each class and counts the rest."""

    def __init__(self, reason: str, *, why: str = "refused") -> None:
        super().__init__(reason)
        self.why = why


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id_of(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:16]


@functools.lru_cache(maxsize=1024)
def _ed25519(public_key: str) -> Ed25519PublicKey:
    # Loaded once per key: a worker checks the same central key on every order, the ingest the same few
    # region keys on every batch.
    return Ed25519PublicKey.from_public_bytes(_unb64(public_key))


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
            _ed25519(self.public_key).verify(raw_sig, data)
        except (InvalidSignature, ValueError, binascii.Error, TypeError):
            return False
        return True


class Credential:
    """An Ed25519 private key: a region's, as a region host holds it (with the
    central site's public keys it believes, `central`), or the central site's
    own signing key (probes.fleet.central)."""

    __slots__ = ("_private", "central", "key_id", "public_key")

    def __init__(self, private: Ed25519PrivateKey, central: tuple[PublicKey, ...] = ()) -> None:
        self._private = private
        self.central = central
        raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = _b64(raw)
        self.key_id = key_id_of(raw)

    @classmethod
    def new(cls, central: tuple[PublicKey, ...] = ()) -> tuple[Credential, str]:
        """A fresh credential and its text (carrying the `central` public
        keys), to be shown once."""
        private = Ed25519PrivateKey.generate()
        return cls(private, tuple(central)), PREFIX + _b64(cls.seed_of(private)) + "".join(
            "." + key.public_key for key in central
        )

    @staticmethod
    def seed_of(private: Ed25519PrivateKey) -> bytes:
        from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat

        return private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    @classmethod
    def from_seed(cls, seed: bytes) -> Credential:
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @classmethod
    def parse(cls, text: str | None, *, name: str = "LATENCY_REGION_KEY", region: str = "SLUG") -> Credential:
        if not text or not text.strip():
            raise BadCredential(f"{name} is not set: give the region's credential (manage.py region_key {region})")
        text = text.strip()
        if text.startswith(OLD_PREFIXES):
            raise BadCredential(
                f"{name} is a credential of an earlier release ({text[:4]}...), which carries no central key: "
                "this worker could not tell the central site's run orders from forged ones; issue a new "
                f"credential with `manage.py region_key {region}` (or New credential on the region's admin page) "
                "and set it"
            )
        seed_text, *central_texts = text[len(PREFIX) :].split(".")
        if (
            not text.startswith(PREFIX)
            or len(seed_text) != _SEED_CHARS
            or not 1 <= len(central_texts) <= MAX_CENTRAL_KEYS
            or any(len(part) != _KEY_CHARS for part in central_texts)
            or not all(re.fullmatch(r"[A-Za-z0-9_-]+", part) for part in (seed_text, *central_texts))
        ):
            raise BadCredential(
                f"{name} is not a region credential (expected {PREFIX} followed by {_SEED_CHARS} "
                f"base64url characters and the central site's key, '.' and {_KEY_CHARS} characters; "
                f"got {len(text)} characters)"
            )
        try:
            seed = _unb64(seed_text)
            central = tuple(PublicKey.from_text(part) for part in central_texts)
        except (binascii.Error, ValueError):
            raise BadCredential(f"{name} is not valid base64url") from None
        return cls(Ed25519PrivateKey.from_private_bytes(seed), central)

    @staticmethod
    def secret_part(text: str) -> str:
        """The private part of a credential's text (its seed): what must never be shown or stored.
        The central keys after it are public."""
        return text.strip().removeprefix(PREFIX).split(".")[0]

    def central_keys(self) -> dict[str, PublicKey]:
        """The central site's keys this credential believes, by key id."""
        return {key.key_id: key for key in self.central}

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


def seal_central(kind: str, region: str, signers: Sequence[Credential], content: Any) -> dict:
    """A message of the central site (a run order, a heartbeat reply) for
    `region`: `content` as JSON text, signed by each of `signers` (the
    central keys in force: one, or two during a rotation's overlap)."""
    if kind not in CENTRAL_KINDS:
        raise ValueError(f"unknown central message kind {kind!r}")
    if not 1 <= len(signers) <= MAX_CENTRAL_KEYS:
        raise ValueError("a central message needs 1 to 4 signing keys")
    body = json.dumps(content, separators=(",", ":"), allow_nan=False)
    return {
        "schema": SCHEMA,
        "kind": kind,
        "region": region,
        "release": release(),
        "body": body,
        "signatures": {s.key_id: s.sign(_signed_bytes(kind, region, s.key_id, body)) for s in signers},
    }


def open_central(message: object, kind: str, keys: Mapping[str, PublicKey]) -> tuple[str, Any]:
    """(region, content) of a central message that one of `keys` signed for
    that region; Refused (with its `why`) otherwise. The schema is checked
    by the caller, who words that refusal for what it reads."""
    if not isinstance(message, dict):
        raise Refused(f"not a signed {kind} (a {type(message).__name__})", why="unsigned")
    signatures = message.get("signatures")
    body = message.get("body")
    if message.get("kind") != kind or not isinstance(body, str) or not isinstance(signatures, dict) or not signatures:
        raise Refused(f"not a signed {kind}: it carries no central signature", why="unsigned")
    region = message.get("region")
    if not isinstance(region, str) or not SLUG_RE.match(region):
        raise Refused(f"the {kind} names no valid region ({str(region)[:60]!r})", why="malformed")
    if len(signatures) > MAX_CENTRAL_KEYS:
        raise Refused(f"the {kind} carries {len(signatures)} signatures (at most {MAX_CENTRAL_KEYS})", why="malformed")
    held = [key_id for key_id in signatures if isinstance(key_id, str) and key_id in keys]
    if not held:
        named = ", ".join(str(k)[:16] for k in signatures)
        raise Refused(
            f"the {kind} is signed by central key {named}, which this worker's credential does not hold "
            f"(it holds {', '.join(keys) or 'none'}): a forgery, or a credential issued before the central key "
            "was rotated",
            why="unknown-key",
        )
    if not any(keys[key_id].verify(_signed_bytes(kind, region, key_id, body), signatures[key_id]) for key_id in held):
        raise Refused(f"bad central signature on a {kind} for region {region}", why="bad-signature")
    try:
        content = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise Refused(f"the signed {kind} body is not JSON ({str(exc)[:100]})", why="malformed") from None
    return region, content
