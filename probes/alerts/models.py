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
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# The metrics a rule may watch. Latency metrics are read at a percentile; the
# rates are shares of a region's calls (missed: of its scheduled runs) in the window.
LATENCY_METRICS = ("ttft", "ttfat", "ttfb", "connect", "total")
RATE_METRICS = ("error_rate", "missed", "rate_limited")
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
    # xgettext:no-python-format
    ("rate_limited", _("Rate-limited calls (% of calls refused for rate limits or overload)")),
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

    name = models.CharField(max_length=100, unique=True, verbose_name=_("name"))
    apprise_url = models.TextField(
        editable=False,
        help_text=_("The Apprise URL, encrypted with the site's key; never shown back."),
        verbose_name=_("apprise url"),
    )
    service = models.CharField(
        max_length=40,
        editable=False,
        help_text=_('The URL\'s scheme, e.g. "slack" or "mailtos": not secret.'),
        verbose_name=_("service"),
    )
    enabled = models.BooleanField(default=True, verbose_name=_("enabled"))
    # A channel read by a team that speaks another language than the site's (probes.alerts.notify.message).
    language = models.CharField(
        max_length=16,
        blank=True,
        default="",
        choices=[("", _("the site's language"))] + [(code, name) for code, name in settings.LANGUAGES],
        verbose_name=_("language"),
        help_text=_("The language of this channel's notifications; empty: the site's language (LANGUAGE_CODE)."),
    )
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
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))
    # Channel health (probes.alerts.notify): failed attempts since the last success. The admin flags a
    # channel whose count reaches settings.LATENCY_CHANNEL_FAILING_AFTER.
    consecutive_failures = models.PositiveIntegerField(
        default=0, editable=False, verbose_name=_("consecutive failures")
    )
    last_success_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("last success at"))
    last_failure_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("last failure at"))
    last_error = models.CharField(max_length=500, blank=True, default="", editable=False, verbose_name=_("last error"))

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
    or the share for error_rate / missed / rate_limited) is above `threshold_ms` (or
    `threshold_percent`) and above `baseline_factor` times its baseline,
    whichever of the two are set (both set: both must hold). The rule
    breaches when at least max(`min_regions`, `min_regions_percent` of the
    regions measured) regions breach. Refusals: probes.alerts.rules."""

    name = models.CharField(max_length=100, unique=True, verbose_name=_("name"))
    target = models.ForeignKey(
        "probes.Target",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="alert_rules",
        help_text=_("Empty: every target, each judged on its own."),
        verbose_name=_("target"),
    )
    metric = models.CharField(max_length=16, choices=METRIC_CHOICES, default="ttft", verbose_name=_("metric"))
    percentile = models.CharField(
        max_length=4,
        choices=PERCENTILE_CHOICES,
        blank=True,
        default="p95",
        help_text=_("For latency metrics."),
        verbose_name=_("percentile"),
    )
    threshold_ms = models.FloatField(
        null=True,
        blank=True,
        help_text=_("Breach above this many milliseconds (latency metrics)."),
        verbose_name=_("threshold ms"),
    )
    threshold_percent = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text=_("Breach above this share, in percent (error rate, missed runs, rate-limited calls)."),
        verbose_name=_("threshold percent"),
    )
    baseline_factor = models.FloatField(
        null=True,
        blank=True,
        help_text=_(
            "Breach above this multiple of the region's baseline: the same region and target over the trailing "
            "7 days, at the same hour of day where there is enough data (latency metrics)."
        ),
        verbose_name=_("baseline factor"),
    )
    window_minutes = models.PositiveIntegerField(
        default=10,
        validators=[MinValueValidator(1), MaxValueValidator(360)],
        help_text=_("The condition must hold this long to fire, and clear this long to resolve."),
        verbose_name=_("window minutes"),
    )
    min_samples = models.PositiveIntegerField(
        default=5,
        validators=[MinValueValidator(1)],
        help_text=_("Calls a region needs in the window to be judged."),
        verbose_name=_("min samples"),
    )
    min_regions = models.PositiveIntegerField(
        default=1,
        validators=[MinValueValidator(1)],
        help_text=_("Quorum: regions that must breach."),
        verbose_name=_("min regions"),
    )
    min_regions_percent = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text=_("Quorum as a share of the regions measured in the window (the larger of the two applies)."),
        verbose_name=_("min regions percent"),
    )
    regions = models.ManyToManyField(
        "probes.Region",
        blank=True,
        related_name="alert_rules",
        help_text=_("Empty: every region."),
        verbose_name=_("regions"),
    )
    enabled = models.BooleanField(default=True, verbose_name=_("enabled"))
    channels = models.ManyToManyField(NotificationChannel, blank=True, related_name="rules", verbose_name=_("channels"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

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

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="states", verbose_name=_("rule"))
    target = models.ForeignKey(
        "probes.Target", on_delete=models.CASCADE, related_name="alert_states", verbose_name=_("target")
    )
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=OK, verbose_name=_("status"))
    since = models.DateTimeField(null=True, blank=True, verbose_name=_("since"))
    evaluated_at = models.DateTimeField(null=True, blank=True, verbose_name=_("evaluated at"))
    breaching = models.JSONField(
        default=list, blank=True, help_text=_("Slugs of the regions breaching."), verbose_name=_("breaching")
    )
    version = models.PositiveBigIntegerField(default=0, verbose_name=_("version"))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rule", "target"], name="alert_state_one_per_rule_target")]
        verbose_name = _("alert state")
        verbose_name_plural = _("alert states")

    def __str__(self) -> str:
        return f"{self.rule_id}/{self.target_id}: {self.status}"


PAGE = "page"
TICKET = "ticket"
SEVERITY_CHOICES = [(PAGE, _("page")), (TICKET, _("ticket"))]


class Incident(models.Model):
    """A rule firing for one target, or an objective's burn-rate alert
    (probes.slos.alerts), from the pass that fired it to the one that
    resolved it. Exactly one of `rule` and `objective` is set. An objective's
    incident is filed under the target spending most of its budget when it
    opened, so the target's pages, charts and silences find it as they find
    a rule's."""

    rule = models.ForeignKey(
        AlertRule, on_delete=models.CASCADE, null=True, blank=True, related_name="incidents", verbose_name=_("rule")
    )
    objective = models.ForeignKey(
        "probes.ServiceLevelObjective",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="incidents",
        verbose_name=_("objective"),
    )
    # An objective's alert: a page (burning fast) or a ticket (slowly); "" for a rule's incident.
    severity = models.CharField(
        max_length=8, choices=SEVERITY_CHOICES, blank=True, default="", verbose_name=_("severity")
    )
    target = models.ForeignKey(
        "probes.Target", on_delete=models.CASCADE, related_name="incidents", verbose_name=_("target")
    )
    started_at = models.DateTimeField(
        help_text=_("When the condition began to hold (UTC)."), verbose_name=_("started at")
    )
    opened_at = models.DateTimeField(help_text=_("When the pass that fired it ran (UTC)."), verbose_name=_("opened at"))
    resolved_at = models.DateTimeField(null=True, blank=True, verbose_name=_("resolved at"))
    scope = models.CharField(max_length=8, choices=SCOPE_CHOICES, verbose_name=_("scope"))
    regions = models.ManyToManyField(
        "probes.Region",
        related_name="incidents",
        help_text=_("Every region that breached during the incident."),
        verbose_name=_("regions"),
    )
    measured_regions = models.PositiveIntegerField(
        default=0, help_text=_("Regions judged when it opened."), verbose_name=_("measured regions")
    )
    summary = models.TextField(
        verbose_name=_("summary"), help_text=_("In English; pages render it in their reader's language.")
    )
    # What the summary says as data (probes.alerts.wording), rendered in each reader's language.
    summary_data = models.JSONField(default=dict, blank=True, editable=False, verbose_name=_("summary data"))
    phase = models.CharField(max_length=16, choices=PHASE_CHOICES, blank=True, default="", verbose_name=_("phase"))
    peak_value = models.FloatField(
        null=True,
        blank=True,
        # xgettext:no-python-format
        help_text=_("ms for latency, % for rates."),
        verbose_name=_("peak value"),
    )
    baseline_value = models.FloatField(null=True, blank=True, verbose_name=_("baseline value"))
    silenced = models.BooleanField(
        default=False, help_text=_("Opened inside a silence: nobody was notified."), verbose_name=_("silenced")
    )
    acknowledged_at = models.DateTimeField(null=True, blank=True, verbose_name=_("acknowledged at"))
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("acknowledged by"),
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
            # The same for an objective's burn-rate alert: one open incident per objective (probes.slos.alerts).
            models.UniqueConstraint(
                fields=["objective"],
                condition=Q(resolved_at__isnull=True, objective__isnull=False),
                name="incident_one_open_per_objective",
            ),
            models.CheckConstraint(
                condition=Q(rule__isnull=False, objective__isnull=True) | Q(rule__isnull=True, objective__isnull=False),
                name="incident_of_a_rule_or_an_objective",
            ),
        ]
        indexes = [
            # The incidents page: open ones first, then history newest first; the markers' "open for this
            # target" query.
            models.Index(fields=["target", "resolved_at"], name="incident_target_open"),
            models.Index(fields=["-started_at"], name="incident_started"),
        ]

    def __str__(self) -> str:
        return f"{self.rule or self.objective} / {self.target}"

    @property
    def source_name(self) -> str:
        """The rule's name, or the objective's: what fired."""
        return str(self.rule.name if self.rule is not None else self.objective.name if self.objective else "")

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


class IncidentEvent(models.Model):
    """One line of an incident's timeline."""

    OPENED = "opened"
    REGION_JOINED = "region_joined"
    REGION_LEFT = "region_left"
    SEVERITY_CHANGED = "severity_changed"
    NOTIFIED = "notified"
    NOTIFICATION_FAILED = "notification_failed"
    WITHHELD = "withheld"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    KIND_CHOICES = [
        (OPENED, _("opened")),
        (REGION_JOINED, _("region joined")),
        (REGION_LEFT, _("region left")),
        (SEVERITY_CHANGED, _("severity changed")),
        (NOTIFIED, _("notified")),
        (NOTIFICATION_FAILED, _("notification failed")),
        (WITHHELD, _("notification withheld (silenced)")),
        (ACKNOWLEDGED, _("acknowledged")),
        (RESOLVED, _("resolved")),
    ]

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events", verbose_name=_("incident"))
    at = models.DateTimeField(verbose_name=_("at"))
    kind = models.CharField(max_length=24, choices=KIND_CHOICES, verbose_name=_("kind"))
    region = models.ForeignKey(
        "probes.Region", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("region")
    )
    channel = models.ForeignKey(
        NotificationChannel,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="events",
        verbose_name=_("channel"),
    )
    attempt = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("attempt"))
    detail = models.TextField(blank=True, default="", verbose_name=_("detail"))
    # What the detail says, as data (probes.alerts.wording.event_text), rendered in each reader's language.
    detail_data = models.JSONField(default=dict, blank=True, editable=False, verbose_name=_("detail data"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("user"),
    )

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["incident", "at"], name="incident_event_timeline")]
        verbose_name = _("incident event")
        verbose_name_plural = _("incident events")

    def __str__(self) -> str:
        return str(
            gettext("%(kind)s at %(at)s") % {"kind": self.get_kind_display(), "at": f"{self.at:%Y-%m-%d %H:%M:%S}"}
        )


class Delivery(models.Model):
    """One notification of one transition of an incident to one channel.
    Unique per (incident, transition, channel): the evaluator creates it in
    the transaction that moved the state, and the delivery task claims it
    before sending (probes.alerts.notify), so a transition is sent once."""

    OPENED = "opened"
    RESOLVED = "resolved"
    # An objective's ticket became a page (probes.slos.alerts): told once per incident.
    ESCALATED = "escalated"
    TRANSITION_CHOICES = [(OPENED, _("opened")), (RESOLVED, _("resolved")), (ESCALATED, _("escalated to a page"))]
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

    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, related_name="deliveries", verbose_name=_("incident")
    )
    transition = models.CharField(max_length=10, choices=TRANSITION_CHOICES, verbose_name=_("transition"))
    channel = models.ForeignKey(
        NotificationChannel, on_delete=models.CASCADE, related_name="deliveries", verbose_name=_("channel")
    )
    state = models.CharField(max_length=8, choices=STATE_CHOICES, default=PENDING, verbose_name=_("state"))
    attempts = models.PositiveSmallIntegerField(default=0, verbose_name=_("attempts"))
    claimed_until = models.DateTimeField(null=True, blank=True, verbose_name=_("claimed until"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    sent_at = models.DateTimeField(null=True, blank=True, verbose_name=_("sent at"))
    last_error = models.CharField(max_length=500, blank=True, default="", verbose_name=_("last error"))

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "transition", "channel"], name="delivery_one_per_transition_channel"
            )
        ]
        verbose_name_plural = _("deliveries")
        verbose_name = _("delivery")

    def __str__(self) -> str:
        values = {
            "transition": self.get_transition_display(),
            "incident": self.incident_id,
            "channel": self.channel_id,
            "state": self.get_state_display(),
        }
        return str(gettext("%(transition)s of incident %(incident)s to channel %(channel)s: %(state)s") % values)


class Silence(models.Model):
    """A maintenance window for a target: incidents are still recorded, nobody
    is notified of a transition that happens inside it."""

    target = models.ForeignKey(
        "probes.Target", on_delete=models.CASCADE, related_name="silences", verbose_name=_("target")
    )
    starts_at = models.DateTimeField(verbose_name=_("starts at"))
    ends_at = models.DateTimeField(verbose_name=_("ends at"))
    reason = models.CharField(max_length=200, blank=True, default="", verbose_name=_("reason"))
    public = models.BooleanField(
        default=False,
        verbose_name=_("public"),
        help_text=_("Shown on status pages as scheduled maintenance, with its reason."),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

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


class IncidentUpdate(models.Model):
    """What people tell an incident's readers, in order: status pages and their feeds show these, never the
    incident's own summary or events (which name hosts, errors and thresholds)."""

    INVESTIGATING = "investigating"
    IDENTIFIED = "identified"
    MONITORING = "monitoring"
    RESOLVED = "resolved"
    STATUS_CHOICES = [
        (INVESTIGATING, _("investigating")),
        (IDENTIFIED, _("identified")),
        (MONITORING, _("monitoring")),
        (RESOLVED, _("resolved")),
    ]

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="updates", verbose_name=_("incident"))
    status = models.CharField(max_length=16, choices=STATUS_CHOICES, verbose_name=_("status"))
    text = models.TextField(max_length=5000, verbose_name=_("text"))
    posted_at = models.DateTimeField(verbose_name=_("posted at"))
    posted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("posted by"),
    )

    class Meta:
        ordering = ["posted_at", "id"]
        verbose_name = _("incident update")
        verbose_name_plural = _("incident updates")
        indexes = [
            # A status page's incidents with their updates, and the feed's newest updates.
            models.Index(fields=["incident", "posted_at"], name="incident_update_posted"),
        ]

    def __str__(self) -> str:
        return f"{self.get_status_display()}: {self.text[:60]}"
