"""Alert rules, their state, incidents with a timeline, notification channels,
deliveries and silences. Imported by probes.models (app label "probes").

What a rule means and which rules are refused is probes.alerts.rules; the
state machine that moves AlertState and opens or resolves incidents is
probes.alerts.evaluate. These classes only describe what is stored."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

# The metrics a rule may watch. Latency metrics are read at a percentile; the
# two rates are shares of a region's scheduled runs in the window.
LATENCY_METRICS = ("ttft", "ttfat", "ttfb", "connect", "total")
RATE_METRICS = ("error_rate", "missed")
METRIC_CHOICES = [
    ("ttft", _("Time to first token")),
    ("ttfat", _("Time to first answer token")),
    ("ttfb", _("Time to first byte")),
    ("connect", _("TCP connect")),
    ("total", _("Total time")),
    # xgettext:no-python-format
    ("error_rate", _("Error rate (% of calls not ok)")),
    # xgettext:no-python-format
    ("missed", _("Missed runs (% of scheduled runs nobody picked up)")),
]
PERCENTILE_CHOICES = [("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99")]

REGIONAL = "regional"
GLOBAL = "global"
SCOPE_CHOICES = [(REGIONAL, _("regional")), (GLOBAL, _("global"))]

# The phase an incident names (probes.alerts.attribution), "" when none could be named.
PHASE_CHOICES = [
    ("dns", _("DNS lookup")),
    ("connect", _("TCP connect")),
    ("tls", _("TLS handshake")),
    ("server_wait", _("server wait")),
    ("first_token", _("first token")),
    ("streaming", _("streaming")),
    ("cold_start", _("cold start")),
]


class NotificationChannel(models.Model):
    """Where notifications go: one Apprise URL (slack://, discord://, json://,
    mailto://, ntfy://, ...). The URL holds secrets (tokens, passwords), so it
    is stored encrypted (probes.alerts.secrets) and only its service is shown
    back; `apprise_url` is the ciphertext, never the URL."""

    name = models.CharField(max_length=100, unique=True)
    apprise_url = models.TextField(
        editable=False, help_text=_("The Apprise URL, encrypted with the site's key; never shown back.")
    )
    service = models.CharField(
        max_length=40, editable=False, help_text=_('The URL\'s scheme, e.g. "slack" or "mailtos": not secret.')
    )
    enabled = models.BooleanField(default=True)
    # Not secret: a name. Lets `manage.py atlas apply` create the channel again from a file that holds no URL.
    url_env = models.CharField(
        _("URL environment variable"),
        max_length=100,
        blank=True,
        default="",
        editable=False,
        help_text=_(
            "Set by manage.py atlas apply: the environment variable the URL was read from (the URL itself never "
            "goes in a file). Empty when the URL was typed here."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Channel health (probes.alerts.notify): failed attempts since the last success. The admin flags a
    # channel whose count reaches settings.LATENCY_CHANNEL_FAILING_AFTER.
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)
    last_success_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_failure_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.CharField(max_length=500, blank=True, default="", editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name = _("notification channel")
        verbose_name_plural = _("notification channels")

    def __str__(self) -> str:
        return f"{self.name} ({self.service})" if self.service else self.name

    @property
    def failing(self) -> bool:
        return bool(self.consecutive_failures >= settings.LATENCY_CHANNEL_FAILING_AFTER)


class AlertRule(models.Model):
    """A condition on a metric per region, a quorum of regions, and where to tell.

    A region breaches when, over the last `window_minutes`, it has at least
    `min_samples` calls and its value (the percentile of a latency metric,
    or the share for error_rate / missed) is above `threshold_ms` (or
    `threshold_percent`) and above `baseline_factor` times its baseline,
    whichever of the two are set (both set: both must hold). The rule
    breaches when at least max(`min_regions`, `min_regions_percent` of the
    regions measured) regions breach. Refusals: probes.alerts.rules."""

    name = models.CharField(max_length=100, unique=True)
    target = models.ForeignKey(
        "probes.Target",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="alert_rules",
        help_text=_("Empty: every target, each judged on its own."),
    )
    metric = models.CharField(max_length=16, choices=METRIC_CHOICES, default="ttft")
    percentile = models.CharField(
        max_length=4, choices=PERCENTILE_CHOICES, blank=True, default="p95", help_text=_("For latency metrics.")
    )
    threshold_ms = models.FloatField(
        null=True, blank=True, help_text=_("Breach above this many milliseconds (latency metrics).")
    )
    threshold_percent = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text=_("Breach above this share, in percent (error rate, missed runs)."),
    )
    baseline_factor = models.FloatField(
        null=True,
        blank=True,
        help_text=_(
            "Breach above this multiple of the region's baseline: the same region and target over the trailing "
            "7 days, at the same hour of day where there is enough data (latency metrics)."
        ),
    )
    window_minutes = models.PositiveIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(360)],
        help_text=_("The condition must hold this long to fire, and clear this long to resolve."),
    )
    min_samples = models.PositiveIntegerField(
        default=5, validators=[MinValueValidator(1)], help_text=_("Calls a region needs in the window to be judged.")
    )
    min_regions = models.PositiveIntegerField(
        default=1, validators=[MinValueValidator(1)], help_text=_("Quorum: regions that must breach.")
    )
    min_regions_percent = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text=_("Quorum as a share of the regions measured in the window (the larger of the two applies)."),
    )
    regions = models.ManyToManyField(
        "probes.Region", blank=True, related_name="alert_rules", help_text=_("Empty: every region.")
    )
    enabled = models.BooleanField(default=True)
    channels = models.ManyToManyField(NotificationChannel, blank=True, related_name="rules")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("alert rule")
        verbose_name_plural = _("alert rules")

    def __str__(self) -> str:
        return str(self.name)


class AlertState(models.Model):
    """Where a rule stands for one target, between passes: the hysteresis.

    ok -> pending (the condition holds; `since` is when it first held) ->
    firing (it held for the whole window: an incident is open) -> clearing
    (it stopped holding; `since` is when) -> ok (it stayed clear for a
    window: the incident is resolved). Every change is a compare-and-swap on
    `version` (probes.alerts.evaluate), so two evaluators never both move it."""

    OK = "ok"
    PENDING = "pending"
    FIRING = "firing"
    CLEARING = "clearing"
    STATUS_CHOICES = [(OK, _("ok")), (PENDING, _("pending")), (FIRING, _("firing")), (CLEARING, _("clearing"))]

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="states")
    target = models.ForeignKey("probes.Target", on_delete=models.CASCADE, related_name="alert_states")
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=OK)
    since = models.DateTimeField(null=True, blank=True)
    evaluated_at = models.DateTimeField(null=True, blank=True)
    breaching = models.JSONField(default=list, blank=True, help_text=_("Slugs of the regions breaching."))
    version = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rule", "target"], name="alert_state_one_per_rule_target")]

    def __str__(self) -> str:
        return f"{self.rule_id}/{self.target_id}: {self.status}"


class Incident(models.Model):
    """A rule firing for one target, from the pass that fired it to the one
    that resolved it."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="incidents")
    target = models.ForeignKey("probes.Target", on_delete=models.CASCADE, related_name="incidents")
    started_at = models.DateTimeField(help_text=_("When the condition began to hold (UTC)."))
    opened_at = models.DateTimeField(help_text=_("When the pass that fired it ran (UTC)."))
    resolved_at = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=8, choices=SCOPE_CHOICES)
    regions = models.ManyToManyField(
        "probes.Region", related_name="incidents", help_text=_("Every region that breached during the incident.")
    )
    measured_regions = models.PositiveIntegerField(default=0, help_text=_("Regions judged when it opened."))
    summary = models.TextField()
    phase = models.CharField(max_length=16, choices=PHASE_CHOICES, blank=True, default="")
    # xgettext:no-python-format
    peak_value = models.FloatField(null=True, blank=True, help_text=_("ms for latency, % for rates."))
    baseline_value = models.FloatField(null=True, blank=True)
    silenced = models.BooleanField(default=False, help_text=_("Opened inside a silence: nobody was notified."))
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-started_at"]
        verbose_name = _("incident")
        verbose_name_plural = _("incidents")
        permissions = [("acknowledge_incident", _("Can acknowledge incidents"))]
        constraints = [
            # Two evaluators firing the same rule for the same target at once: the second INSERT fails,
            # so one incident opens (probes.alerts.evaluate).
            models.UniqueConstraint(
                fields=["rule", "target"], condition=Q(resolved_at__isnull=True), name="incident_one_open_per_rule"
            ),
        ]
        indexes = [
            # The incidents page: open ones first, then history newest first; the markers' "open for this
            # target" query.
            models.Index(fields=["target", "resolved_at"], name="incident_target_open"),
            models.Index(fields=["-started_at"], name="incident_started"),
        ]

    def __str__(self) -> str:
        return f"{self.rule} / {self.target}"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class IncidentEvent(models.Model):
    """One line of an incident's timeline."""

    OPENED = "opened"
    REGION_JOINED = "region_joined"
    REGION_LEFT = "region_left"
    NOTIFIED = "notified"
    NOTIFICATION_FAILED = "notification_failed"
    WITHHELD = "withheld"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    KIND_CHOICES = [
        (OPENED, _("opened")),
        (REGION_JOINED, _("region joined")),
        (REGION_LEFT, _("region left")),
        (NOTIFIED, _("notified")),
        (NOTIFICATION_FAILED, _("notification failed")),
        (WITHHELD, _("notification withheld (silenced)")),
        (ACKNOWLEDGED, _("acknowledged")),
        (RESOLVED, _("resolved")),
    ]

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField()
    kind = models.CharField(max_length=24, choices=KIND_CHOICES)
    region = models.ForeignKey("probes.Region", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    channel = models.ForeignKey(
        NotificationChannel, on_delete=models.SET_NULL, null=True, blank=True, related_name="events"
    )
    attempt = models.PositiveSmallIntegerField(null=True, blank=True)
    detail = models.TextField(blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["incident", "at"], name="incident_event_timeline")]

    def __str__(self) -> str:
        return f"{self.kind} at {self.at:%Y-%m-%d %H:%M:%S}"


class Delivery(models.Model):
    """One notification of one transition of an incident to one channel.
    Unique per (incident, transition, channel): the evaluator creates it in
    the transaction that moved the state, and the delivery task claims it
    before sending (probes.alerts.notify), so a transition is sent once."""

    OPENED = "opened"
    RESOLVED = "resolved"
    TRANSITION_CHOICES = [(OPENED, _("opened")), (RESOLVED, _("resolved"))]
    PENDING = "pending"
    SENDING = "sending"
    SENT = "sent"
    FAILED = "failed"
    WITHHELD = "withheld"
    STATE_CHOICES = [
        (PENDING, _("pending")),
        (SENDING, _("sending")),
        (SENT, _("sent")),
        (FAILED, _("failed")),
        (WITHHELD, _("withheld (silenced)")),
    ]

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="deliveries")
    transition = models.CharField(max_length=8, choices=TRANSITION_CHOICES)
    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(max_length=8, choices=STATE_CHOICES, default=PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "transition", "channel"], name="delivery_one_per_transition_channel"
            )
        ]
        verbose_name_plural = _("deliveries")

    def __str__(self) -> str:
        return f"{self.transition} of incident {self.incident_id} to channel {self.channel_id}: {self.state}"


class Silence(models.Model):
    """A maintenance window for a target: incidents are still recorded, nobody
    is notified of a transition that happens inside it."""

    target = models.ForeignKey("probes.Target", on_delete=models.CASCADE, related_name="silences")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    reason = models.CharField(max_length=200, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-starts_at"]
        verbose_name = _("silence")
        verbose_name_plural = _("silences")
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=models.F("starts_at")), name="silence_ends_after_start")
        ]
        indexes = [
            # "Is this target silenced at t?" at every transition, and the target page's list.
            models.Index(fields=["target", "ends_at"], name="silence_target_ends"),
        ]

    def __str__(self) -> str:
        return f"{self.target} {self.starts_at:%Y-%m-%d %H:%M}–{self.ends_at:%H:%M}"
