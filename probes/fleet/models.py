"""Region credentials, region workers as their heartbeats describe them, and
scheduled runs that no worker picked up. Imported by probes.models."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class RegionKey(models.Model):
    """A region's credential, kept as its public key only: the private half
    was shown once when it was made and lives on the region's hosts. A key
    is in force until retires_at (NULL: no end); rotating gives the old key a
    retires_at a little ahead, so workers can be moved over without a gap."""

    region = models.ForeignKey("probes.Region", on_delete=models.CASCADE, related_name="keys", verbose_name=_("region"))
    key_id = models.CharField(
        max_length=16,
        unique=True,
        help_text=_("First 16 hex digits of the public key's SHA-256; not secret."),
        verbose_name=_("key id"),
    )
    public_key = models.CharField(
        max_length=64, help_text=_("Ed25519 public key, base64url."), verbose_name=_("public key")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    retires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("From this moment the key is refused (empty: in force)."),
        verbose_name=_("retires at"),
    )
    note = models.CharField(max_length=200, blank=True, default="", verbose_name=_("note"))

    class Meta:
        ordering = ["region", "-created_at"]
        verbose_name = _("region credential")
        verbose_name_plural = _("region credentials")

    def __str__(self) -> str:
        return str(gettext("%(region)s key %(key)s") % {"region": self.region.slug, "key": self.key_id})


class CentralKey(models.Model):
    """The central site's Ed25519 signing key (probes.fleet.central): it signs
    every run order and heartbeat reply, and region hosts hold its public key
    inside their credentials. The private key is stored encrypted under a key
    derived from SECRET_KEY, so a dump of the database alone cannot sign.
    Rotated as region keys are: the previous key keeps signing until
    retires_at."""

    key_id = models.CharField(
        max_length=16,
        unique=True,
        help_text=_("First 16 hex digits of the public key's SHA-256; not secret."),
        verbose_name=_("key id"),
    )
    public_key = models.CharField(
        max_length=64, help_text=_("Ed25519 public key, base64url."), verbose_name=_("public key")
    )
    sealed_private_key = models.TextField(
        help_text=_("The private key, encrypted under SECRET_KEY."), verbose_name=_("sealed private key")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    retires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("From this moment the key no longer signs (empty: in force)."),
        verbose_name=_("retires at"),
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("central signing key")
        verbose_name_plural = _("central signing keys")

    def __str__(self) -> str:
        return str(gettext("central key %(key)s") % {"key": self.key_id})


class Worker(models.Model):
    """One region-worker process (a start of `latency-atlas worker`), as its
    latest heartbeat describes it."""

    RUNNING = "running"
    STOPPED = "stopped"
    STATE_CHOICES = [(RUNNING, _("running")), (STOPPED, _("stopped"))]

    instance = models.CharField(
        max_length=32, unique=True, help_text=_("Random id chosen by the process at start."), verbose_name=_("instance")
    )
    region = models.ForeignKey(
        "probes.Region", on_delete=models.CASCADE, related_name="workers", verbose_name=_("region")
    )
    key_id = models.CharField(max_length=16, verbose_name=_("key id"))
    name = models.CharField(max_length=255, help_text=_("Celery node name."), verbose_name=_("name"))
    hostname = models.CharField(max_length=255, verbose_name=_("hostname"))
    release = models.CharField(max_length=40, verbose_name=_("release"))
    schema = models.PositiveSmallIntegerField(verbose_name=_("schema"))
    engine = models.CharField(max_length=200, blank=True, default="", verbose_name=_("engine"))
    state = models.CharField(max_length=8, choices=STATE_CHOICES, default=RUNNING, verbose_name=_("state"))
    started_at = models.DateTimeField(verbose_name=_("started at"))
    last_seen = models.DateTimeField(help_text=_("Central time of the latest heartbeat."), verbose_name=_("last seen"))
    last_run_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last run at"))
    runs = models.PositiveBigIntegerField(
        default=0, help_text=_("Runs finished since the process started."), verbose_name=_("runs")
    )
    in_flight = models.PositiveIntegerField(default=0, verbose_name=_("in flight"))
    queue_depth = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("queue depth"))
    clock_offset_ms = models.FloatField(
        null=True,
        blank=True,
        help_text=_("Worker clock minus central clock, from the heartbeat's round trip."),
        verbose_name=_("clock offset ms"),
    )
    round_trip_ms = models.FloatField(null=True, blank=True, verbose_name=_("round trip ms"))
    refused_orders = models.PositiveBigIntegerField(
        default=0,
        help_text=_("Run orders the worker refused (not signed by the central site, expired, misrouted)."),
        verbose_name=_("refused orders"),
    )
    refused_replies = models.PositiveBigIntegerField(
        default=0,
        help_text=_("Heartbeat replies the worker refused to believe (not signed by the central site)."),
        verbose_name=_("refused replies"),
    )
    last_refusal = models.CharField(max_length=300, blank=True, default="", verbose_name=_("last refusal"))

    class Meta:
        ordering = ["region", "-last_seen"]
        indexes = [
            # Region status and the region page: WHERE region_id = ... ORDER BY last_seen DESC,
            # and every region's latest heartbeat (the map).
            models.Index(fields=["region", "-last_seen"], name="worker_region_seen"),
            # Pruning workers not seen for a long time.
            models.Index(fields=["last_seen"], name="worker_last_seen"),
        ]
        verbose_name = _("worker")
        verbose_name_plural = _("workers")

    def __str__(self) -> str:
        return f"{self.name} ({self.instance[:8]})"


class WorkerBeat(models.Model):
    """A short history of heartbeats (LATENCY_HEARTBEAT_HISTORY_HOURS)."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="beats", verbose_name=_("worker"))
    at = models.DateTimeField(verbose_name=_("at"))
    in_flight = models.PositiveIntegerField(default=0, verbose_name=_("in flight"))
    runs = models.PositiveBigIntegerField(default=0, verbose_name=_("runs"))
    queue_depth = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("queue depth"))
    clock_offset_ms = models.FloatField(null=True, blank=True, verbose_name=_("clock offset ms"))

    class Meta:
        indexes = [
            # A worker's recent history (newest first), and pruning by age.
            models.Index(fields=["worker", "-at"], name="worker_beat_recent"),
            models.Index(fields=["at"], name="worker_beat_at"),
        ]
        verbose_name = _("worker beat")
        verbose_name_plural = _("worker beats")

    def __str__(self) -> str:
        if not self.at:
            return str(gettext("heartbeat"))
        return str(gettext("heartbeat at %(at)s UTC") % {"at": f"{self.at:%Y-%m-%d %H:%M:%S}"})


class MissedRun(models.Model):
    """A scheduled run with no measurement long after it was due: no worker
    picked it up (region dark, workers saturated, a stale order skipped).
    Counted per region beside samples and errors; a measurement that still
    arrives later wins (readers count only missed runs without one)."""

    probe = models.ForeignKey(
        "probes.Probe", on_delete=models.CASCADE, related_name="missed_runs", db_index=False, verbose_name=_("probe")
    )
    target = models.ForeignKey(
        "probes.Target", on_delete=models.CASCADE, related_name="missed_runs", db_index=False, verbose_name=_("target")
    )
    region = models.ForeignKey(
        "probes.Region", on_delete=models.CASCADE, related_name="missed_runs", db_index=False, verbose_name=_("region")
    )
    scheduled_for = models.DateTimeField(verbose_name=_("scheduled for"))
    recorded_at = models.DateTimeField(verbose_name=_("recorded at"))

    class Meta:
        constraints = [
            # One per slot, the same key as Measurement's: closing slots twice records once.
            models.UniqueConstraint(fields=["probe", "region", "scheduled_for"], name="missed_run_one_per_slot"),
        ]
        indexes = [
            # Counting a window's missed runs per region and target; pruning by age.
            models.Index(fields=["scheduled_for", "region"], name="missed_run_when"),
        ]
        verbose_name = _("missed run")
        verbose_name_plural = _("missed runs")

    def __str__(self) -> str:
        when = self.scheduled_for.strftime("%Y-%m-%d %H:%M:%S") if self.scheduled_for else "?"
        return str(gettext("missed run of %(at)s UTC") % {"at": when})
