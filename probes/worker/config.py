"""What a region worker is told: its environment and command line, read once
and checked, without Django. Every bad value refuses to start with one line
naming the variable; a credential is never quoted, not even in part."""

from __future__ import annotations

import math
import os
import ssl
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from probes.conf import catalog, secretfiles
from probes.engine.envpolicy import PROVIDER_ENV, WorkerEnv, parse_allowlist
from probes.worker.protocol import SLUG_RE, BadCredential, Credential

# sysexits.h: EX_CONFIG. systemd's RestartPreventExitStatus=78 keeps a
# refused worker from being restarted every few seconds for nothing.
EX_CONFIG = 78
# EX_UNAVAILABLE: the broker cannot be reached (worth restarting later).
EX_UNAVAILABLE = 69

SCHEMES = ("redis", "rediss", "amqp", "amqps")
TLS_SCHEMES = ("rediss", "amqps")
# The longest a probe may run (seconds). The admin refuses longer timeouts
# (settings.LATENCY_MAX_PROBE_TIMEOUT is the same number); a region worker
# bounds its runs by it without the site's settings.
MAX_PROBE_TIMEOUT_S = 120


class ConfigError(Exception):
    """A refusal to start, one line, exit status `code`."""

    def __init__(self, message: str, code: int = EX_CONFIG) -> None:
        super().__init__(message)
        self.code = code


def key_variable(slug: str) -> str:
    """The per-region credential variable: LATENCY_REGION_KEY_AF_LAGOS."""
    return "LATENCY_REGION_KEY_" + slug.upper().replace("-", "_")


@dataclass(frozen=True)
class WorkerConfig:
    broker_url: str
    regions: tuple[str, ...]
    credentials: Mapping[str, Credential] = field(repr=False)
    broker_ca: str | None = None
    heartbeat_s: float = 5.0
    max_clock_offset_ms: float = 5000.0
    visibility_timeout: int = 150
    concurrency: int = 100
    loglevel: str = "INFO"
    hello_timeout_s: float = 15.0
    # What targets may use on this host: LATENCY_PROVIDER_ENV, LATENCY_CA_DIR.
    probe_env: WorkerEnv = field(default_factory=WorkerEnv)

    @property
    def scheme(self) -> str:
        return urlsplit(self.broker_url).scheme.lower()

    def broker_use_ssl(self) -> dict | None:
        """Celery's broker_use_ssl: verification always on over TLS. kombu
        would otherwise default rediss:// to CERT_NONE (with a warning)."""
        if self.scheme == "rediss":
            options: dict = {"ssl_cert_reqs": ssl.CERT_REQUIRED}
            if self.broker_ca:
                options["ssl_ca_certs"] = self.broker_ca
            return options
        if self.scheme == "amqps":
            # server_hostname None: py-amqp checks the certificate against the URL's host name.
            return {"ca_certs": self.broker_ca, "cert_reqs": ssl.CERT_REQUIRED, "server_hostname": None}
        return None

    def transport_options(self) -> dict:
        if self.scheme.startswith("redis"):
            return {
                "visibility_timeout": self.visibility_timeout,
                # As latency/settings.py: sweep for abandoned messages every few seconds.
                "unacked_restore_interval": max(1, min(5, self.visibility_timeout // 2)),
                "unacked_restore_throttle": 1,
            }
        return {}


def _number(env: Mapping[str, str], name: str) -> float:
    """A number the one list of settings declares (probes.conf.catalog): its default and bounds come from there."""
    entry = catalog.setting(name)
    assert isinstance(entry.default, int | float) and entry.minimum is not None and entry.maximum is not None
    default, low, high = float(entry.default), entry.minimum, entry.maximum
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw.strip()[:40]!r} is not a number") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"{name}={raw.strip()[:40]} must be between {low:g} and {high:g}")
    return value


def regions_of(text: str | None) -> tuple[str, ...]:
    regions = tuple(r.strip() for r in (text or "").split(",") if r.strip())
    if not regions:
        raise ConfigError("no region: give --region SLUG (or LATENCY_REGION), e.g. --region af-lagos")
    for slug in regions:
        if not SLUG_RE.match(slug):
            raise ConfigError(
                f"region {slug[:60]!r} is not a region slug (lower-case letters, digits and '-', "
                "as the admin shows it, e.g. af-lagos)"
            )
    if len(set(regions)) != len(regions):
        raise ConfigError("a region is named twice in --region")
    return regions


def broker_url_of(env: Mapping[str, str]) -> tuple[str, str]:
    for name in ("LATENCY_BROKER_URL", "CELERY_BROKER_URL", "REDIS_URL"):
        if env.get(name, "").strip():
            return env[name].strip(), name
    raise ConfigError("LATENCY_BROKER_URL is not set: give the broker's URL (rediss://... or amqps://...)")


def check_broker_url(url: str, name: str) -> None:
    """Refuses what kombu would take silently: another scheme, or TLS
    without certificate verification."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises on a bad port
    except ValueError:
        raise ConfigError(f"{name} is not a URL (a bad port or address)") from None
    if parts.scheme.lower() not in SCHEMES:
        raise ConfigError(
            f"{name} must be a redis://, rediss://, amqp:// or amqps:// URL (got scheme {parts.scheme[:20]!r})"
        )
    if not parts.hostname:
        raise ConfigError(f"{name} names no host")
    for key, value in parse_qsl(parts.query):
        if key.lower() in ("ssl_cert_reqs", "cert_reqs") and value.strip().lower() not in (
            "required",
            "cert_required",
        ):
            raise ConfigError(
                f"{name} asks for {key}={value[:20]}: a region worker always verifies the broker's "
                "certificate (give its CA bundle in LATENCY_BROKER_CA instead)"
            )


def credentials_of(env: Mapping[str, str], regions: tuple[str, ...]) -> dict[str, Credential]:
    """Each region's credential: LATENCY_REGION_KEY_<SLUG>, else LATENCY_REGION_KEY."""
    found = {}
    for slug in regions:
        name = key_variable(slug)
        if not env.get(name, "").strip():
            name = "LATENCY_REGION_KEY"
        try:
            found[slug] = Credential.parse(env.get(name), name=name, region=slug)
        except BadCredential as exc:
            if name == "LATENCY_REGION_KEY" and len(regions) > 1:
                raise ConfigError(f"{exc} (for region {slug}: or set {key_variable(slug)})") from None
            raise ConfigError(str(exc)) from None
    return found


def load(
    *,
    region: str | None = None,
    concurrency: int = 100,
    loglevel: str = "INFO",
    hello_timeout_s: float = 15.0,
    env: Mapping[str, str] | None = None,
) -> WorkerConfig:
    """The worker's configuration, or ConfigError with the one line to print."""
    env = os.environ if env is None else env
    try:
        # The region key, the broker URL and the providers' keys may be mounted as files (probes.conf.secretfiles):
        # read into the environment the engine reads them from at each call.
        allowed = parse_allowlist(env.get(PROVIDER_ENV))
        found = secretfiles.read(env, lambda name: secretfiles.catalogue_secret(name) or allowed.admits(name))
    except (secretfiles.SecretFileError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if env is os.environ:
        os.environ.update(found)
    elif found:
        env = ChainMap(found, env)
    regions = regions_of(region if region is not None else env.get("LATENCY_REGION"))
    if not 1 <= concurrency <= 2000:
        raise ConfigError("--concurrency must be between 1 and 2000")
    if loglevel.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ConfigError(f"--loglevel {loglevel[:20]!r} is not DEBUG, INFO, WARNING, ERROR or CRITICAL")
    if not math.isfinite(hello_timeout_s) or not 0 <= hello_timeout_s <= 600:
        raise ConfigError("--hello-timeout must be between 0 and 600 seconds")
    url, url_name = broker_url_of(env)
    check_broker_url(url, url_name)
    ca = env.get("LATENCY_BROKER_CA", "").strip() or None
    if ca is not None:
        if not os.path.isfile(ca):
            raise ConfigError(f"LATENCY_BROKER_CA={ca[:200]} is not a file (give the broker's CA bundle, PEM)")
        try:
            ssl.create_default_context(cafile=ca)
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise ConfigError(f"LATENCY_BROKER_CA={ca[:200]} cannot be read as a PEM CA bundle ({exc})") from None
    credentials = credentials_of(env, regions)
    try:
        probe_env = WorkerEnv.from_env(env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return WorkerConfig(
        broker_url=url,
        regions=regions,
        credentials=credentials,
        broker_ca=ca,
        heartbeat_s=_number(env, "LATENCY_HEARTBEAT_SECONDS"),
        max_clock_offset_ms=_number(env, "LATENCY_MAX_CLOCK_OFFSET_MS"),
        visibility_timeout=int(_number(env, "LATENCY_VISIBILITY_TIMEOUT")),
        concurrency=concurrency,
        loglevel=loglevel.upper(),
        hello_timeout_s=hello_timeout_s,
        probe_env=probe_env,
    )
