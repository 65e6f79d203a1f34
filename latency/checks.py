"""Django system checks (`manage.py check`, run by migrate and so by latency-migrate before the site starts) for
the configuration mistakes no single value shows: a URL that reads but cannot work, settings that contradict each
other, production values that leave the site open. A value that cannot be read at all stops start-up in
latency/settings.py instead (ImproperlyConfigured), as a process that runs without a check must not start on it.

latency.E…: the site cannot work as configured. latency.W…: it works, but not as the operator most likely meant.
Messages name the variable and never quote a secret (a URL's password, a token)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

BROKER_SCHEMES = ("redis", "rediss", "amqp", "amqps", "redis+socket")
SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
LOOPBACK = ("127.0.0.1", "::1", "localhost")
DEVELOPMENT_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
# The last bytes of a MaxMind DB file hold its metadata, introduced by this marker (MaxMind DB spec 2.0).
MMDB_MARKER = b"\xab\xcd\xefMaxMind.com"
MMDB_METADATA_MAX = 128 * 1024


def _url_problem(url: str, schemes: tuple[str, ...]) -> str | None:
    """Why a service URL cannot work, or None: its scheme, its port, its host. Never quotes the URL."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises on a port that is no number or out of range
    except ValueError:
        return "has a port that is not a number from 1 to 65535"
    if parts.scheme not in schemes:
        return f"must be a {', '.join(s + '://' for s in schemes)} URL (got scheme {parts.scheme[:20]!r})"
    if parts.scheme in ("redis", "rediss", "amqp", "amqps") and not parts.hostname:
        return "names no host"
    if parts.scheme in ("redis", "rediss"):
        db = parts.path.strip("/")
        if db and not db.isdigit():
            return f"names Redis database {db[:20]!r}, which is not a number"
    return None


@register()
def check_service_urls(app_configs, **kwargs) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    problem = _url_problem(settings.CELERY_BROKER_URL, BROKER_SCHEMES)
    if problem:
        found.append(
            Error(
                f"CELERY_BROKER_URL {problem}.",
                hint="It defaults to REDIS_URL; Celery reaches a Redis socket as redis+socket:///path/redis.sock.",
                id="latency.E001",
            )
        )
    problem = _url_problem(settings.REDIS_URL, ("redis", "rediss", "unix"))
    if problem:
        found.append(Error(f"REDIS_URL {problem}.", id="latency.E002"))
    sslmode = settings.DATABASES["default"].get("OPTIONS", {}).get("sslmode")
    if sslmode is not None and sslmode not in SSLMODES:
        found.append(
            Error(
                f"DATABASE_URL asks for sslmode={sslmode[:20]!r}, which PostgreSQL does not know.",
                hint=f"Use one of {', '.join(SSLMODES)}.",
                id="latency.E003",
            )
        )
    return found


@register()
def check_site_url(app_configs, **kwargs) -> list[CheckMessage]:
    url = settings.LATENCY_SITE_URL
    if not url:
        return []
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        return [
            Error(
                "LATENCY_SITE_URL must be the site's address as its users reach it, http(s)://host[/path], "
                "without a query.",
                hint="For example https://atlas.example.org; notifications link to pages under it.",
                id="latency.E004",
            )
        ]
    if settings.LATENCY_PRODUCTION and parts.scheme != "https":
        return [
            Warning(
                "LATENCY_SITE_URL is http:// in production, where the site redirects to HTTPS: notifications "
                "would link to plain HTTP.",
                hint="Give the https:// address.",
                id="latency.W008",
            )
        ]
    return []


@register()
def check_geoip_database(app_configs, **kwargs) -> list[CheckMessage]:
    path = settings.LATENCY_GEOIP_DATABASE
    if not path:
        return []
    hint = "Give the path of a GeoIP2/GeoLite2/DB-IP City .mmdb file the site's user can read."
    try:
        with open(path, "rb") as db:
            size = db.seek(0, os.SEEK_END)
            db.seek(max(0, size - MMDB_METADATA_MAX))
            tail = db.read()
    except OSError as exc:
        reason = "does not exist" if isinstance(exc, FileNotFoundError) else f"cannot be read ({exc.strerror})"
        return [Warning(f"LATENCY_GEOIP_DATABASE names a file that {reason}.", hint=hint, id="latency.W001")]
    if MMDB_MARKER not in tail:
        return [
            Warning("LATENCY_GEOIP_DATABASE names a file that is no MaxMind DB (.mmdb).", hint=hint, id="latency.W001")
        ]
    return []


@register()
def check_contradictions(app_configs, **kwargs) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    if settings.LATENCY_VISIBILITY_TIMEOUT <= settings.LATENCY_MAX_PROBE_TIMEOUT:
        found.append(
            Warning(
                f"LATENCY_VISIBILITY_TIMEOUT={settings.LATENCY_VISIBILITY_TIMEOUT} is not longer than the longest "
                f"probe ({settings.LATENCY_MAX_PROBE_TIMEOUT} s): Redis would hand a run still in progress to a "
                "second worker.",
                hint=f"Set it above {settings.LATENCY_MAX_PROBE_TIMEOUT} (the default is 150), on the region "
                "workers too.",
                id="latency.W002",
            )
        )
    if settings.LATENCY_READ_THREADS and not settings.LATENCY_DB_POOL:
        found.append(
            Warning(
                "LATENCY_READ_THREADS has no effect with LATENCY_DB_POOL=false: the helper threads read on pooled "
                "connections only.",
                hint="Set LATENCY_READ_THREADS=0, or turn the pool on.",
                id="latency.W003",
            )
        )
    elif settings.LATENCY_DB_POOL and settings.LATENCY_READ_THREADS >= settings.LATENCY_DB_POOL_MAX:
        found.append(
            Warning(
                f"LATENCY_READ_THREADS={settings.LATENCY_READ_THREADS} leaves no pooled connection for the "
                f"request itself (LATENCY_DB_POOL_MAX={settings.LATENCY_DB_POOL_MAX}): reads wait on each other.",
                hint="Keep LATENCY_DB_POOL_MAX well above LATENCY_READ_THREADS.",
                id="latency.W004",
            )
        )
    if settings.LATENCY_OTLP_MAX_DECODED_BYTES < settings.LATENCY_OTLP_MAX_BODY_BYTES:
        found.append(
            Warning(
                "LATENCY_OTLP_MAX_DECODED_BYTES is smaller than LATENCY_OTLP_MAX_BODY_BYTES: an uncompressed body "
                "the body cap admits is refused once read.",
                hint="Set the decoded cap at least as large as the body cap.",
                id="latency.W005",
            )
        )
    rollups, raw = settings.LATENCY_ROLLUP_RETENTION_DAYS, settings.LATENCY_RETENTION_DAYS
    if rollups and rollups < raw:
        found.append(
            Warning(
                f"LATENCY_ROLLUP_RETENTION_DAYS={rollups} is shorter than LATENCY_RETENTION_DAYS={raw}: rollups "
                "would be pruned while the raw rows they summarise are kept.",
                hint="Keep rollups at least as long as raw rows (0 keeps them forever).",
                id="latency.W006",
            )
        )
    return found


@register(Tags.security)
def check_exposure(app_configs, **kwargs) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    if settings.LATENCY_PRODUCTION:
        hosts = list(settings.ALLOWED_HOSTS)
        if not hosts or hosts == DEVELOPMENT_HOSTS or "*" in hosts:
            found.append(
                Warning(
                    "ALLOWED_HOSTS is "
                    + ("'*'" if "*" in hosts else "the development default")
                    + " in production: give the site's public host name.",
                    hint="For example ALLOWED_HOSTS=atlas.example.org.",
                    id="latency.W007",
                )
            )
        for name in ("REDIS_URL", "CELERY_BROKER_URL"):
            parts = urlsplit(getattr(settings, name))
            remote = parts.hostname is not None and parts.hostname not in LOOPBACK
            if remote and parts.scheme in ("redis", "amqp") and not parts.password:
                found.append(
                    Warning(
                        f"{name} reaches a broker on another host without a password, over plain TCP.",
                        hint="Use rediss:// or amqps:// with a password (see LATENCY_BROKER_CA).",
                        id="latency.W011",
                    )
                )
    if settings.LATENCY_PUBLIC_DASHBOARD and settings.DEBUG:
        found.append(
            Warning(
                "LATENCY_PUBLIC_DASHBOARD=true with DEBUG=true: every visitor of the public dashboard sees "
                "tracebacks and settings on an error.",
                hint="Unset DEBUG on a site anyone may read.",
                id="latency.W009",
            )
        )
    elif settings.LATENCY_PUBLIC_DASHBOARD and not settings.LATENCY_PRODUCTION:
        found.append(
            Warning(
                "LATENCY_PUBLIC_DASHBOARD=true without LATENCY_PRODUCTION=true: a site open to anyone runs without "
                "HTTPS-only cookies, HSTS or the HTTPS redirect.",
                hint="Set LATENCY_PRODUCTION=true where the dashboard is public.",
                id="latency.W010",
            )
        )
    return found
