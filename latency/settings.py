"""Latency Atlas settings: one module, driven by the environment.

Every value an operator may change is read here through the typed helpers in
latency.env, which refuse bad values instead of guessing and take each
variable's default and bounds from the one list of settings
(probes/conf/catalog.py; docs/reference/configuration.md is generated from it).
"""

from __future__ import annotations

import hashlib
import os
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from latency.env import (
    broker_tls,
    channel_layer,
    database_from_url,
    env_addresses,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
)
from probes.conf import secretfiles
from probes.conf.catalog import RETIRED
from probes.engine.envpolicy import WorkerEnv
from probes.proxy import parse_proxies

BASE_DIR = Path(__file__).resolve().parent.parent

# Secrets mounted as files (SECRET_KEY_FILE, DATABASE_URL_FILE...: probes.conf.secretfiles), before anything reads
# their variables.
try:
    secretfiles.apply(os.environ)
except secretfiles.SecretFileError as exc:
    raise ImproperlyConfigured(str(exc)) from None

DEBUG = env_bool("DEBUG")
LATENCY_PRODUCTION = env_bool("LATENCY_PRODUCTION")

_DEV_SECRET = "dev-insecure-latency-atlas-secret-key-change-me-in-production-please"
if LATENCY_PRODUCTION:
    # DEBUG pages show settings and tracebacks to any visitor, and DEBUG once
    # meant the development key was used silently: refuse both outright.
    if DEBUG:
        raise ImproperlyConfigured(
            "DEBUG=true cannot be combined with LATENCY_PRODUCTION=true: debug pages show tracebacks and "
            "settings to every visitor. Unset DEBUG (or set DEBUG=false) in production."
        )
    SECRET_KEY = env_str("SECRET_KEY")
    if not SECRET_KEY or SECRET_KEY == _DEV_SECRET:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set (to a long random value, not the development key) when LATENCY_PRODUCTION=true"
        )
else:
    SECRET_KEY = env_str("SECRET_KEY") or _DEV_SECRET

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "latency.admin_config.LatencyAdminConfig",  # django.contrib.admin, its index grouped (probes.admin_site)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "channels",
    "axes",
    "csp",
    # The REST API /api/v1/ (latency.api_v1): its schema from drf-spectacular, its docs page's Swagger UI from
    # the sidecar's static files (no CDN).
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "probes",
    "latency",
]

MIDDLEWARE = [
    # Outermost, so last to see the response: a streamed one hands the request's pooled database connections
    # back before its first byte (latency.pooled). It does nothing to the request.
    "latency.pooled.release_before_streaming",
    # /healthz and /readyz for orchestrators, before anything that could turn their probe away (latency.health).
    "latency.health.HealthMiddleware",
    # First to read the request: forwarding headers from anyone but a trusted proxy are dropped
    # before SecurityMiddleware (HTTPS redirect) or axes (client address) read them.
    "probes.proxy.TrustedProxyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "latency.security.SiteCSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything resolves a URL: a status page's own domain is answered with that page's URLs alone.
    "latency.status_hosts.StatusHostMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions, before common: the language comes from the set_language
    # cookie, then the browser's Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "latency.urls"
ASGI_APPLICATION = "latency.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "latency.context.dashboard",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL")
DATABASES = {"default": database_from_url(DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The web process's pool of database connections (set up by latency.startup when the ASGI server starts;
# management commands, workers and tests keep Django's own connections): kept open between requests, at least
# LATENCY_DB_POOL_MIN and at most LATENCY_DB_POOL_MAX at once (a request beyond that waits up to 10 s for one).
# LATENCY_DB_POOL=false for a pooler in front of PostgreSQL (PgBouncer) that should see a connection per request.
LATENCY_DB_POOL = env_bool("LATENCY_DB_POOL")
LATENCY_DB_POOL_MIN = env_int("LATENCY_DB_POOL_MIN")
LATENCY_DB_POOL_MAX = env_int("LATENCY_DB_POOL_MAX")
if LATENCY_DB_POOL_MAX < LATENCY_DB_POOL_MIN:
    raise ImproperlyConfigured(
        f"LATENCY_DB_POOL_MAX ({LATENCY_DB_POOL_MAX}) must be at least LATENCY_DB_POOL_MIN ({LATENCY_DB_POOL_MIN})"
    )

# Helper threads of the web process that read a window's parts (its days, its edge hours) side by side, each on
# a pooled connection of its own (probes.readings.side_by_side); only with LATENCY_DB_POOL. 0 reads them one
# after another on the request's connection.
LATENCY_READ_THREADS = env_int("LATENCY_READ_THREADS")

# Memory the web process writes once at its start and keeps for its reads' large arrays (latency.memory), so
# that a first read does not pay a page fault per 4 KB of them. 0 leaves glibc's defaults as they are.
LATENCY_WEB_MEMORY_RESERVE_MB = env_int("LATENCY_WEB_MEMORY_RESERVE_MB")

# How many pages a read's bitmap heap scans ask the disk for ahead of need (PostgreSQL's effective_io_concurrency,
# set for each read's transaction by probes.readings.plan.reporting_reads). A window's first read after its pages
# left the page cache waits on the disk page by page at PostgreSQL's default of 1 (docs/benchmarks.md, "Read-ahead").
# 0 leaves the server's setting as it is (as do servers without posix_fadvise, which refuse any other value).
LATENCY_READ_IO_CONCURRENCY = env_int("LATENCY_READ_IO_CONCURRENCY")

REDIS_URL = env_str("REDIS_URL")
if not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured(f"REDIS_URL must be a redis://, rediss:// or unix:// URL (got {REDIS_URL!r})")

CHANNEL_LAYERS = {"default": channel_layer(REDIS_URL, env_str("LATENCY_CHANNEL_PREFIX"))}

# Status pages' readings (probes.statuspages.cache), shared by the web processes so that a page is read at most once
# per LATENCY_STATUS_CACHE_S whichever process serves it; Django's own cache stays in each process's memory.
LATENCY_STATUS_CACHE_S = env_int("LATENCY_STATUS_CACHE_S")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "status": {
        # One connection pool per process, not one per request (probes.compat.django).
        "BACKEND": "probes.compat.django.SharedPoolRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"{env_str('LATENCY_CHANNEL_PREFIX')}:status",
    },
}

# Celery. Region workers need only this broker URL (plus their region and the
# providers' keys): they never open the database.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or REDIS_URL
# A broker over TLS (rediss:// or amqps://): its certificate is always verified, against the CA bundle
# LATENCY_BROKER_CA when set (region workers read the same variable; docs/guides/add-a-region.md).
LATENCY_BROKER_CA = env_str("LATENCY_BROKER_CA")
CELERY_BROKER_USE_SSL = broker_tls(CELERY_BROKER_URL, LATENCY_BROKER_CA)
# The Celery app probes sends tasks through and runs its workers and scheduler on (probes.celery_app).
LATENCY_CELERY_APP = "latency.celery:app"
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# A run is acknowledged only once its measurement is handed to the ingest
# queue, so a worker killed mid-probe has the run delivered again; the unique
# slot key in Postgres makes the second delivery harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Off, as on region workers (probes.worker.app): the ingest worker runs Celery's thread pool, which cannot
# terminate a task, and cancelling the tasks in flight when the broker dropped (a heartbeat or a maintenance task
# waiting on the database, say) raised NotImplementedError("does not implement kill_job") and stopped the
# worker for good. A task in flight finishes; its unacknowledged message comes back after the reconnect, and
# every central task is safe to run twice (ingest inserts or ignores on the slot key, dead letters once per
# message and payload, maintenance is idempotent). tests/pipeline/test_the_ingest_worker_survives_a_broker_restart.py
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Off too: after a connection loss with tasks in flight, Celery lowers the prefetch count and raises it again from
# the thread that acknowledges the next task, a pool thread here. On RabbitMQ that is a basic.qos call, which waits
# for its answer on the connection the consumer's loop reads: the two threads read one socket, and the worker could
# stop taking messages for good (tests/regions_e2e/test_the_ingest_worker_survives_a_rabbitmq_drop.py).
CELERY_WORKER_ENABLE_PREFETCH_COUNT_REDUCTION = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None  # reconnect forever
# With Redis, an unacknowledged message returns to its queue after this many
# seconds: it bounds how late a killed worker's run is delivered again.
LATENCY_VISIBILITY_TIMEOUT = env_int("LATENCY_VISIBILITY_TIMEOUT")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": LATENCY_VISIBILITY_TIMEOUT,
    # Sweep for abandoned messages every few seconds (one cheap ZRANGE), not
    # kombu's default of every 100 s, so recovery follows the timeout closely.
    "unacked_restore_interval": max(1, min(5, LATENCY_VISIBILITY_TIMEOUT // 2)),
    "unacked_restore_throttle": 1,
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TASK_ROUTES = {
    "probes.ingest": {"queue": "ingest"},
    "probes.rollup_recent": {"queue": "maintenance"},
    "probes.prune": {"queue": "maintenance"},
    "probes.ensure_partitions": {"queue": "maintenance"},
    "probes.close_slots": {"queue": "maintenance"},
    "probes.heartbeat": {"queue": "health"},
    "probes.evaluate_alerts": {"queue": "maintenance"},
    "probes.deliver_notification": {"queue": "maintenance"},
    "probes.slos.rebuild_objective": {"queue": "maintenance"},
    "probes.slos.count_calls": {"queue": "maintenance"},
}
CELERY_BEAT_SCHEDULE = {
    "rollup-recent": {"task": "probes.rollup_recent", "schedule": 300.0, "options": {"expires": 290}},
    "prune": {"task": "probes.prune", "schedule": 3600.0, "options": {"expires": 3500}},
    # Today's and the next days' partitions of raw measurements and observations (probes.partitions).
    "ensure-partitions": {"task": "probes.ensure_partitions", "schedule": 3600.0, "options": {"expires": 3500}},
    # Scheduled runs nobody picked up become MissedRun rows (probes.fleet.missed).
    "close-slots": {"task": "probes.close_slots", "schedule": 60.0, "options": {"expires": 55}},
    # One pass over every enabled alert rule (probes.alerts.evaluate).
    "evaluate-alerts": {"task": "probes.evaluate_alerts", "schedule": 60.0, "options": {"expires": 55}},
    # The objectives' counts catch up with the measurements stored (probes.slos.counting; ingest counts too).
    "slo-count": {"task": "probes.slos.count_calls", "schedule": 15.0, "options": {"expires": 14}},
}

# Measurements: raw rows are kept this many days; hourly rollups forever
# unless LATENCY_ROLLUP_RETENTION_DAYS says otherwise (0 = forever).
LATENCY_RETENTION_DAYS = env_int("LATENCY_RETENTION_DAYS")
LATENCY_ROLLUP_RETENTION_DAYS = env_int("LATENCY_ROLLUP_RETENTION_DAYS")
LATENCY_PRUNE_BATCH = env_int("LATENCY_PRUNE_BATCH")
# Days of partitions (probes.partitions) the scheduler keeps made ahead of today, hourly: a day or more of a
# scheduler outage then still finds tomorrow's partition in place.
LATENCY_PARTITIONS_AHEAD_DAYS = env_int("LATENCY_PARTITIONS_AHEAD_DAYS")
# CSV exports each hold a PostgreSQL connection for their whole stream (regions.csv up to LATENCY_EXPORT_READERS):
# beyond this many at once per web process, the next one is answered 429.
LATENCY_MAX_CONCURRENT_EXPORTS = env_int("LATENCY_MAX_CONCURRENT_EXPORTS")
# Connections one regions.csv export reads its rollups on at once, in consecutive parts streamed in order
# (probes.exports.pgcopy.copy_csv_parts): PostgreSQL formats a COPY's rows on one core, so 2 halves the time of
# a long export on two. Exports then hold up to this many connections each; 1 reads in one statement.
LATENCY_EXPORT_READERS = env_int("LATENCY_EXPORT_READERS")
LATENCY_MAX_PROBE_TIMEOUT = 120  # seconds; stays below the visibility timeout (region workers: MAX_PROBE_TIMEOUT_S)
# What a target may make this host's engine use (`manage.py probe`; a region worker reads the same variables itself,
# probes.worker.config): the variables its key and ${VAR} headers may name (LATENCY_PROVIDER_ENV: NAME, PREFIX*,
# *SUFFIX; unset, names ending in _API_KEY or _TOKEN) and the directory its CA bundles come from (LATENCY_CA_DIR;
# unset, none). The site's own variables are never sent, whatever the list says (probes.engine.envpolicy).
try:
    LATENCY_WORKER_ENV = WorkerEnv.from_env(os.environ)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None
# Region workers' heartbeats (probes/fleet/heartbeats.py): the history kept per worker, and how long a
# worker no heartbeat has mentioned stays listed.
LATENCY_HEARTBEAT_HISTORY_HOURS = env_int("LATENCY_HEARTBEAT_HISTORY_HOURS")
LATENCY_WORKER_FORGET_DAYS = 30

# Region health (probes.readings.fleet): a region is live while a running worker's heartbeat is
# younger than STALE_AFTER seconds, stale up to DARK_AFTER, dark after that (or with no worker).
LATENCY_REGION_STALE_AFTER = env_int("LATENCY_REGION_STALE_AFTER")
LATENCY_REGION_DARK_AFTER = env_int("LATENCY_REGION_DARK_AFTER")
if LATENCY_REGION_DARK_AFTER <= LATENCY_REGION_STALE_AFTER:
    raise ImproperlyConfigured(
        f"LATENCY_REGION_DARK_AFTER={LATENCY_REGION_DARK_AFTER} must be longer than "
        f"LATENCY_REGION_STALE_AFTER={LATENCY_REGION_STALE_AFTER} (seconds)"
    )
# The map rings a region's marker in red only from this share of failed calls in the window on (the legend
# states it): a single failure among hundreds of calls is noise, not a region in trouble.
LATENCY_MAP_ERROR_RING_RATIO = env_float("LATENCY_MAP_ERROR_RING_RATIO")
# Missed runs (probes.fleet.missed): each pass looks back this far behind the grace line, so
# a central outage shorter than this still has its slots recorded once it is back.
LATENCY_MISSED_LOOKBACK = env_int("LATENCY_MISSED_LOOKBACK")

# Alerts (probes.alerts). An incident is global when at least this share of the regions measured breach,
# regional below it: three quarters breaching points at the provider; fewer, at the paths to it (2 of 3 is
# still regional).
LATENCY_ALERT_GLOBAL_SHARE = env_float("LATENCY_ALERT_GLOBAL_SHARE")
# A notification channel is flagged in the admin after this many failed attempts in a row.
LATENCY_CHANNEL_FAILING_AFTER = env_int("LATENCY_CHANNEL_FAILING_AFTER")
# The longest wait, in seconds, between two attempts of a notification (probes.alerts.notify): the waits
# double from 30 s up to it, with jitter.
LATENCY_NOTIFY_RETRY_BACKOFF_MAX = env_int("LATENCY_NOTIFY_RETRY_BACKOFF_MAX")
# Notification channels reach only public addresses (probes.alerts.addresses): a URL that leads to a loopback,
# link-local, private or otherwise internal address is refused when saved and when sent. True lifts the policy,
# for a webhook or mail relay on the site's own host or network.
LATENCY_NOTIFY_ALLOW_PRIVATE = env_bool("LATENCY_NOTIFY_ALLOW_PRIVATE")
# DNS servers (IP[:port], comma separated) that resolve the hosts of notification channels instead of the
# system's resolver; empty: the system's.
LATENCY_NOTIFY_DNS_SERVERS = env_addresses("LATENCY_NOTIFY_DNS_SERVERS", 53)
# The site's address as its users reach it (https://atlas.example.com), for the incident link in
# notifications; empty: the link is the path alone.
LATENCY_SITE_URL = env_str("LATENCY_SITE_URL").rstrip("/")

# Real users (probes.realusers, issue 14).
# A place is shown (map, pages, CSV) only once it has this many observations in the window read, so that no
# single user can be picked out.
LATENCY_REAL_USERS_MIN_SAMPLES = env_int("LATENCY_REAL_USERS_MIN_SAMPLES")
# OTLP/HTTP and beacon bodies: larger ones are answered 413. The decompressed size is capped too (a small
# gzip body can inflate a thousandfold).
LATENCY_OTLP_MAX_BODY_BYTES = env_int("LATENCY_OTLP_MAX_BODY_BYTES")
LATENCY_OTLP_MAX_DECODED_BYTES = env_int("LATENCY_OTLP_MAX_DECODED_BYTES")
# A browser beacon is a few hundred bytes of timings; a larger body is no beacon of ours (413).
LATENCY_BEACON_MAX_BODY_BYTES = env_int("LATENCY_BEACON_MAX_BODY_BYTES")
# The ingest's budgets per minute (probes.realusers.ratelimit), each its own, so that a beacon flood leaves OTLP
# its budget and the reverse; over one: 429 with Retry-After. OTLP counts spans plus metric points per source, and
# refuses (413) a request of more than the per-request cap before building it in memory.
LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE = env_int("LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE")
LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST = env_int("LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST")
if LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST > LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE:
    raise ImproperlyConfigured(
        f"LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST={LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST} must not be "
        f"more than LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE={LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE}: such a "
        "request could never be admitted"
    )
# OTLP bodies one web process reads and decodes at once; more wait up to LATENCY_OTLP_DECODE_WAIT_SECONDS for a
# turn, then get 503 with Retry-After. With the body caps and the per-request cap, this bounds the receiver's memory.
LATENCY_OTLP_DECODE_SLOTS = env_int("LATENCY_OTLP_DECODE_SLOTS")
LATENCY_OTLP_DECODE_WAIT_SECONDS = env_int("LATENCY_OTLP_DECODE_WAIT_SECONDS")
# Beacons per source, per client address (of one source; an IPv6 address by its /64) and per target named.
LATENCY_BEACONS_PER_MINUTE = env_int("LATENCY_BEACONS_PER_MINUTE")
LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE = env_int("LATENCY_BEACONS_PER_ADDRESS_PER_MINUTE")
LATENCY_BEACONS_PER_TARGET_PER_MINUTE = env_int("LATENCY_BEACONS_PER_TARGET_PER_MINUTE")
# Variables no longer read (LATENCY_INGEST_RATE_PER_MINUTE: one shared budget let a beacon flood lock the source's
# OTLP exporter out): a value set for one would be ignored without a word, so start-up says what replaced it.
for _name, _replaced in RETIRED.items():
    if _name in os.environ:
        raise ImproperlyConfigured(_replaced)
# An offline city database (MaxMind DB format: DB-IP IP to City Lite or GeoLite2 City) to place users by their
# address (docs/guides/real-users-geoip.md); empty: users are not placed by their address (the real-users panel says
# so). Never a network lookup.
LATENCY_GEOIP_DATABASE = env_str("LATENCY_GEOIP_DATABASE")

# The REST API (latency.api_v1): a user's token (`Authorization: Bearer <token>`, probes.apitokens) or the
# session (with CSRF, for the docs page); the admin's model permissions, view included for reads. Tokens first:
# an anonymous request is answered 401 with `WWW-Authenticate: Bearer`.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "latency.api_v1.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["latency.api_v1.permissions.ModelPermissions"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["latency.api_v1.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "latency.api_v1.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "latency.api_v1.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Latency Atlas API",
    "DESCRIPTION": "Regions, targets and probes; measurements, the dashboard's aggregates, incidents and workers.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": "/api/v1/",
    "COMPONENT_SPLIT_REQUEST": True,
    # Served from our static files (drf-spectacular-sidecar): the CSP allows scripts from 'self' only.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # validatorUrl off: Swagger UI would otherwise send the schema to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "persistAuthorization": False, "validatorUrl": None},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "latency.api_v1.schema.add_error_responses",
    ],
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: a locked-out username or address is refused here, before
    # ModelBackend runs the password hasher (slow by design: a flood of attempts would cost its CPU time).
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# Proxies whose X-Forwarded-Proto / X-Forwarded-For are believed (probes.proxy);
# from any other peer those headers are removed.
LATENCY_TRUSTED_PROXIES = env_list("LATENCY_TRUSTED_PROXIES")
LATENCY_TRUSTED_PROXY_NETWORKS = parse_proxies(LATENCY_TRUSTED_PROXIES)
if LATENCY_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Login throttling (django-axes) on every login form (/accounts/login/ and
# /admin/login/). Failures are counted per client address and, separately,
# per username: either reaching the limit locks that address or that
# username out until the cool-off has passed since the last failure.
AXES_FAILURE_LIMIT = env_int("LATENCY_LOGIN_FAILURE_LIMIT")
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LATENCY_LOGIN_COOLOFF_MINUTES"))
AXES_LOCKOUT_PARAMETERS = ["ip_address", ["username"]]
AXES_CLIENT_IP_CALLABLE = "probes.proxy.client_ip"
# Failures expire with the cool-off only: a successful sign-in deletes the
# failures matching its address or its username, so resetting on success
# would let anyone with an account wipe the count of their guesses at others.
AXES_RESET_ON_SUCCESS = False
# Attempts made while locked out are refused without being stored, so
# hammering a locked account costs no database writes and the cool-off runs
# from the last real failure.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"

# Dashboard access. Public mode lets anyone read the dashboard (pages, JSON and
# the live websocket) without signing in; nothing on it writes, and the admin
# keeps its own login either way.
LATENCY_PUBLIC_DASHBOARD = env_bool("LATENCY_PUBLIC_DASHBOARD")
# /metrics for Prometheus (latency.metrics_views): besides a signed-in session, `Authorization: Bearer <token>`
# with this token; unset (or empty), there is no token path. Only its SHA-256 is kept in the settings, so a
# settings dump (a debug page) cannot show it; the comparison is in constant time (latency.access).
_metrics_token = env_str("LATENCY_METRICS_TOKEN").strip()
if _metrics_token and len(_metrics_token) < 16:
    raise ImproperlyConfigured(
        "LATENCY_METRICS_TOKEN is too short to be a secret: use at least 16 random characters "
        "(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
    )
LATENCY_METRICS_TOKEN_SHA256 = hashlib.sha256(_metrics_token.encode()).hexdigest() if _metrics_token else ""
del _metrics_token
# True when every "region" runs on one machine with emulated network delay:
# every page then says so, so demo numbers are never mistaken for real ones.
LATENCY_EMULATED_GEOGRAPHY = env_bool("LATENCY_EMULATED_GEOGRAPHY")

LANGUAGE_CODE = "en"
# English and Simplified Chinese: many of the people most hurt by the geography
# tax read Chinese first. Names in their own language, as a switch shows them.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Dates and numbers as each language writes them (latency/formats/<locale>/).
# No USE_THOUSAND_SEPARATOR: it would also group ids in URLs and form values.
FORMAT_MODULE_PATH = ["latency.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / env_str("STATIC_ROOT")  # an absolute path stays as it is
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if LATENCY_PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Production hardening: `manage.py check --deploy` is clean with LATENCY_PRODUCTION=true.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if LATENCY_PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD")

# Content-Security-Policy on every response (django-csp; latency.security
# adds this host's ws:/wss: origin to connect-src). Scripts come only from
# our own static files: no inline script, no eval. Styles allow
# 'unsafe-inline' because plotly.js writes <style> elements and style=""
# attributes while drawing (tests/browser/test_browser_content_security_policy.py
# sees the violations without it); injected CSS cannot run code, and every
# value we render is escaped.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
        "nowhere": {"class": "logging.NullHandler"},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL").upper()},
    # httpx logs every request URL at INFO; a URL can carry a key, and the
    # probe engine reports what matters itself.
    # django-axes announces itself at INFO in every process (workers and
    # `manage.py probe` included); its lockouts are logged at WARNING.
    # Apprise logs notification URLs, secrets included: "Could not load Slack URL: slack://<tokens>" at
    # ERROR, webhook paths and query values at DEBUG. Its records go nowhere but to the capture of each
    # notify() call (probes.alerts.notify reads its warnings and exceptions, scrubs the channel's URL
    # out, and logs the reason itself; DEBUG so that the exceptions are there to read).
    # urllib3 logs each request's path and query at DEBUG, where a webhook token sits.
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},
        "apprise": {"handlers": ["nowhere"], "level": "DEBUG", "propagate": False},
        "urllib3": {"level": "WARNING"},
    },
}
