"""Regions, targets and probes (configuration) and what the probes measured.

The engine's dataclasses in probes.engine.result are the contract: Measurement
stores every engine field under the same name, so the ingest can move a
result dict into a row without a translation table.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from urllib.parse import parse_qsl, urlsplit

from django.conf import settings
from django.contrib.postgres.indexes import BrinIndex
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q
from django.utils.text import format_lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from probes.engine.config import ENV_REF, HEADER_NAME, RESERVED_HEADERS, char_problem, host_problem
from probes.engine.envpolicy import CA_DIR, ENV_NAME, SITE_VARIABLES, ca_bundle_problem, site_rule
from probes.engine.providers import PROVIDER_LIST
from probes.engine.result import (
    COLD,
    HTTP_1_1,
    HTTP_2,
    HTTP_2_ONLY,
    MEASUREMENT_FIELDS,
    OK,
    OUTCOMES,
    STYLES,
    WARM,
    ProbeSpec,
)
from probes.engine.styles.gemini import model_in_url
from probes.presets import placeholder_error, preset_errors
from probes.rollup_models import (  # noqa: F401 (re-exported: the app's models live in probes.models)
    HourCut,
    HourlyRollup,
    HourVersion,
    RegionRollup,
    RollupCounts,
    RollupHour,
    SeriesBlockMark,
    SeriesRollup,
)
from probes.slot_time import SLOT_EARLY, SLOT_LATE

# The ingest maps an engine result dict onto these columns one to one.
# started_at is excluded because the engine sends an ISO string and the row
# holds a real timestamp: the ingest parses it rather than copying it.
ENGINE_FIELDS = tuple(name for name in MEASUREMENT_FIELDS if name != "started_at")

STYLE_LABELS = {
    "openai": _("OpenAI-compatible chat completions"),
    "responses": _("OpenAI Responses API"),
    "anthropic": _("Anthropic Messages"),
    "gemini": "Google Gemini",  # a product's name, the same in every language
    "http": _("Plain HTTP (phases only, no tokens)"),
}
STYLE_CHOICES = [(style, STYLE_LABELS.get(style, style)) for style in STYLES]
WORKLOAD_CHOICES = [
    ("short", _("short: the prompt alone")),
    ("prompt_1k", _("about 1k input tokens")),
    ("prompt_10k", _("about 10k input tokens")),
    ("prompt_100k", _("about 100k input tokens")),
    ("cached_pair", _("cached pair: a 10k-token prompt sent twice, the second call measured")),
]
SHORT_WORKLOAD = "short"
OUTCOME_LABELS = {
    "ok": _("ok"),
    "dns_error": _("DNS error"),
    "connect_error": _("connect error"),
    "tls_error": _("TLS error"),
    "timeout": _("timeout"),
    "http_error": _("HTTP error"),
    "rate_limited": _("rate limited"),
    "overloaded": _("overloaded"),
    "upstream_error": _("upstream error"),
    "truncated": _("truncated"),
    "protocol_error": _("protocol error"),
    "config_error": _("config error"),
}
OUTCOME_CHOICES = [(outcome, OUTCOME_LABELS.get(outcome, outcome.replace("_", " "))) for outcome in OUTCOMES]
HTTP_VERSION_CHOICES = [
    (HTTP_1_1, _("HTTP/1.1 (what the official Python SDKs use)")),
    (HTTP_2, _("HTTP/2, falling back to HTTP/1.1 when the server refuses it (the reason is stored)")),
    (HTTP_2_ONLY, _("HTTP/2 only: a server that refuses it is a failed call")),
]
# Provider names are proper nouns, not translated.
PROVIDER_CHOICES = [("", _("custom (none)"))] + [(p.key, p.label) for p in PROVIDER_LIST]
CONNECTION_CHOICES = [
    (COLD, _("cold (new connection: DNS, TCP and TLS are measured)")),
    (WARM, _("warm (reused connection)")),
]

# Header names whose value is a credential. Storing one literally would put a
# secret in the database, admin history and backups.
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
# What may surround ${VAR} in a secret header: an auth scheme such as "Bearer ".
AUTH_SCHEME_ONLY = re.compile(r"^(?:[A-Za-z][A-Za-z0-9-]* +)?\Z")
# Query parameters that carry API keys (Gemini accepts ?key=).
KEY_QUERY_PARAMS = frozenset({"key", "api_key", "apikey", "access_token"})

MIN_INTERVAL_S = 10
MAX_INTERVAL_S = 86_400
MAX_TOKENS_LIMIT = 32_768


def validate_http_url(value: str) -> None:
    # The engine (ProbeSpec) checks the same lower-case prefixes; failing here
    # means the operator sees the error on save, not as a failed probe later.
    unfilled = placeholder_error(value)
    if unfilled:
        # Before the host check: "{resource}.openai.azure.com" is a template left as is, not a bad host name.
        raise unfilled
    if not value.startswith(("http://", "https://")):
        raise ValidationError(gettext("URL must start with http:// or https://"), code="url_scheme")
    if any(ch.isspace() for ch in value):
        raise ValidationError(gettext("URL must not contain spaces or line breaks."), code="url_space")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises ValueError on a non-numeric or out-of-range port)
    except ValueError as exc:
        raise ValidationError(
            gettext("URL is malformed: %(reason)s"), code="url_malformed", params={"reason": exc}
        ) from None
    if not parts.hostname:
        raise ValidationError(
            gettext("URL must include a host name, e.g. https://api.openai.com/v1/chat/completions"), code="url_host"
        )
    # The engine's own check (IDNA 2008, as httpx encodes names): a host DNS
    # cannot be asked for would otherwise fail every run on every worker.
    problem = host_problem(parts.hostname)
    if problem:
        raise ValidationError(gettext("URL %(problem)s."), code="url_host_invalid", params={"problem": problem})
    if parts.username or parts.password:
        raise ValidationError(
            gettext("Do not put credentials in the URL; name the environment variable holding the key in api_key_env."),
            code="url_credentials",
        )
    for name, _value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() in KEY_QUERY_PARAMS:
            raise ValidationError(
                gettext(
                    "Do not put the key in the URL (?%(param)s=); "
                    "name the environment variable holding it in api_key_env."
                ),
                code="url_key",
                params={"param": name},
            )


def validate_env_name(value: str) -> None:
    if not ENV_NAME.match(value):
        raise ValidationError(
            gettext(
                "Enter the name of an environment variable (letters, digits and underscores, not starting with a "
                "digit), e.g. OPENAI_API_KEY, not the key itself."
            ),
            code="env_name",
        )
    site_variable_error(value)


def site_variable_error(name: str, header: str = "") -> None:
    """A target (or a channel's url_env) naming one of the site's own variables: whoever edits it chooses
    where the worker sends what it names (probes.engine.envpolicy)."""
    if site_rule(name) is None:
        return
    params = {"name": name, "site": SITE_VARIABLES, "header": header}
    if header:
        message = gettext(
            'Header "%(header)s" names %(name)s, one of the site\'s own variables (%(site)s): a target sends the '
            "variables it names to its URL, so it can never name one. Give the secret a variable of its own, e.g. "
            "${GATEWAY_TOKEN}."
        )
    else:
        message = gettext(
            "%(name)s is one of the site's own variables (%(site)s): a target sends the variables it names to its "
            "URL, so it can never name one. Give the secret a variable of its own, e.g. OPENAI_API_KEY."
        )
    raise ValidationError(message, code="site_variable", params=params)


def validate_headers(value) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise ValidationError(
            gettext('Headers must be a JSON object of names to values, e.g. {"anthropic-version": "2023-06-01"}.'),
            code="headers_type",
        )
    for name, val in value.items():
        if not isinstance(name, str) or not HEADER_NAME.match(name):
            raise ValidationError(
                gettext("%(name)r is not a valid HTTP header name."), code="header_name", params={"name": name}
            )
        if not isinstance(val, str):
            raise ValidationError(
                gettext(
                    'Header "%(name)s" must have a string value (got %(type)s); nested objects, lists and numbers '
                    "are not allowed."
                ),
                code="header_value_type",
                params={"name": name, "type": type(val).__name__},
            )
        if name.lower() in RESERVED_HEADERS:
            raise ValidationError(
                gettext(
                    'Header "%(name)s" is set by the HTTP client itself (from the URL and the request body); remove it.'
                ),
                code="header_reserved",
                params={"name": name},
            )
        if any(ch in val for ch in "\r\n\x00"):
            raise ValidationError(
                gettext('Header "%(name)s" must not contain line breaks.'),
                code="header_value_newline",
                params={"name": name},
            )
        bare = ENV_REF.sub("", val)
        problem = char_problem(bare)
        if problem:
            raise ValidationError(
                gettext(
                    'Header "%(name)s" %(problem)s: HTTP header values can carry only printable ASCII, spaces and tabs '
                    "(retype quotes and dashes pasted from a document)."
                ),
                code="header_value_chars",
                params={"name": name, "problem": problem},
            )
        if "${" in bare:
            raise ValidationError(
                gettext(
                    'Header "%(name)s": ${...} must name an environment variable (letters, digits and underscores, '
                    "not starting with a digit)."
                ),
                code="header_env_ref",
                params={"name": name},
            )
        for variable in ENV_REF.findall(val):
            site_variable_error(variable, header=name)
        if name.lower() in SECRET_HEADERS and (not ENV_REF.search(val) or not AUTH_SCHEME_ONLY.match(bare)):
            raise ValidationError(
                gettext(
                    'Header "%(name)s" holds a literal secret, which would be stored in the database. Put the name '
                    "of the environment variable holding the key in api_key_env, or write the value as a ${VAR} "
                    'reference (e.g. "Bearer ${MY_TOKEN}") that the worker reads from its environment.'
                ),
                code="header_literal_secret",
                params={"name": name},
            )


def validate_absolute_path(value: str) -> None:
    """What ca_bundle was until workers took bundles only from their LATENCY_CA_DIR; kept for migration 0001."""
    if not PurePosixPath(value).is_absolute():
        raise ValidationError(
            gettext("Enter an absolute path to a PEM file on the workers, e.g. /etc/latency/ca.pem."), code="ca_path"
        )


def validate_ca_bundle(value: str) -> None:
    # A file name inside each worker's CA directory: a path anywhere else would let whoever edits a target
    # make the workers read, or tell apart, files of their choice. The worker checks again after links.
    if ca_bundle_problem(value):
        raise ValidationError(
            gettext(
                "Enter the name of a PEM file inside the workers' %(dir)s, e.g. corporate-ca.pem or "
                "proxies/corporate-ca.pem: not an absolute path, nor one that goes up with .."
            ),
            code="ca_name",
            params={"dir": CA_DIR},
        )


def validate_positive(value: float) -> None:
    if value is not None and not value > 0:
        raise ValidationError(gettext("Must be greater than zero."), code="not_positive")


latitude_validators = [
    MinValueValidator(-90, message=_("Latitude must be between -90 and 90.")),
    MaxValueValidator(90, message=_("Latitude must be between -90 and 90.")),
]
longitude_validators = [
    MinValueValidator(-180, message=_("Longitude must be between -180 and 180.")),
    MaxValueValidator(180, message=_("Longitude must be between -180 and 180.")),
]


def _coordinate_checks(prefix: str) -> list[models.CheckConstraint]:
    # Mirrors the field validators for rows written outside forms (shell,
    # fixtures, bulk loads); NULL passes a CHECK, so optional columns work too.
    return [
        models.CheckConstraint(
            condition=Q(latitude__gte=-90, latitude__lte=90),
            name=f"{prefix}_latitude_range",
            violation_error_message=_("Latitude must be between -90 and 90."),
        ),
        models.CheckConstraint(
            condition=Q(longitude__gte=-180, longitude__lte=180),
            name=f"{prefix}_longitude_range",
            violation_error_message=_("Longitude must be between -180 and 180."),
        ),
    ]


class Region(models.Model):
    """Where probes run from: one Celery queue of workers per region."""

    slug = models.SlugField(
        unique=True, help_text=_('Stable identifier and worker queue name, e.g. "af-lagos".'), verbose_name=_("slug")
    )
    name = models.CharField(max_length=100, verbose_name=_("name"))
    city = models.CharField(max_length=100, verbose_name=_("city"))
    country = models.CharField(
        max_length=2,
        validators=[
            RegexValidator(
                r"^[A-Z]{2}\Z",
                message=_("Country must be an ISO 3166-1 alpha-2 code: two upper-case letters, e.g. NG."),
                code="country",
            )
        ],
        help_text=_("ISO 3166-1 alpha-2 code, e.g. NG, GB, US."),
        verbose_name=_("country"),
    )
    latitude = models.FloatField(validators=latitude_validators, verbose_name=_("latitude"))
    longitude = models.FloatField(validators=longitude_validators, verbose_name=_("longitude"))
    active = models.BooleanField(
        default=True, help_text=_("Inactive regions are not scheduled."), verbose_name=_("active")
    )
    # Runs are counted as missed only from here on: a region just (re)activated has missed nothing before.
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        ordering = ["name"]
        constraints = [
            *_coordinate_checks("region"),
            models.CheckConstraint(
                condition=Q(country__regex=r"^[A-Z]{2}$"),
                name="region_country_alpha2",
                violation_error_message=_("Country must be an ISO 3166-1 alpha-2 code: two upper-case letters."),
            ),
        ]
        verbose_name = _("region")
        verbose_name_plural = _("regions")

    def __str__(self) -> str:
        return self.name


class Target(models.Model):
    """An API endpoint to measure. Holds no secret: only the name of the
    environment variable that holds the key on the workers."""

    name = models.CharField(max_length=100, unique=True, verbose_name=_("name"))
    api_style = models.CharField(max_length=16, choices=STYLE_CHOICES, default="openai", verbose_name=_("api style"))
    url = models.CharField(
        "URL",
        max_length=2000,
        validators=[validate_http_url],
        help_text=_(
            "Full endpoint URL, e.g. https://api.openai.com/v1/chat/completions. "
            "For Gemini, an API base (https://generativelanguage.googleapis.com/v1beta) or a full "
            ":streamGenerateContent URL."
        ),
    )
    model = models.CharField(
        max_length=200,
        blank=True,
        help_text=_(
            "Model name sent with the request. Required for OpenAI and Anthropic styles, and for Gemini "
            "unless the URL names the model."
        ),
        verbose_name=_("model"),
    )
    api_key_env = models.CharField(
        _("API key environment variable"),
        max_length=100,
        blank=True,
        validators=[validate_env_name],
        help_text=_(
            "Name of the environment variable holding the API key on the workers, e.g. OPENAI_API_KEY. "
            "The key itself is never stored here; each worker reads it from its own environment at call time, "
            "if its LATENCY_PROVIDER_ENV allows the name (by default, names ending in _API_KEY or _TOKEN)."
        ),
    )
    headers = models.JSONField(
        default=dict,
        blank=True,
        validators=[validate_headers],
        help_text=_(
            'Extra request headers as a flat JSON object of strings, e.g. {"anthropic-version": '
            '"2023-06-01"}. ${VAR} in a value is read from the worker\'s environment, if its LATENCY_PROVIDER_ENV '
            "allows the name; secret headers (Authorization, x-api-key, ...) must use ${VAR}."
        ),
        verbose_name=_("headers"),
    )
    location_name = models.CharField(
        max_length=200,
        blank=True,
        help_text=_('Where the endpoint is served from, e.g. "AWS us-east-1, Ashburn".'),
        verbose_name=_("location name"),
    )
    latitude = models.FloatField(null=True, blank=True, validators=latitude_validators, verbose_name=_("latitude"))
    longitude = models.FloatField(null=True, blank=True, validators=longitude_validators, verbose_name=_("longitude"))
    ca_bundle = models.CharField(
        _("CA bundle"),
        max_length=500,
        blank=True,
        validators=[validate_ca_bundle],
        help_text=_(
            "Name of a PEM file of extra trusted CAs (a private CA, a corporate proxy) inside the directory each "
            "worker names in LATENCY_CA_DIR, e.g. corporate-ca.pem. Leave empty to trust the system store only."
        ),
    )
    http_version = models.CharField(
        _("HTTP version"),
        max_length=8,
        choices=HTTP_VERSION_CHOICES,
        default=HTTP_1_1,
        help_text=_("HTTP/2 is negotiated in the TLS handshake (ALPN), so it needs an https:// URL."),
    )
    provider = models.CharField(
        _("provider preset"),
        max_length=32,
        blank=True,
        default="",
        choices=PROVIDER_CHOICES,
        help_text=_(
            "The provider this endpoint belongs to, when it is one of the presets: it decides where providers "
            "differ from their API style (the key's header, whether usage may be asked for). Empty: sent "
            "exactly as the style defines."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        ordering = ["name"]
        constraints = _coordinate_checks("target")
        verbose_name = _("target")
        verbose_name_plural = _("targets")

    def __str__(self) -> str:
        return self.name

    @property
    def url_names_model(self) -> bool:
        # Mirrors probes.engine.styles.gemini.stream_url: such a URL already
        # carries the model, so the model field may stay empty.
        path = urlsplit(self.url or "").path
        return ":streamGenerateContent" in path or ":generateContent" in path

    def clean(self) -> None:
        super().clean()
        if self.headers is None:
            # An emptied admin textarea arrives as None; the column is NOT NULL.
            self.headers = {}
        errors: dict[str, str] = {}
        named = model_in_url(self.url or "") if self.api_style == "gemini" else ""
        if named and not self.model:
            # The engine calls the model the URL names; written here too, the tables, pages and
            # exports that read this field show it instead of a blank.
            self.model = named
        elif named and self.model != named:
            errors["model"] = gettext(
                "The URL names the model %(model)s, and it is the one called: leave this field empty or write "
                "%(model)s."
            ) % {"model": named}
        if not self.model:
            if self.api_style in ("openai", "responses", "anthropic"):
                errors["model"] = gettext("A model is required for the %(style)s style.") % {
                    "style": STYLE_LABELS[self.api_style]
                }
            elif self.api_style == "gemini" and self.url and not self.url_names_model:
                errors["model"] = gettext(
                    "A model is required for Gemini unless the URL names it (.../models/NAME:streamGenerateContent)."
                )
        if self.http_version == HTTP_2_ONLY and not (self.url or "").startswith("https://"):
            # The engine reports it as config_error on every run: say it on save instead.
            errors["http_version"] = gettext("HTTP/2 only needs an https:// URL: HTTP/2 is negotiated over TLS.")
        if (self.latitude is None) != (self.longitude is None):
            # A single coordinate cannot be drawn on the map: ask for both.
            missing = "longitude" if self.longitude is None else "latitude"
            errors[missing] = gettext("Enter both latitude and longitude, or neither.")
        errors.update(
            preset_errors(
                provider_key=self.provider,
                style=self.api_style,
                url=self.url or "",
                api_key_env=self.api_key_env or "",
                # A URL or headers their own validators refused already have their error: the preset's rules
                # are not asked about them.
                headers=self.headers if _passes(validate_headers, self.headers) else {},
                url_checked=_passes(validate_http_url, self.url or ""),
            )
        )
        if errors:
            raise ValidationError(errors)


def _passes(validator, value) -> bool:
    try:
        validator(value)
    except ValidationError:
        return False
    return True


class Probe(models.Model):
    """A recurring call to a target from a set of regions."""

    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="probes", verbose_name=_("target"))
    name = models.CharField(max_length=100, verbose_name=_("name"))
    prompt = models.TextField(default="Say hello in five words.", verbose_name=_("prompt"))
    workload = models.CharField(
        max_length=16,
        choices=WORKLOAD_CHOICES,
        default=SHORT_WORKLOAD,
        verbose_name=_("workload"),
        help_text=_(
            "What each call sends: the prompt alone; the prompt after a text of about 1k, 10k or 100k input tokens, "
            "opened by a fresh nonce each run so no provider cache serves it; or a cached pair: two calls sharing a "
            "10k-token text, the first filling the provider's prompt cache, the second measured."
        ),
    )
    max_tokens = models.PositiveIntegerField(
        default=64,
        validators=[
            MinValueValidator(1, message=_("max_tokens must be at least 1.")),
            MaxValueValidator(
                MAX_TOKENS_LIMIT, message=format_lazy(_("max_tokens must be at most {limit}."), limit=MAX_TOKENS_LIMIT)
            ),
        ],
        verbose_name=_("max tokens"),
    )
    interval_seconds = models.PositiveIntegerField(
        default=60,
        validators=[
            MinValueValidator(
                MIN_INTERVAL_S,
                message=format_lazy(_("Interval must be at least {seconds} seconds."), seconds=MIN_INTERVAL_S),
            ),
            MaxValueValidator(
                MAX_INTERVAL_S,
                message=format_lazy(_("Interval must be at most {seconds} seconds (one day)."), seconds=MAX_INTERVAL_S),
            ),
        ],
        help_text=format_lazy(_("Seconds between runs, {low} to {high}."), low=MIN_INTERVAL_S, high=MAX_INTERVAL_S),
        verbose_name=_("interval seconds"),
    )
    timeout_seconds = models.FloatField(
        default=30.0,
        validators=[validate_positive],
        help_text=_("One deadline for the whole call, stalls included. Must be shorter than the interval."),
        verbose_name=_("timeout seconds"),
    )
    connection = models.CharField(max_length=8, choices=CONNECTION_CHOICES, default=COLD, verbose_name=_("connection"))
    regions = models.ManyToManyField(
        Region, related_name="probes", help_text=_("Regions to run from (at least one)."), verbose_name=_("regions")
    )
    enabled = models.BooleanField(default=True, verbose_name=_("enabled"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        ordering = ["target__name", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["target", "name"],
                name="probe_unique_name_per_target",
                violation_error_message=_("This target already has a probe with this name."),
            ),
            models.CheckConstraint(
                condition=Q(interval_seconds__gte=MIN_INTERVAL_S, interval_seconds__lte=MAX_INTERVAL_S),
                name="probe_interval_range",
                violation_error_message=format_lazy(
                    _("Interval must be between {low} and {high} seconds."), low=MIN_INTERVAL_S, high=MAX_INTERVAL_S
                ),
            ),
            models.CheckConstraint(
                condition=Q(timeout_seconds__gt=0, timeout_seconds__lt=F("interval_seconds")),
                name="probe_timeout_within_interval",
                violation_error_message=_("Timeout must be greater than zero and shorter than the interval."),
            ),
            models.CheckConstraint(
                condition=Q(max_tokens__gte=1, max_tokens__lte=MAX_TOKENS_LIMIT),
                name="probe_max_tokens_range",
                violation_error_message=format_lazy(
                    _("max_tokens must be between 1 and {limit}."), limit=MAX_TOKENS_LIMIT
                ),
            ),
        ]
        verbose_name = _("probe")
        verbose_name_plural = _("probes")

    def __str__(self) -> str:
        return f"{self.target} / {self.name}"

    def clean(self) -> None:
        super().clean()
        interval, timeout = self.interval_seconds, self.timeout_seconds
        if interval is not None and timeout is not None and timeout > 0 and timeout >= interval:
            # Otherwise the next slot is due while this call may still be
            # running, and one slow endpoint piles up work on the workers.
            raise ValidationError(
                {
                    "timeout_seconds": (
                        f"Timeout ({timeout:g} s) must be shorter than the interval ({interval} s): a run has to "
                        "finish before the next one is due."
                    )
                }
            )
        ceiling = getattr(settings, "LATENCY_MAX_PROBE_TIMEOUT", None)
        if ceiling and timeout is not None and timeout > ceiling:
            # Runs are acknowledged late; a call outliving the broker's
            # visibility timeout would be delivered again while still running.
            raise ValidationError(
                {"timeout_seconds": f"Timeout must be at most {ceiling:g} seconds (LATENCY_MAX_PROBE_TIMEOUT)."}
            )

    def spec(self) -> ProbeSpec:
        target = self.target
        return ProbeSpec(
            url=target.url,
            style=target.api_style,
            model=target.model,
            prompt=self.prompt,
            max_tokens=self.max_tokens,
            headers=dict(target.headers or {}),
            api_key_env=target.api_key_env,
            timeout_s=float(self.timeout_seconds),
            connection=self.connection,
            ca_bundle=target.ca_bundle,
            http_version=target.http_version,
            provider=target.provider,
            workload=self.workload,
        )


class Measurement(models.Model):
    """One probe call from one region for one schedule slot.

    The foreign keys carry no single-column index of their own: each is the
    leading column of a composite index or of the unique constraint below,
    which also serves PROTECT's lookups, and every extra index on the largest
    table is paid for on every insert.
    """

    probe = models.ForeignKey(
        Probe, on_delete=models.PROTECT, related_name="measurements", db_index=False, verbose_name=_("probe")
    )
    # Denormalised from probe.target so dashboard reads filter on one table;
    # also keeps history attached to the target a probe measured at the time.
    target = models.ForeignKey(
        Target, on_delete=models.PROTECT, related_name="measurements", db_index=False, verbose_name=_("target")
    )
    region = models.ForeignKey(
        Region, on_delete=models.PROTECT, related_name="measurements", db_index=False, verbose_name=_("region")
    )
    scheduled_for = models.DateTimeField(
        help_text=_("The schedule slot this run belongs to."), verbose_name=_("scheduled for")
    )
    started_at = models.DateTimeField(
        help_text=_("UTC wall clock when the call started."), verbose_name=_("started at")
    )
    worker = models.CharField(
        max_length=255, help_text=_("Host name of the worker that ran the call."), verbose_name=_("worker")
    )
    ingested_at = models.DateTimeField(auto_now_add=True, verbose_name=_("ingested at"))

    # Engine result fields, same names as probes.engine.result.Measurement.
    outcome = models.CharField(max_length=20, choices=OUTCOME_CHOICES, verbose_name=_("outcome"))
    error = models.TextField(null=True, blank=True, verbose_name=_("error"))
    error_type = models.CharField(max_length=120, null=True, blank=True, verbose_name=_("error type"))
    retry_after_s = models.FloatField(null=True, blank=True, verbose_name=_("retry after s"))
    http_status = models.SmallIntegerField(null=True, blank=True, verbose_name=_("http status"))
    http_version = models.CharField(max_length=16, null=True, blank=True, verbose_name=_("http version"))
    remote_addr = models.CharField(max_length=64, null=True, blank=True, verbose_name=_("remote addr"))
    connection = models.CharField(max_length=8, choices=CONNECTION_CHOICES, verbose_name=_("connection"))
    dns_ms = models.FloatField(null=True, blank=True, verbose_name=_("dns ms"))
    connect_ms = models.FloatField(null=True, blank=True, verbose_name=_("connect ms"))
    tls_ms = models.FloatField(null=True, blank=True, verbose_name=_("tls ms"))
    request_sent_ms = models.FloatField(null=True, blank=True, verbose_name=_("request sent ms"))
    warm_ttft_ms = models.FloatField(null=True, blank=True, verbose_name=_("cache-filling ttft ms"))
    workload = models.CharField(max_length=16, null=True, blank=True, verbose_name=_("workload"))
    ttfb_ms = models.FloatField(null=True, blank=True, verbose_name=_("ttfb ms"))
    first_event_ms = models.FloatField(null=True, blank=True, verbose_name=_("first event ms"))
    ttft_ms = models.FloatField(null=True, blank=True, verbose_name=_("ttft ms"))
    ttfat_ms = models.FloatField(null=True, blank=True, verbose_name=_("ttfat ms"))
    total_ms = models.FloatField(null=True, blank=True, verbose_name=_("total ms"))
    output_tokens = models.IntegerField(null=True, blank=True, verbose_name=_("output tokens"))
    tokens_estimated = models.BooleanField(null=True, blank=True, verbose_name=_("tokens estimated"))
    # As the provider reports them, NULL where it does not (probes.engine.result.Measurement).
    input_tokens = models.IntegerField(null=True, blank=True, verbose_name=_("input tokens"))
    cached_input_tokens = models.IntegerField(null=True, blank=True, verbose_name=_("cached input tokens"))
    cache_write_tokens = models.IntegerField(null=True, blank=True, verbose_name=_("cache write tokens"))
    reasoning_tokens = models.IntegerField(null=True, blank=True, verbose_name=_("reasoning tokens"))
    ratelimit_remaining_requests = models.IntegerField(
        null=True, blank=True, verbose_name=_("rate limit: requests remaining")
    )
    ratelimit_remaining_tokens = models.IntegerField(
        null=True, blank=True, verbose_name=_("rate limit: tokens remaining")
    )
    tokens_per_s = models.FloatField(null=True, blank=True, verbose_name=_("tokens per s"))
    itl_p50_ms = models.FloatField(null=True, blank=True, verbose_name=_("itl p50 ms"))
    itl_p95_ms = models.FloatField(null=True, blank=True, verbose_name=_("itl p95 ms"))
    itl_max_ms = models.FloatField(null=True, blank=True, verbose_name=_("itl max ms"))
    response_bytes = models.IntegerField(null=True, blank=True, verbose_name=_("response bytes"))

    class Meta:
        get_latest_by = "started_at"
        constraints = [
            # The idempotency key: a redelivered Celery task or a retried
            # ingest for the same slot must not count twice.
            models.UniqueConstraint(fields=["probe", "region", "scheduled_for"], name="measurement_one_per_slot"),
            # The slot rule (probes.slot_time), which lets a started_at window name the slot-day partitions
            # (probes.partitions) it needs. Ingest refuses a breaking row first, as a dead letter.
            models.CheckConstraint(
                condition=Q(
                    started_at__gte=F("scheduled_for") - SLOT_EARLY, started_at__lte=F("scheduled_for") + SLOT_LATE
                ),
                name="measurement_started_near_slot",
            ),
        ]
        indexes = [
            # Dashboard: one target's measurements per region over a time window.
            models.Index(fields=["target", "region", "started_at"], name="meas_target_region_started"),
            # "Where my users are" views and per-region exports.
            models.Index(fields=["region", "started_at"], name="meas_region_started"),
            # Time-range exports and retention pruning. Rows arrive roughly in
            # started_at order, so BRIN stays tiny where a B-tree would be huge.
            BrinIndex(fields=["started_at"], name="meas_started_brin"),
            # Per-target failures list: failures are rare, so a partial index
            # stays small and skips the bulk of successful rows.
            models.Index(fields=["target", "started_at"], condition=~Q(outcome=OK), name="meas_target_failures"),
        ]
        verbose_name = _("measurement")
        verbose_name_plural = _("measurements")

    def __str__(self) -> str:
        # Only this row's columns: the admin's delete confirmation lists many
        # objects, and following foreign keys here would query per row.
        when = self.started_at.strftime("%Y-%m-%d %H:%M:%S") if self.started_at else "?"
        return gettext("%(outcome)s at %(at)s UTC") % {"outcome": self.get_outcome_display(), "at": when}


# What the ingest could not store (probes.deadletter_models).
# Region credentials, workers and missed runs live in their own module (probes.fleet) and
# are registered with the app here.
# Alert rules, incidents, notification channels and silences (probes.alerts).
from probes.alerts.models import (  # noqa: E402, F401
    AlertRule,
    AlertState,
    Delivery,
    Incident,
    IncidentEvent,
    IncidentUpdate,
    NotificationChannel,
    Silence,
)

# Users' tokens for the REST API (probes.apitokens).
from probes.apitokens.models import ApiToken  # noqa: E402, F401
from probes.deadletter_models import DeadLetter  # noqa: E402, F401
from probes.fleet.models import CentralKey, MissedRun, RegionKey, Worker, WorkerBeat  # noqa: E402, F401

# Targets that serve one model, ranked against each other (probes.modelgroups).
from probes.modelgroups.models import ModelGroup  # noqa: E402, F401

# Real users' observations and their ingest sources (probes.realusers).
from probes.realusers.models import (  # noqa: E402, F401
    IngestRate,
    IngestSource,
    MetricStream,
    Observation,
    ObservationRollup,
    SpanResource,
)

# Service level objectives and their exact hourly counts (probes.slos).
from probes.slos.models import (  # noqa: E402, F401
    ObjectiveAlertState,
    ServiceLevelObjective,
    SLOCounted,
    SLODayCount,
    SLOFiveMinuteCount,
    SLOHourCount,
)

# Status pages (probes.statuspages).
from probes.statuspages.models import StatusPage  # noqa: E402, F401

# Running totals of stored measurements for /metrics' counters (probes.tally).
from probes.tally import MeasurementTally  # noqa: E402, F401
