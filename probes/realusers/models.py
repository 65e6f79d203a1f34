"""Ingest sources, real users' observations and their hourly rollups. Imported by probes.models (app label
"probes").

Observations live in their own table, never in Measurement: a probe's row is one scheduled call of ours with
every phase timed; an observation is what someone else's application saw of its own call, with at most a
duration and a time to first token, placed by where the user was."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

SPAN = "span"
BEACON = "beacon"
KIND_CHOICES = [(SPAN, _("OpenTelemetry span")), (BEACON, _("browser beacon"))]

# Where an observation's place came from, most trusted first (probes.realusers.location).
PLACE_SOURCES = ("attributes", "cloud", "address", "default", "none")


class IngestSource(models.Model):
    """One application or site that sends us its users' calls. The secret token authenticates OTLP exports
    (`Authorization: Bearer <token>`); only its SHA-256 is stored, so it is shown once, when made or rotated.
    The browser key is public by design (it sits in a page's script tag) and is only good for the beacon,
    from the allowed origins."""

    name = models.CharField(max_length=100, unique=True, verbose_name=_("name"))
    token_hash = models.CharField(
        max_length=64,
        unique=True,
        editable=False,
        help_text=_("SHA-256 of the secret token; the token itself is never stored."),
        verbose_name=_("token hash"),
    )
    browser_key = models.CharField(
        max_length=40,
        unique=True,
        editable=False,
        help_text=_("Public key for the browser beacon's script tag."),
        verbose_name=_("browser key"),
    )
    allowed_origins = models.JSONField(
        default=list,
        blank=True,
        help_text=_("Origins (scheme://host[:port]) whose pages may send beacons with the browser key."),
        verbose_name=_("allowed origins"),
    )
    enabled = models.BooleanField(default=True, verbose_name=_("enabled"))
    # Where this source's users are when nothing else says (an internal tool used from one office, say).
    default_country = models.CharField(max_length=2, blank=True, default="", verbose_name=_("default country"))
    default_city = models.CharField(max_length=100, blank=True, default="", verbose_name=_("default city"))
    default_latitude = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(-90), MaxValueValidator(90)],
        verbose_name=_("default latitude"),
    )
    default_longitude = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(-180), MaxValueValidator(180)],
        verbose_name=_("default longitude"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    rotated_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("rotated at"))
    last_seen_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("last seen at"))
    # What the source sent, so that "why is nothing on the map?" has an answer on its page
    # (probes.realusers.sources.tally, after each export or beacon).
    calls_stored = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text=_("LLM calls stored: GenAI spans, beacons and calls counted by metrics."),
        verbose_name=_("calls stored"),
    )
    spans_ignored = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text=_("Spans without GenAI attributes, and agent or tool steps."),
        verbose_name=_("spans ignored"),
    )
    rejected = models.PositiveBigIntegerField(
        default=0,
        editable=False,
        help_text=_("Spans and metric points refused as malformed."),
        verbose_name=_("rejected"),
    )
    last_rejection = models.CharField(
        max_length=300,
        blank=True,
        default="",
        editable=False,
        help_text=_("Why the latest refused item was refused."),
        verbose_name=_("last rejection"),
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("ingest source")
        verbose_name_plural = _("ingest sources")

    def __str__(self) -> str:
        return str(self.name)


class Observation(models.Model):
    """One LLM call as a real user's application or browser saw it (a GenAI span or a beacon).

    The client's address is never stored; the place is kept at city resolution (probes.realusers.location).
    Missing values are NULL: a span without a time to first chunk has ttft_ms NULL, never 0."""

    source = models.ForeignKey(IngestSource, on_delete=models.CASCADE, related_name="observations", db_index=False)
    kind = models.CharField(max_length=8, choices=KIND_CHOICES)
    observed_at = models.DateTimeField(help_text=_("When the call started (UTC)."))
    received_at = models.DateTimeField()
    # Matched to a configured target by host and model (probes.realusers.matching); NULL: "other providers".
    target = models.ForeignKey(
        "probes.Target", null=True, blank=True, on_delete=models.SET_NULL, related_name="observations", db_index=False
    )
    provider = models.CharField(max_length=64, blank=True, default="")  # gen_ai.provider.name / gen_ai.system
    host = models.CharField(max_length=255, blank=True, default="")  # server.address
    model = models.CharField(max_length=200, blank=True, default="")
    operation = models.CharField(max_length=64, blank=True, default="")  # gen_ai.operation.name
    service = models.CharField(max_length=200, blank=True, default="")  # service.name, or the beacon's label
    country = models.CharField(max_length=2, blank=True, default="")
    city = models.CharField(max_length=100, blank=True, default="")
    latitude = models.FloatField(null=True, blank=True)
    longitude = models.FloatField(null=True, blank=True)
    place_from = models.CharField(max_length=12, default="none")  # one of PLACE_SOURCES
    ttft_ms = models.FloatField(null=True, blank=True)
    ttft_from = models.CharField(max_length=80, blank=True, default="")  # the attribute or event it was read from
    total_ms = models.FloatField(null=True, blank=True)
    output_tokens = models.IntegerField(null=True, blank=True)
    error_type = models.CharField(max_length=120, blank=True, default="")

    class Meta:
        indexes = [
            # Retention's DELETE ... WHERE observed_at < cutoff, and time-ordered scans.
            models.Index(fields=["observed_at"], name="obs_observed_at"),
            # A target page's real-user rows over a window.
            models.Index(fields=["target", "observed_at"], name="obs_target_observed"),
            # Deleting a source (CASCADE) without scanning the table.
            models.Index(fields=["source", "observed_at"], name="obs_source_observed"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.model or '?'} at {self.observed_at:%Y-%m-%d %H:%M:%S} UTC"


class ObservationRollup(models.Model):
    """Real users' calls of one UTC hour, place and target (or host and model when no target matched),
    as counts and mergeable histograms (probes.histogram) of the metrics with real_users=True in
    probes.metrics. Written at ingest, in the transaction that stores the raw rows, so it always holds every
    observation; OTLP metric histograms land here directly (they have no raw rows)."""

    hour = models.DateTimeField(help_text=_("Start of the UTC hour."))
    target = models.ForeignKey(
        "probes.Target",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="observation_rollups",
        db_index=False,
    )
    host = models.CharField(max_length=255, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    country = models.CharField(max_length=2, blank=True, default="")
    city = models.CharField(max_length=100, blank=True, default="")
    latitude = models.FloatField(null=True, blank=True)
    longitude = models.FloatField(null=True, blank=True)
    samples = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    ttft_hist = models.JSONField(default=dict, blank=True)
    total_hist = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # The ingest's INSERT ... ON CONFLICT merge key; NULLs (no target, no coordinates) count as equal.
            models.UniqueConstraint(
                fields=["hour", "target", "host", "model", "country", "city", "latitude", "longitude"],
                name="obs_rollup_one_per_key",
                nulls_distinct=False,
            ),
        ]
        indexes = [
            # probes.readings.realusers: WHERE hour >= since AND hour < until [AND target_id IN (...)].
            models.Index(fields=["hour", "target"], name="obs_rollup_hour_target"),
        ]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} UTC {self.city or self.country or '?'} ({self.samples})"


class IngestRate(models.Model):
    """What a source took from one of its budgets in one minute (probes.realusers.ratelimit): OTLP spans and
    points, or beacons per address, per target and in all. Counted in the database so every web process shares
    it (INSERT ... ON CONFLICT DO UPDATE ... RETURNING count)."""

    source = models.ForeignKey(IngestSource, on_delete=models.CASCADE, related_name="+", db_index=False)
    # "otlp", "beacon", "beacon-target:<id>", "beacon-address:<keyed hash>" (never the address itself).
    bucket = models.CharField(max_length=64, default="")
    minute = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "bucket", "minute"], name="ingest_rate_one_per_bucket_minute")
        ]

    def __str__(self) -> str:
        return f"{self.count} {self.bucket} at {self.minute:%Y-%m-%d %H:%M} UTC"


class MetricStream(models.Model):
    """The last cumulative point of one OTLP histogram stream (resource, metric, attributes), so that a
    cumulative export (the SDKs' default) is stored as its difference from the previous one, never counted
    twice. A stream whose start time changes has restarted, and its point is taken whole."""

    source = models.ForeignKey(IngestSource, on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.CharField(max_length=64, help_text=_("SHA-256 of the resource, metric name and point attributes."))
    start_time_ns = models.BigIntegerField()
    last_time_ns = models.BigIntegerField()
    count = models.BigIntegerField()
    bucket_counts = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "key"], name="metric_stream_one_per_key")]

    def __str__(self) -> str:
        return f"stream {self.key[:12]} ({self.count} calls)"


class SpanResource(models.Model):
    """A resource (source + service.name + service.instance.id) that sent GenAI spans recently: its GenAI
    metric points describe the same calls, so they are not counted again (probes.realusers.otlp)."""

    source = models.ForeignKey(IngestSource, on_delete=models.CASCADE, related_name="+", db_index=False)
    key = models.CharField(max_length=64)
    last_span_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "key"], name="span_resource_one_per_key")]

    def __str__(self) -> str:
        return f"resource {self.key[:12]} (spans until {self.last_span_at:%Y-%m-%d %H:%M} UTC)"
