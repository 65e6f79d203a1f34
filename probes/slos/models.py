"""An objective and its hourly counts. Registered with the app from probes.models.

A joint condition (ok AND ttft <= X AND tpot <= Y AND total <= Z) cannot be read from the separate histograms the
rollups keep, so each objective is counted exactly, call by call, into SLOHourCount (and per day and five minutes)
as rows are stored, seconds behind ingest (probes.slos.counting), and rebuilt from raw rows when it is created or
its condition changes (`manage.py slo_rebuild NAME`)."""

from __future__ import annotations

import hashlib
import json

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from probes.slos.rules import clean_objective


class ServiceLevelObjective(models.Model):
    ROLLING_28D = "rolling_28d"
    ROLLING_30D = "rolling_30d"
    CALENDAR_MONTH = "calendar_month"
    WINDOW_CHOICES = [
        (ROLLING_28D, _("rolling 28 days")),
        (ROLLING_30D, _("rolling 30 days")),
        (CALENDAR_MONTH, _("calendar month")),
    ]

    name = models.CharField(_("name"), max_length=100, unique=True)
    enabled = models.BooleanField(_("enabled"), default=True)
    targets = models.ManyToManyField(
        "probes.Target",
        related_name="objectives",
        blank=True,
        verbose_name=_("targets"),
        help_text=_("The targets this objective covers; or choose a model group instead."),
    )
    model_group = models.ForeignKey(
        "probes.ModelGroup",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="objectives",
        verbose_name=_("model group"),
        help_text=_("Every target of this model group, as the group is now; or choose targets instead."),
    )
    regions = models.ManyToManyField(
        "probes.Region",
        related_name="objectives",
        blank=True,
        verbose_name=_("regions"),
        help_text=_("The regions whose calls count; none chosen means every region (or those of the mix)."),
    )
    mix = models.JSONField(
        _("mix of users"),
        default=dict,
        blank=True,
        help_text=_(
            'Region slug to share, as on the “where my users are” page, e.g. {"eu-london": 60, "us-ashburn": '
            "40}: the objective's figures for the mix weigh each region's attainment by its share."
        ),
    )
    ttft_threshold_ms = models.FloatField(
        _("TTFT threshold (ms)"),
        validators=[MinValueValidator(0)],
        help_text=_("A good call's time to first token is at most this (a call exactly at it is good)."),
    )
    tpot_threshold_ms = models.FloatField(
        _("TPOT threshold (ms)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("Optional: a good call's time per output token after the first is at most this."),
    )
    total_threshold_ms = models.FloatField(
        _("total threshold (ms)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_("Optional: a good call's total time is at most this."),
    )
    degraded_ttft_threshold_ms = models.FloatField(
        _("degraded TTFT threshold (ms)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_(
            "Optional, below the TTFT threshold: good calls slower than this are degraded, counted and shown, "
            "still good for the budget."
        ),
    )
    objective_percent = models.DecimalField(
        _("objective (%)"),
        max_digits=7,
        decimal_places=4,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text=_("The share of eligible calls that must be good, e.g. 99.0."),
    )
    window = models.CharField(_("window"), max_length=20, choices=WINDOW_CHOICES, default=ROLLING_30D)
    exclude_silences = models.BooleanField(
        _("exclude silences"),
        default=True,
        help_text=_(
            "Calls whose slot falls in a silence (maintenance) of their target leave the denominator, and so do "
            "runs nobody picked up then. Outside silences, runs nobody picked up (missed slots) count as bad."
        ),
    )
    exclude_rate_limited = models.BooleanField(
        _("exclude rate-limited calls"),
        default=False,
        help_text=_(
            "Calls the provider refused for its rate limits or its load (HTTP 429, 529, 503 overloaded) leave the "
            "denominator. Off, they count as bad, as every failed call does."
        ),
    )
    channels = models.ManyToManyField(
        "probes.NotificationChannel",
        blank=True,
        related_name="objectives",
        verbose_name=_("channels"),
        help_text=_("Where its burn-rate alerts are sent (pages and tickets alike)."),
    )
    # The counts in SLOHourCount were made under this condition; a change of condition empties them until
    # `slo_rebuild` has counted the raw rows again (condition_fingerprint).
    counted_condition = models.CharField(_("counted condition"), max_length=64, blank=True, default="", editable=False)
    exact_since = models.DateTimeField(
        _("counts exact since"),
        null=True,
        blank=True,
        editable=False,
        help_text=_("The first hour the counts cover: the oldest raw row kept when the objective was last rebuilt."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("service level objective")
        verbose_name_plural = _("service level objectives")
        constraints = [
            models.CheckConstraint(
                condition=Q(degraded_ttft_threshold_ms__isnull=True)
                | Q(degraded_ttft_threshold_ms__lt=models.F("ttft_threshold_ms")),
                name="slo_degraded_below_good",
            ),
            models.CheckConstraint(
                condition=Q(objective_percent__gt=0) & Q(objective_percent__lt=100), name="slo_objective_in_range"
            ),
        ]

    def __str__(self) -> str:
        return str(self.name)

    def clean(self) -> None:
        # The rules of the objective's own columns (probes.slos.rules), with clear messages; what it covers
        # (many-to-many) is judged by rules.check_scope where a form or serializer holds it.
        clean_objective(self)

    def condition_fingerprint(self) -> str:
        """What the stored counts depend on: the good call (thresholds, exclude_silences, exclude_rate_limited),
        what is covered (the targets, the model group's targets as it is now, the regions, or without regions the
        mix's regions) and whether it is counted at all (enabled). A change of any of these makes the stored counts
        another objective's (probes.slos.services.objective_saved). A mix's shares and the objective's percent or
        window only weigh or read the counts, and are not in it."""
        from probes.models import ModelGroup

        group = (
            sorted(
                ModelGroup.targets.through.objects.filter(modelgroup_id=self.model_group_id).values_list(
                    "target_id", flat=True
                )
            )
            if self.model_group_id
            else []
        )
        regions = sorted(self.regions.values_list("id", flat=True)) if self.pk else []
        condition = [
            self.ttft_threshold_ms,
            self.tpot_threshold_ms,
            self.total_threshold_ms,
            self.degraded_ttft_threshold_ms,
            self.exclude_silences,
            self.enabled,
            sorted(self.targets.values_list("id", flat=True)) if self.pk else [],
            self.model_group_id,
            group,
            regions,
            [] if regions else sorted(self.mix or {}),
        ]
        # Appended only when on: off is how every objective was counted before the field existed, and a fingerprint
        # that changed for them all would empty every objective's counts on upgrade (reconcile), losing the hours
        # older than the raw rows a rebuild can recount.
        if self.exclude_rate_limited:
            condition.append("exclude_rate_limited")
        return hashlib.sha256(json.dumps(condition).encode()).hexdigest()


class SLOCounts(models.Model):
    """What the hour and the day counts share: one objective's calls from one region to one target, by class.
    good includes degraded; eligible = good + bad (excluded calls are outside it); missed slots are among bad."""

    # No index of their own on the keys: the unique key leads with the objective, and a target or region is
    # deleted too seldom to pay for two more indexes on every row ingest adds to.
    target = models.ForeignKey(
        "probes.Target", on_delete=models.CASCADE, related_name="+", verbose_name=_("target"), db_index=False
    )
    region = models.ForeignKey(
        "probes.Region", on_delete=models.CASCADE, related_name="+", verbose_name=_("region"), db_index=False
    )
    good = models.IntegerField(_("good"), default=0)
    degraded = models.IntegerField(_("degraded"), default=0)
    bad = models.IntegerField(_("bad"), default=0)
    missed = models.IntegerField(_("missed"), default=0)
    excluded = models.IntegerField(_("excluded"), default=0)

    class Meta:
        abstract = True


class SLOHourCount(SLOCounts):
    """SLOCounts in one hour; bad_minutes marks the minutes of the hour that held a bad call."""

    objective = models.ForeignKey(
        ServiceLevelObjective,
        on_delete=models.CASCADE,
        related_name="hour_counts",
        verbose_name=_("objective"),
        db_index=False,
    )
    hour = models.DateTimeField(_("hour"))
    # Bit m set: minute m of the hour held a bad call or a missed run. Distinct minutes do not add up the way
    # counts do, so the SLA report's bad minutes (a popcount of the hours' masks) are kept as a mask.
    bad_minutes = models.BigIntegerField(_("bad minutes (mask)"), default=0)

    class Meta:
        verbose_name = _("objective hour count")
        verbose_name_plural = _("objective hour counts")
        constraints = [
            # Ingest adds to a row with INSERT … ON CONFLICT (objective, target, region, hour) DO UPDATE.
            models.UniqueConstraint(fields=["objective", "target", "region", "hour"], name="slo_hour_count_unique"),
        ]
        indexes = [
            # An objective's window read (attainment, budget, burn over 5 m … 3 d): WHERE objective_id = %s AND
            # hour >= %s, summed per target and region.
            models.Index(fields=["objective", "hour"], name="slo_hour_count_window"),
        ]

    def __str__(self) -> str:
        return f"{self.objective_id}: {self.target_id} from {self.region_id} at {self.hour:%Y-%m-%d %H:00}"


class SLODayCount(SLOCounts):
    """The same counts as SLOHourCount summed per UTC day, written beside them in the same statements: a long
    window reads one row per day of each target and region, not one per hour (probes.readings.slos.counts_in). No
    bad-minute mask: the SLA report reads hours."""

    objective = models.ForeignKey(
        ServiceLevelObjective,
        on_delete=models.CASCADE,
        related_name="day_counts",
        verbose_name=_("objective"),
        db_index=False,
    )
    day = models.DateTimeField(_("day"))

    class Meta:
        verbose_name = _("objective day count")
        verbose_name_plural = _("objective day counts")
        constraints = [
            # Ingest adds to a row with INSERT … ON CONFLICT (objective, target, region, day) DO UPDATE.
            models.UniqueConstraint(fields=["objective", "target", "region", "day"], name="slo_day_count_unique"),
        ]
        indexes = [
            # An objective's window read over its whole days: WHERE objective_id = ANY(%s) AND day >= %s AND
            # day < %s, summed per target and region.
            models.Index(fields=["objective", "day"], name="slo_day_count_window"),
        ]

    def __str__(self) -> str:
        return f"{self.objective_id}: {self.target_id} from {self.region_id} on {self.day:%Y-%m-%d}"


class SLOFiveMinuteCount(SLOCounts):
    """The same counts per five minutes of the last hours only (FIVE_MINUTES_KEPT): the burn rates over 5 m, 30 m,
    1 h and 6 h start inside an hour, and read these instead of classifying that hour's raw rows again on every
    page, scrape and alert pass. Written by the same statements as the hour counts, for calls whose slot is recent;
    older rows are deleted by the counter (probes.slos.counting.prune_five_minutes)."""

    objective = models.ForeignKey(
        ServiceLevelObjective,
        on_delete=models.CASCADE,
        related_name="five_minute_counts",
        verbose_name=_("objective"),
        db_index=False,
    )
    start = models.DateTimeField(_("start"))

    class Meta:
        verbose_name = _("objective five-minute count")
        verbose_name_plural = _("objective five-minute counts")
        constraints = [
            # The counter's INSERT … ON CONFLICT (objective, start, target, region) DO UPDATE, and with the objective
            # and start first, a window's read (WHERE objective_id = ANY(%s) AND start >= %s AND start < %s) and the
            # prune (WHERE objective_id = ANY(%s) AND start < %s) too.
            models.UniqueConstraint(
                fields=["objective", "start", "target", "region"], name="slo_five_minute_count_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.objective_id}: {self.target_id} from {self.region_id} at {self.start:%Y-%m-%d %H:%M}"


class SLOCounted(models.Model):
    """How far the objectives' counts have got: one row (id 1). Every measurement with an id at or below `through`
    is in the hour and day counts of every objective that was current when it was counted; the counter
    (probes.slos.counting.count_pending) counts the rows above it and moves it, readers (probes.readings.slos)
    classify those rows themselves in the same snapshot. Counting behind ingest, in one statement for however
    many batches arrived meanwhile, rather than in every batch's own statement: a batch of a few hundred calls
    spread over many targets and regions upserts nearly as many count rows as it holds calls."""

    SINGLETON = 1

    through = models.BigIntegerField(_("counted through measurement id"), default=0)
    counted_at = models.DateTimeField(_("counted at"), null=True, blank=True)

    class Meta:
        verbose_name = _("objectives' counting position")
        verbose_name_plural = _("objectives' counting position")

    def __str__(self) -> str:
        return f"counted through {self.through}"


class ObjectiveAlertState(models.Model):
    """Where an objective's burn-rate alert stands between passes (probes.slos.alerts): ok, or firing at a
    severity with an incident open. No pending or clearing state: the alert's own long and short windows are its
    hysteresis. Every change is a compare-and-swap on `version`, so two evaluators never both move it."""

    OK = "ok"
    FIRING = "firing"
    STATUS_CHOICES = [(OK, _("ok")), (FIRING, _("firing"))]

    objective = models.OneToOneField(
        ServiceLevelObjective, on_delete=models.CASCADE, related_name="alert_state", verbose_name=_("objective")
    )
    status = models.CharField(_("status"), max_length=8, choices=STATUS_CHOICES, default=OK)
    severity = models.CharField(_("severity"), max_length=8, blank=True, default="")
    # The alert that holds (probes.readings.slos.BURN_ALERTS): its windows and factor, "" / None when ok.
    long_window = models.CharField(_("long window"), max_length=8, blank=True, default="")
    short_window = models.CharField(_("short window"), max_length=8, blank=True, default="")
    factor = models.FloatField(_("factor"), null=True, blank=True)
    since = models.DateTimeField(_("since"), null=True, blank=True)
    evaluated_at = models.DateTimeField(_("evaluated at"), null=True, blank=True)
    # Ids of the regions spending the budget, as the incident last named them.
    burning = models.JSONField(_("burning regions"), default=list, blank=True)
    version = models.PositiveBigIntegerField(_("version"), default=0)

    class Meta:
        verbose_name = _("objective alert state")
        verbose_name_plural = _("objective alert states")

    def __str__(self) -> str:
        return f"{self.objective_id}: {self.status} {self.severity}".rstrip()
