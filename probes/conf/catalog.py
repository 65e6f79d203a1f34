"""Every environment variable the site, the ingest worker, the scheduler and a region worker read, declared once.

latency/settings.py reads its variables through latency.env, whose getters take the default, the type and the
bounds from here (a name missing here refuses to start); a region worker (probes.worker.config) does the same
without Django. docs/reference/configuration.md and deploy/*.env.example are generated from this list
(`make settings-docs`), and tests/settings_catalog fails when they differ from it or when the code reads a
variable it lacks.

Plain Python, importing nothing of ours: probes/ never imports latency/, and a region host has no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Kind = Literal["str", "bool", "int", "float", "list", "addresses"]

# Who reads a variable: the web process (uvicorn, and latency-migrate's manage.py commands), the ingest worker
# (it also runs the maintenance queue: rollups, pruning, alerts, missed runs), the scheduler, a region worker.
SITE = "site"
INGEST = "ingest"
SCHEDULER = "scheduler"
WORKER = "worker"
CENTRAL = (SITE, INGEST, SCHEDULER)
READERS = (SITE, INGEST, SCHEDULER, WORKER)


@dataclass(frozen=True)
class Setting:
    name: str
    kind: Kind
    # The value when the variable is unset (or empty, for numbers); default_text, when given, is what the
    # reference shows instead (a default derived from another variable or from the install's path).
    default: str | bool | int | float | tuple[str, ...]
    meaning: str
    readers: tuple[str, ...]
    group: str
    secret: bool = False
    # A value an operator would write; in the deploy examples, commented out unless `required`.
    example: str | None = None
    # Set (not commented out) in the deploy examples: production needs a value of the operator's.
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    default_text: str | None = None
    # Further commented-out examples in the deploy files (another broker, say).
    alternatives: tuple[str, ...] = ()
    # The name is a prefix completed by the operator (LATENCY_REGION_KEY_<SLUG>): read by a computed name.
    prefix: bool = False

    def shown_default(self) -> str:
        if self.default_text is not None:
            return self.default_text
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if isinstance(self.default, tuple):
            return ",".join(self.default)
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)

    def bounds(self) -> str:
        """The accepted range, as the reference shows it ("1 to 100", "at least 0"), or ""."""
        low, high = (None if v is None else f"{v:g}" for v in (self.minimum, self.maximum))
        if low is not None and high is not None:
            return f"{low} to {high}"
        if low is not None:
            return f"at least {low}"
        if high is not None:
            return f"at most {high}"
        return ""


class UnknownSetting(LookupError):
    """A variable read by name that this list does not declare."""


SECURITY = "Site and security"
DATABASE = "Database and reads"
BROKER = "Broker and live feed"
ACCESS = "Access"
MAINTENANCE = "Retention and maintenance"
EXPORTS = "Exports"
FLEET = "Region health"
ALERTS = "Alerts and notifications"
REAL_USERS = "Real users"
REGION = "Region worker"
PROCESS_HEALTH = "Health endpoints of the workers"
TARGETS = "What targets may use"
GROUPS = (
    SECURITY,
    DATABASE,
    BROKER,
    ACCESS,
    MAINTENANCE,
    EXPORTS,
    FLEET,
    ALERTS,
    REAL_USERS,
    REGION,
    PROCESS_HEALTH,
    TARGETS,
)

_DEV_SECRET_TEXT = "a development key (refused in production)"

# One entry per variable, laid out by hand: the formatter would spread each over a dozen lines.
# fmt: off
SETTINGS: tuple[Setting, ...] = (
    # --- Site and security -----------------------------------------------------------------------------------
    Setting(
        "LATENCY_PRODUCTION", "bool", False,
        "Production mode: HTTPS-only cookies, HSTS, the HTTPS redirect, manifest static files; start-up is refused "
        "without a real SECRET_KEY or with DEBUG, and `manage.py check --deploy` is clean.",
        CENTRAL, SECURITY, example="true", required=True,
    ),
    Setting(
        "DEBUG", "bool", False,
        "Django's debug pages (tracebacks and settings shown to the visitor): for development only; refused "
        "together with LATENCY_PRODUCTION.",
        CENTRAL, SECURITY,
    ),
    Setting(
        "SECRET_KEY", "str", "",
        "Django's signing key (sessions, CSRF, password resets): 50 or more random characters, "
        "`python3 -c 'import secrets; print(secrets.token_urlsafe(50))'`. Required in production.",
        CENTRAL, SECURITY, secret=True, example="", required=True, default_text=_DEV_SECRET_TEXT,
    ),
    Setting(
        "ALLOWED_HOSTS", "list", ("127.0.0.1", "localhost", "[::1]"),
        "The host names the site answers to, comma separated.",
        (SITE,), SECURITY, example="atlas.example.org", required=True,
    ),
    Setting(
        "CSRF_TRUSTED_ORIGINS", "list", (),
        "Origins (https://atlas.example.org) trusted for forms and the live websocket besides the request's own, "
        "comma separated: the site's public origin behind a TLS proxy.",
        (SITE,), SECURITY, example="https://atlas.example.org", required=True,
    ),
    Setting(
        "LATENCY_TRUSTED_PROXIES", "list", (),
        "Addresses or networks of your reverse proxies, comma separated: only requests from them may set the "
        "scheme (X-Forwarded-Proto) and the client address (X-Forwarded-For); from anyone else those headers "
        "are dropped.",
        (SITE,), SECURITY, example="127.0.0.1,::1", required=True,
    ),
    Setting(
        "SECURE_SSL_REDIRECT", "bool", True,
        "In production, redirect plain HTTP to HTTPS.",
        (SITE,), SECURITY, default_text="true (production only)",
    ),
    Setting(
        "SECURE_HSTS_SECONDS", "int", 31536000,
        "In production, how long browsers remember to use HTTPS only (HSTS), in seconds.",
        (SITE,), SECURITY, minimum=0,
    ),
    Setting(
        "SECURE_HSTS_PRELOAD", "bool", True,
        "In production, ask to be on the browsers' HSTS preload list.",
        (SITE,), SECURITY,
    ),
    Setting(
        "STATIC_ROOT", "str", "staticfiles",
        "Where `manage.py collectstatic` (latency-migrate) writes the static files and the web process serves "
        "them from.",
        (SITE,), SECURITY, example="/var/lib/latency-atlas/static", required=True,
        default_text="staticfiles/ in the checkout",
    ),
    Setting(
        "LOG_LEVEL", "str", "INFO",
        "The level of the central processes' log (DEBUG, INFO, WARNING, ERROR).",
        CENTRAL, SECURITY,
    ),
    # --- Database and reads ----------------------------------------------------------------------------------
    Setting(
        "DATABASE_URL", "str", "postgres://postgres@127.0.0.1:5432/latency",
        "PostgreSQL (psycopg 3): postgres://USER:PASSWORD@HOST:PORT/NAME, with ?sslmode=require for TLS; a "
        "password with @ : / or % is percent-encoded (@ is %40).",
        CENTRAL, DATABASE, secret=True, example="postgres://latency:CHANGE-ME@127.0.0.1:5432/latency",
        required=True,
    ),
    Setting(
        "LATENCY_DB_POOL", "bool", True,
        "The web process keeps its database connections open in a pool between requests; false: one connection "
        "per request (behind PgBouncer, say).",
        (SITE,), DATABASE,
    ),
    Setting(
        "LATENCY_DB_POOL_MIN", "int", 2,
        "Connections the web process's pool keeps open at least.",
        (SITE,), DATABASE, minimum=1, maximum=100,
    ),
    Setting(
        "LATENCY_DB_POOL_MAX", "int", 20,
        "Connections the web process's pool opens at most (a request beyond that waits up to 10 s for one); at "
        "least LATENCY_DB_POOL_MIN.",
        (SITE,), DATABASE, minimum=1, maximum=1000,
    ),
    Setting(
        "LATENCY_READ_THREADS", "int", 2,
        "Helper threads of the web process that read a window's independent parts side by side, each on a "
        "pooled connection of its own (only with LATENCY_DB_POOL); 0: one after another on the request's "
        "connection.",
        (SITE,), DATABASE, minimum=0, maximum=16,
    ),
    Setting(
        "LATENCY_WEB_MEMORY_RESERVE_MB", "int", 64,
        "Memory (MB) the web process writes once at its start and keeps for its reads' large arrays, so a first "
        "read pays no page fault per 4 KB of them (glibc only); 0: glibc's defaults.",
        (SITE,), DATABASE, minimum=0, maximum=4096,
    ),
    Setting(
        "LATENCY_READ_IO_CONCURRENCY", "int", 64,
        "Pages a read's bitmap scans ask the disk for ahead of need (PostgreSQL's effective_io_concurrency, for "
        "the read's transaction alone); 0: the server's own setting (required on a server without "
        "posix_fadvise).",
        (SITE,), DATABASE, minimum=0, maximum=1000,
    ),
    # --- Broker and live feed --------------------------------------------------------------------------------
    Setting(
        "REDIS_URL", "str", "redis://127.0.0.1:6379/0",
        "Redis: the live feed's channel layer, and the Celery broker unless CELERY_BROKER_URL names another; "
        "redis://, rediss:// (TLS) or unix://, redis://:PASSWORD@host:6379/0 with a password. A region worker "
        "falls back to it when neither LATENCY_BROKER_URL nor CELERY_BROKER_URL is set.",
        (*CENTRAL, WORKER), BROKER, secret=True, example="redis://127.0.0.1:6379/0", required=True,
    ),
    Setting(
        "CELERY_BROKER_URL", "str", "",
        "The Celery broker, when it is not REDIS_URL: redis://, rediss://, amqp:// or amqps:// (RabbitMQ). A "
        "region worker falls back to it when LATENCY_BROKER_URL is not set.",
        (*CENTRAL, WORKER), BROKER, secret=True, default_text="REDIS_URL",
        example="amqps://latency:CHANGE-ME@broker.example.org:5671/latency",
    ),
    Setting(
        "LATENCY_BROKER_CA", "str", "",
        "The CA bundle (PEM file) that signed a TLS broker's certificate (rediss://, amqps://); empty: the "
        "system's trusted CAs (Redis only: amqps:// needs it). The certificate is always verified.",
        (*CENTRAL, WORKER), BROKER, example="/etc/latency-atlas/broker-ca.pem",
    ),
    Setting(
        "LATENCY_VISIBILITY_TIMEOUT", "int", 150,
        "Seconds before Redis hands an unacknowledged run to another worker (the same value on the central "
        "site and the region workers); longer than the longest probe timeout (120 s).",
        (*CENTRAL, WORKER), BROKER, minimum=2, maximum=86400,
    ),
    Setting(
        "LATENCY_CHANNEL_PREFIX", "str", "latency",
        "The prefix of the live feed's Redis keys: sites sharing a Redis database each need their own.",
        (SITE, INGEST), BROKER,
    ),
    # --- Access ----------------------------------------------------------------------------------------------
    Setting(
        "LATENCY_PUBLIC_DASHBOARD", "bool", False,
        "Anyone may read the dashboard (pages, JSON, the live websocket) without signing in; nothing on it "
        "writes, and the admin keeps its own login.",
        (SITE,), ACCESS,
    ),
    Setting(
        "LATENCY_STATUS_CACHE_S", "int", 30,
        "Seconds a status page's reading (its page, badges, feed and summary.json) is served from the cache (in "
        "Redis, shared by the web processes) before one request reads it again while the others keep serving "
        "the previous one; 0: read on every request.",
        (SITE,), ACCESS, minimum=0, maximum=3600,
    ),
    Setting(
        "LATENCY_METRICS_TOKEN", "str", "",
        "The bearer token Prometheus sends to /metrics (at least 16 characters; only its SHA-256 is kept in the "
        "settings); empty: only signed-in sessions may read /metrics.",
        (SITE,), ACCESS, secret=True,
    ),
    Setting(
        "LATENCY_LOGIN_FAILURE_LIMIT", "int", 5,
        "Failed sign-ins after which a username, and separately a client address, is locked out.",
        (SITE,), ACCESS, minimum=1, maximum=1000,
    ),
    Setting(
        "LATENCY_LOGIN_COOLOFF_MINUTES", "int", 15,
        "How long a lockout lasts after the last failure, in minutes.",
        (SITE,), ACCESS, minimum=1, maximum=7 * 24 * 60,
    ),
    Setting(
        "LATENCY_EMULATED_GEOGRAPHY", "bool", False,
        "Every region runs on one machine with emulated network delay (the demo): every page says so, so the "
        "numbers are never mistaken for real ones. A target without coordinates is emulated as hosted in AWS "
        "us-east-1 (Ashburn, Virginia), and each probe request names its region in an x-emulated-region header.",
        # The scheduler too: it writes each region's emulated delay and header into the run order.
        (SITE, SCHEDULER), ACCESS,
    ),
    # --- Retention and maintenance ---------------------------------------------------------------------------
    Setting(
        "LATENCY_RETENTION_DAYS", "int", 30,
        "Days raw measurements, real users' raw observations and dead letters are kept; rollups are kept apart.",
        (INGEST,), MAINTENANCE, minimum=1,
    ),
    Setting(
        "LATENCY_ROLLUP_RETENTION_DAYS", "int", 0,
        "Days the rollups (the probes' and real users') are kept; 0: forever.",
        (INGEST,), MAINTENANCE, minimum=0,
    ),
    Setting(
        "LATENCY_PRUNE_BATCH", "int", 10000,
        "Rows one pruning statement deletes at most, so a large prune never holds its locks long.",
        (INGEST,), MAINTENANCE, minimum=100,
    ),
    Setting(
        "LATENCY_PARTITIONS_AHEAD_DAYS", "int", 7,
        "Days of partitions of raw rows made ahead of today, hourly: a scheduler outage shorter than this still "
        "finds tomorrow's partition in place.",
        (INGEST,), MAINTENANCE, minimum=1, maximum=366,
    ),
    Setting(
        "LATENCY_HEARTBEAT_HISTORY_HOURS", "int", 24,
        "Hours of region workers' heartbeats kept per worker.",
        (SITE, INGEST), MAINTENANCE, minimum=1, maximum=24 * 90,
    ),
    Setting(
        "LATENCY_MISSED_LOOKBACK", "int", 1800,
        "Seconds each pass over closed slots looks back for runs nobody made: a central outage shorter than "
        "this still has its missed runs recorded.",
        (INGEST,), MAINTENANCE, minimum=60, maximum=86400,
    ),
    # --- Exports ---------------------------------------------------------------------------------------------
    Setting(
        "LATENCY_MAX_CONCURRENT_EXPORTS", "int", 4,
        "CSV exports streaming at once per web process (each holds a database connection, regions.csv up to "
        "LATENCY_EXPORT_READERS); beyond it: 429 with Retry-After.",
        (SITE,), EXPORTS, minimum=1, maximum=100,
    ),
    Setting(
        "LATENCY_EXPORT_READERS", "int", 2,
        "Connections one regions.csv export reads its rollups on at once, in consecutive parts streamed in "
        "order; 1: one statement.",
        (SITE,), EXPORTS, minimum=1, maximum=8,
    ),
    # --- Region health ---------------------------------------------------------------------------------------
    Setting(
        "LATENCY_REGION_STALE_AFTER", "int", 60,
        "Seconds after a region's newest running worker's heartbeat that the region stops being live and shows "
        "as stale.",
        (SITE, INGEST), FLEET, minimum=5, maximum=3600,
    ),
    Setting(
        "LATENCY_REGION_DARK_AFTER", "int", 300,
        "Seconds of silence after which a region is dark (also: no worker ever, or every worker stopped); "
        "longer than LATENCY_REGION_STALE_AFTER.",
        (SITE, INGEST), FLEET, minimum=10, maximum=86400,
    ),
    Setting(
        "LATENCY_MAP_ERROR_RING_RATIO", "float", 0.05,
        "The share of a region's calls in the window that must fail before the map rings its marker in red "
        "(0.05: 5 % or more); the map's legend states it. One failure among many calls draws no ring.",
        (SITE,), FLEET, minimum=0.001, maximum=1,
    ),
    # --- Alerts and notifications ----------------------------------------------------------------------------
    Setting(
        "LATENCY_ALERT_GLOBAL_SHARE", "float", 0.75,
        "The share of the regions measured that must breach for an incident to be global (the provider); below "
        "it, regional (the paths to it).",
        (INGEST,), ALERTS, minimum=0.01, maximum=1.0,
    ),
    Setting(
        "LATENCY_CHANNEL_FAILING_AFTER", "int", 3,
        "Failed attempts in a row after which a notification channel is flagged in the admin.",
        (SITE, INGEST), ALERTS, minimum=1, maximum=1000,
    ),
    Setting(
        "LATENCY_NOTIFY_RETRY_BACKOFF_MAX", "int", 300,
        "The longest wait, in seconds, between two attempts of a notification (the waits double from 30 s, "
        "with jitter).",
        (INGEST,), ALERTS, minimum=1, maximum=3600,
    ),
    Setting(
        "LATENCY_NOTIFY_ALLOW_PRIVATE", "bool", False,
        "Let notification channels reach loopback, link-local, private and other internal addresses (a webhook "
        "or mail relay on the site's own network); by default they reach public addresses only.",
        (SITE, INGEST), ALERTS,
    ),
    Setting(
        "LATENCY_NOTIFY_DNS_SERVERS", "addresses", (),
        "DNS servers (IP[:port], comma separated) that resolve the host names of notification channels instead "
        "of the system's resolver.",
        (SITE, INGEST), ALERTS, example="192.0.2.53,[2001:db8::53]:53",
    ),
    Setting(
        "LATENCY_SITE_URL", "str", "",
        "The site's address as its users reach it (https://atlas.example.org): notifications link to the "
        "incident's page under it; empty: the link is the path alone.",
        (INGEST,), ALERTS, example="https://atlas.example.org",
    ),
    # --- Real users ------------------------------------------------------------------------------------------
    Setting(
        "LATENCY_GEOIP_DATABASE", "str", "",
        "Path to a GeoIP2/GeoLite2/DB-IP City .mmdb file; without it real users are not placed by their address. "
        "Read offline, never a network lookup; docs/guides/real-users-geoip.md says where a free, current one comes "
        "from (DB-IP IP to City Lite, or MaxMind GeoLite2 City).",
        (SITE,), REAL_USERS, example="/var/lib/latency-atlas/dbip-city-lite.mmdb",
    ),
    Setting(
        "LATENCY_REAL_USERS_MIN_SAMPLES", "int", 5,
        "Observations a place needs in the window read before it is shown (map, pages, CSV), so that no single "
        "user can be picked out.",
        (SITE,), REAL_USERS, minimum=1, maximum=10000,
    ),
    Setting(
        "LATENCY_OTLP_MAX_BODY_BYTES", "int", 4 * 1024 * 1024,
        "The largest OTLP/HTTP body taken, in bytes; larger: 413.",
        (SITE,), REAL_USERS, minimum=1024,
    ),
    Setting(
        "LATENCY_OTLP_MAX_DECODED_BYTES", "int", 32 * 1024 * 1024,
        "The largest OTLP body once decompressed, in bytes (a small gzip body can inflate a thousandfold); "
        "larger: 413.",
        (SITE,), REAL_USERS, minimum=1024,
    ),
    Setting(
        "LATENCY_BEACON_MAX_BODY_BYTES", "int", 16 * 1024,
        "The largest browser beacon taken, in bytes; larger: 413.",
        (SITE,), REAL_USERS, minimum=512, maximum=1024 * 1024,
    ),
    Setting(
        "LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE", "int", 300_000,
        "Spans plus metric points one ingest source may send per minute over OTLP (an empty export counts one); "
        "an export that would go over is answered 429 with Retry-After and stored not at all.",
        (SITE,), REAL_USERS, minimum=1, maximum=1_000_000_000,
    ),
    Setting(
        "LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST", "int", 10_000,
        "Spans, or metric points, in one OTLP export; more is answered 413 before any is decoded; at most "
        "LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE.",
        (SITE,), REAL_USERS, minimum=1, maximum=1_000_000,
    ),
    Setting(
        "LATENCY_OTLP_DECODE_SLOTS", "int", 2,
        "OTLP bodies one web process reads, decodes and stores at once; more wait up to "
        "LATENCY_OTLP_DECODE_WAIT_SECONDS, then get 503 with Retry-After.",
        (SITE,), REAL_USERS, minimum=1, maximum=64,
    ),
    Setting(
        "LATENCY_OTLP_DECODE_WAIT_SECONDS", "int", 10,
        "Seconds an OTLP body waits for a decode slot before it is answered 503.",
        (SITE,), REAL_USERS, minimum=0, maximum=300,
    ),
    Setting(
        "LATENCY_BEACONS_PER_MINUTE", "int", 600,
        "Browser beacons one ingest source takes per minute, apart from OTLP's budget.",
        (SITE,), REAL_USERS, minimum=1, maximum=1_000_000_000,
    ),
    Setting(
        "LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE", "int", 30,
        "Beacons of one source per client address (an IPv6 address by its /64) per minute.",
        (SITE,), REAL_USERS, minimum=1, maximum=1_000_000_000,
    ),
    Setting(
        "LATENCY_BEACONS_PER_TARGET_PER_MINUTE", "int", 300,
        "Beacons of one source naming one target per minute (beacons naming no known target share one budget).",
        (SITE,), REAL_USERS, minimum=1, maximum=1_000_000_000,
    ),
    # --- Region worker ---------------------------------------------------------------------------------------
    Setting(
        "LATENCY_BROKER_URL", "str", "",
        "The broker a region worker takes its runs from, with a password, over TLS (rediss:// or amqps://; "
        "redis:// and amqp:// on a private network only); the certificate is always verified.",
        (WORKER,), REGION, secret=True, required=True, default_text="CELERY_BROKER_URL, else REDIS_URL",
        example="rediss://:CHANGE-ME@broker.example.org:6380/0",
        alternatives=("amqps://region-af-lagos:CHANGE-ME@broker.example.org:5671/latency",),
    ),
    Setting(
        "LATENCY_REGION", "str", "",
        "The region slugs this worker serves, comma separated, when --region is not given.",
        (WORKER,), REGION, example="af-lagos",
    ),
    Setting(
        "LATENCY_REGION_KEY", "str", "",
        "The region's credential, shown once by the admin or `manage.py region_key SLUG` (la2_..., with the "
        "central site's public key after a '.').",
        (WORKER,), REGION, secret=True, example="", required=True,
    ),
    Setting(
        "LATENCY_REGION_KEY_", "str", "",
        "LATENCY_REGION_KEY_<SLUG> (upper case, - as _): the credential of one region on a host serving "
        "several, in its region-SLUG.env; wins over LATENCY_REGION_KEY.",
        (WORKER,), REGION, secret=True, prefix=True, example="",
    ),
    Setting(
        "LATENCY_HEARTBEAT_SECONDS", "float", 5.0,
        "Seconds between a region worker's heartbeats.",
        (WORKER,), REGION, minimum=0.5, maximum=300,
    ),
    Setting(
        "LATENCY_MAX_CLOCK_OFFSET_MS", "float", 5000.0,
        "The largest clock offset against the central site, in milliseconds, a region worker accepts at start.",
        (WORKER,), REGION, minimum=1, maximum=86_400_000,
    ),
    # --- Health endpoints of the workers ----------------------------------------------------------------------
    Setting(
        "LATENCY_HEALTH_PORT", "int", 0,
        "The TCP port on which the ingest worker, the scheduler or a region worker answers /healthz and /readyz "
        "(probes/runtime/health.py); one port per process. Unset or 0: no health server.",
        (INGEST, SCHEDULER, WORKER), PROCESS_HEALTH, minimum=0, maximum=65535, example="8001",
        default_text="unset (no health server)",
    ),
    Setting(
        "LATENCY_HEALTH_HOST", "str", "0.0.0.0",
        "The address the health server listens on: every IPv4 address by default, since an orchestrator probes a "
        "container by its own address (`::` for every IPv6 and IPv4 address); 127.0.0.1 on a shared host whose "
        "only prober is local. The answers name no secret.",
        (INGEST, SCHEDULER, WORKER), PROCESS_HEALTH, example="127.0.0.1",
    ),
    Setting(
        "LATENCY_HEALTH_STALE_SECONDS", "float", 30.0,
        "A worker is not ready (/readyz 503) when its own loop (a Celery worker's consumer, the scheduler's tick) "
        "has not beaten for this many seconds.",
        (INGEST, SCHEDULER, WORKER), PROCESS_HEALTH, minimum=2, maximum=3600,
    ),
    # --- What targets may use --------------------------------------------------------------------------------
    Setting(
        "LATENCY_PROVIDER_ENV", "str", "",
        "Where the engine runs (region workers, `manage.py probe`): the variables a target's key and ${VAR} "
        "headers may be read from, comma separated NAME, PREFIX* or *SUFFIX. The site's own variables "
        "(LATENCY_*, CELERY_*, DATABASE_URL, REDIS_URL, SECRET_KEY, *_FILE) are never read for a target.",
        (WORKER, SITE), TARGETS, default_text="names ending in _API_KEY or _TOKEN",
        example="OPENAI_API_KEY,ANTHROPIC_API_KEY,ACME_*",
    ),
    Setting(
        "LATENCY_CA_DIR", "str", "",
        "Where the engine runs: the directory (absolute path) of the CA bundles targets may name, by file name "
        "inside it; empty: no target may use a CA bundle.",
        (WORKER, SITE), TARGETS, example="/etc/latency-atlas/ca.d",
    ),
)
# fmt: on

# Variables that are no longer read: start-up refuses them with what replaced them, rather than ignoring a
# value an operator set.
RETIRED: Mapping[str, str] = {
    "LATENCY_INGEST_RATE_PER_MINUTE": (
        "LATENCY_INGEST_RATE_PER_MINUTE is gone: set LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE and "
        "LATENCY_BEACONS_PER_MINUTE (with LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE, "
        "LATENCY_BEACONS_PER_TARGET_PER_MINUTE) instead"
    ),
}

# What `manage.py check` reports about these settings (latency/checks.py), by id, for the reference page; a test
# holds the two to each other.
CHECKS: Mapping[str, str] = {
    "latency.E001": "CELERY_BROKER_URL is not a redis://, rediss://, amqp:// or amqps:// URL with a host and a port.",
    "latency.E002": "REDIS_URL has a bad port, no host, or a database that is not a number.",
    "latency.E003": "DATABASE_URL asks for an sslmode PostgreSQL does not know.",
    "latency.E004": "LATENCY_SITE_URL is not an http(s):// address without a query.",
    "latency.W001": "LATENCY_GEOIP_DATABASE names a file that is missing, unreadable or not a MaxMind DB (.mmdb).",
    "latency.W002": "LATENCY_VISIBILITY_TIMEOUT is not longer than the longest probe (120 s).",
    "latency.W003": "LATENCY_READ_THREADS is set while LATENCY_DB_POOL is off (it has no effect).",
    "latency.W004": "LATENCY_READ_THREADS is at least LATENCY_DB_POOL_MAX: none is left to the request.",
    "latency.W005": "LATENCY_OTLP_MAX_DECODED_BYTES is smaller than LATENCY_OTLP_MAX_BODY_BYTES.",
    "latency.W006": "LATENCY_ROLLUP_RETENTION_DAYS is shorter than LATENCY_RETENTION_DAYS.",
    "latency.W007": "In production, ALLOWED_HOSTS is the development default, empty, or '*'.",
    "latency.W008": "In production, LATENCY_SITE_URL is http://.",
    "latency.W009": "LATENCY_PUBLIC_DASHBOARD with DEBUG: tracebacks for every visitor.",
    "latency.W010": "LATENCY_PUBLIC_DASHBOARD without LATENCY_PRODUCTION: a public site without HTTPS hardening.",
    "latency.W011": "In production, REDIS_URL or CELERY_BROKER_URL reach another host in plain TCP without a password.",
}

BY_NAME: Mapping[str, Setting] = {entry.name: entry for entry in SETTINGS}


def setting(name: str, kind: Kind | None = None) -> Setting:
    """The entry for `name` (LATENCY_REGION_KEY_AF_LAGOS: its prefix's). UnknownSetting when the list lacks it,
    TypeError when it is declared with another kind: the reader and the list must agree."""
    entry = BY_NAME.get(name)
    if entry is None:
        entry = next((e for e in SETTINGS if e.prefix and name.startswith(e.name)), None)
    if entry is None:
        raise UnknownSetting(f"{name} is read but not declared in probes/conf/catalog.py")
    if kind is not None and entry.kind != kind:
        raise TypeError(f"{name} is declared as {entry.kind}, read as {kind}")
    return entry


def declared(name: str) -> bool:
    try:
        setting(name)
    except UnknownSetting:
        return name in RETIRED
    return True


def read_by(reader: str) -> tuple[Setting, ...]:
    return tuple(entry for entry in SETTINGS if reader in entry.readers)
