"""Rollups: the mergeable counts and histograms the long-window reads use,
and the marks and versions that keep them consistent with raw rows
(probes.rollups builds them, probes.readings reads them). Kept apart from
probes.models, which re-exports them, so neither module grows past what one
reader can hold.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from probes import packed


class HistogramField(models.BinaryField):
    """A histogram in its stored form (probes.packed), read and written
    through the ORM as Histogram.to_sparse's dict ({"12": 3}). Readers of
    many rows read the bytes in SQL instead (probes.readings.rollup)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", dict)
        kwargs.setdefault("blank", True)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        # Not BinaryField's editable=False: the field never was an admin input either way.
        kwargs.pop("editable", None)
        return name, path, args, kwargs

    def from_db_value(self, value: bytes | None, expression: Any, connection: Any) -> dict[str, int] | None:
        return None if value is None else packed.sparse(value)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, bytes | memoryview):
            return packed.sparse(value)
        return value

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if isinstance(value, dict):
            value = packed.pack(value)
        return super().get_db_prep_value(value, connection, prepared)

    def value_to_string(self, obj: models.Model) -> Any:
        # Serialized (dumpdata) as the dict it reads as.
        return self.value_from_object(obj)


class RollupCounts(models.Model):
    """What every rollup row (an hour's, a region's or a series' block) holds: counts, and histograms
    (HistogramField) rather than percentiles, because
    percentiles of hours cannot be combined into percentiles of a day;
    counts per bucket can."""

    samples = models.PositiveIntegerField(default=0, verbose_name=_("samples"))
    errors = models.PositiveIntegerField(
        default=0, help_text=_("Samples whose outcome is not ok."), verbose_name=_("errors")
    )
    outcomes = models.JSONField(
        default=dict, blank=True, help_text=_("Outcome name to count."), verbose_name=_("outcomes")
    )
    ttft_hist = HistogramField(verbose_name=_("ttft hist"))
    ttfat_hist = HistogramField(verbose_name=_("ttfat hist"))
    ttfb_hist = HistogramField(verbose_name=_("ttfb hist"))
    connect_hist = HistogramField(verbose_name=_("connect hist"))
    tls_hist = HistogramField(verbose_name=_("tls hist"))
    total_hist = HistogramField(verbose_name=_("total hist"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))
    # Added after the others; hours rolled up before they existed hold none until
    # rebuilt from raw rows (`manage.py rollup --since 30d`; see migration 0006).
    dns_hist = HistogramField(verbose_name=_("dns hist"))
    # A database default too, so SQL written before it existed (migration
    # 0003's backfill) still inserts rows.
    tokens_per_s_hist = HistogramField(db_default=b"", verbose_name=_("tokens per s hist"))

    class Meta:
        abstract = True


class HourlyRollup(RollupCounts):
    """One probe from one region over one UTC hour, in mergeable form.

    Histograms (HistogramField) rather than
    percentiles, because percentiles of hours cannot be combined into
    percentiles of a day; counts per bucket can.
    """

    probe = models.ForeignKey(
        "probes.Probe", on_delete=models.PROTECT, related_name="rollups", db_index=False, verbose_name=_("probe")
    )
    target = models.ForeignKey(
        "probes.Target", on_delete=models.PROTECT, related_name="rollups", db_index=False, verbose_name=_("target")
    )
    region = models.ForeignKey(
        "probes.Region", on_delete=models.PROTECT, related_name="rollups", verbose_name=_("region")
    )
    hour = models.DateTimeField(help_text=_("Start of the UTC hour."), verbose_name=_("hour"))
    # regions.csv's percentile cells of this row alone, so a CSV group made of one hourly row (one probe of a
    # target in a region, 1 h buckets) is written as it is, without expanding its histograms or formatting a
    # cell (probes.readings.rolled_buckets, probes.exports.regions): the text of the histogram bucket holding
    # the nearest rank of each probes.metrics.REGION_CSV metric x PERCENTILES, in that order, to
    # probes.significant.SIGNIFICANT digits, comma-separated, empty where the metric has no value. Written with
    # the histograms (probes.rollups.build), and only on a row that no other row shares its (hour, region,
    # target) with (another probe of the target in the region), so a row with cells is a whole 1 h group; NULL
    # on the others and on rows built before it, which readers merge instead. Changing REGION_CSV, PERCENTILES
    # or probes.significant needs a migration setting it back to NULL (or writing it anew).
    percentile_cells = models.TextField(null=True, blank=True, editable=False, verbose_name=_("percentile cells"))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["probe", "region", "hour"], name="rollup_one_per_hour"),
        ]
        indexes = [
            # Long-window dashboard reads: one target per region over weeks.
            models.Index(fields=["target", "region", "hour"], name="rollup_target_region_hour"),
            # Rebuilding or pruning a range of hours; and regions.csv's read of every row of its hours
            # (probes.readings.rolled_buckets), which needs only the included columns: an index-only scan
            # instead of visiting rows made wide by their histograms.
            models.Index(
                fields=["hour"],
                name="rollup_hour_covering",
                include=["region_id", "target_id", "probe_id", "id", "samples", "errors", "percentile_cells"],
            ),
        ]
        verbose_name = _("hourly rollup")
        verbose_name_plural = _("hourly rollups")

    def __str__(self) -> str:
        when = self.hour.strftime("%Y-%m-%d %H:00") if self.hour else "?"
        return str(gettext("rollup %(at)s UTC (%(samples)s samples)") % {"at": when, "samples": self.samples})


class RegionRollup(RollupCounts):
    """The merge of every probe's hourly rollups from one region over an
    EPOCH-aligned block of `span_hours` hours (1, 3, 12, 24 or 168:
    probes.rollups.ladder.GRAINS), so that reads of all targets merge one
    row per region and block instead of one per probe, region and hour.

    Derived in SQL in the transaction that rebuilds any of its hours (1 h
    blocks from the raw rows the hourly rollups are built from, each coarser
    one from the next finer grain),
    so it always equals the merge of its hourly rows; readers use a block
    only when all its hours carry a RollupHour mark."""

    region = models.ForeignKey("probes.Region", on_delete=models.PROTECT, related_name="region_rollups", db_index=False)
    span_hours = models.PositiveSmallIntegerField(help_text="Length of the block in hours.")
    start = models.DateTimeField(help_text="Start of the block (a multiple of its span from 1970-01-01 UTC).")
    # Sum over the block's hours of samples x the hour's midpoint in epoch
    # seconds: a time-series point's `at` (the samples-weighted mean of hour
    # midpoints) comes out as from the hourly rows.
    sample_seconds = models.FloatField(default=0)

    class Meta:
        constraints = [
            # Also the index of every read: WHERE (span_hours, start) IN (the
            # window's tiling) [AND region_id = ANY(...)], and of the rebuild's
            # and prune's deletes of a grain's blocks over a time range.
            models.UniqueConstraint(fields=["span_hours", "start", "region"], name="region_rollup_one_per_block"),
        ]

    def __str__(self) -> str:
        when = self.start.strftime("%Y-%m-%d %H:00") if self.start else "?"
        return f"region rollup {when} UTC +{self.span_hours} h ({self.samples} samples)"


class SeriesRollup(RollupCounts):
    """The merge of one probe's hourly rollups from one region, for one target,
    over an EPOCH-aligned block of `span_hours` hours (48, 96, 192 or 384:
    2 to 16 days, probes.rollups.periods.SERIES_GRAINS), so that a long
    window read per probe or target (the table of every target) merges a few
    rows per series instead of one per hour or 12 h block.

    Merged (probes.rollups.series_blocks) from the blocks of the next finer
    grain inside it, the 2-day ones from the 12 h blocks; readers use a block
    only when a SeriesBlockMark says it is built and every day in it is complete.

    Also blocks inside a day, of 3 and 12 hours (SERIES_HOUR_GRAINS), merged
    from the hourly rows of their hours (probes.rollups.hour_blocks) for the
    hours at a window's ends; read only with their SeriesBlockMark and every
    hour marked."""

    probe = models.ForeignKey("probes.Probe", on_delete=models.PROTECT, related_name="series_rollups", db_index=False)
    target = models.ForeignKey("probes.Target", on_delete=models.PROTECT, related_name="series_rollups", db_index=False)
    region = models.ForeignKey("probes.Region", on_delete=models.PROTECT, related_name="series_rollups", db_index=False)
    span_hours = models.PositiveSmallIntegerField(help_text="Length of the block in hours.")
    start = models.DateTimeField(help_text="Start of the block (a multiple of its span from 1970-01-01 UTC).")
    # A block inside a day only: as RegionRollup.sample_seconds, so that a time series of named targets takes its
    # 3 h and 12 h buckets from these blocks with the same `at` as from the hourly rows (probes.readings.series).
    # NULL on the blocks of days, which no time series reads.
    sample_seconds = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also the index of every read: WHERE (span_hours, start) IN (the
            # window's tiling) [AND target_id = ANY(...)] [AND region_id = ANY(...)],
            # and of a rebuild's delete of a grain's blocks over a time range.
            models.UniqueConstraint(
                fields=["span_hours", "start", "target", "region", "probe"], name="series_rollup_one_per_block"
            ),
        ]

    def __str__(self) -> str:
        when = self.start.strftime("%Y-%m-%d") if self.start else "?"
        return f"series rollup {when} UTC +{self.span_hours} h ({self.samples} samples)"


class SeriesBlockMark(models.Model):
    """Says that the SeriesRollup rows of one block are the merge of the hourly
    rollups of its hours as they are now. Written with them when every hour of
    the block is marked (and, for a block merged from finer blocks, each of
    those carries its mark); deleted by any rebuild of one of its hours before
    those rollups change, so a block whose mark is there is never stale."""

    span_hours = models.PositiveSmallIntegerField()
    start = models.DateTimeField()
    built_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["span_hours", "start"], name="series_block_mark_one_per_block"),
        ]

    def __str__(self) -> str:
        when = self.start.strftime("%Y-%m-%d") if self.start else "?"
        return f"series block {when} UTC +{self.span_hours} h"


class RollupHour(models.Model):
    """Marks a UTC hour whose HourlyRollup rows are complete.

    Readers trust rollups only for marked hours and read raw measurements for
    the rest; the ingest removes the mark when a late measurement lands in
    the hour, so a reading never silently misses rows.
    """

    hour = models.DateTimeField(unique=True, help_text="Start of the UTC hour.")
    built_at = models.DateTimeField(help_text="When the hour's rollups were last rebuilt.")

    class Meta:
        ordering = ["-hour"]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} UTC" if self.hour else "?"


class HourCut(models.Model):
    """Which raw rows the HourlyRollup rows of a UTC hour count: those with an id at or below `cut`
    (probes.rollups.locks.take_cut), as of the last rebuild that wrote them. Rows stored later all have higher
    ids, so the hour as it is now is its rollups plus its raw rows above the cut. Readers use that for an hour
    with no RollupHour mark (the current hour, rebuilt every few minutes, or one a late row reached), which
    they would otherwise read raw in full (probes.readings.plan)."""

    hour = models.DateTimeField(primary_key=True, help_text="Start of the UTC hour.")
    cut = models.BigIntegerField(help_text="The highest measurement id the hour's rollups may count.")
    newest = models.DateTimeField(
        null=True,
        help_text="The latest started_at the hour's rollups count, for an hour that had not ended when they were "
        "built (a window ending inside the hour may use them only if it ends after it); empty for an ended hour.",
    )
    built_at = models.DateTimeField(help_text="When the hour's rollups were built (their updated_at).")

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} UTC up to id {self.cut}" if self.hour else "?"


class HourVersion(models.Model):
    """How many ingest transactions have stored rows in one UTC hour: the
    compare-and-swap that lets a rebuild of the hour run without blocking
    ingest (probes.rollups.locks explains the protocol). Rows are never
    deleted: a counter that restarted could repeat a value a rebuild read."""

    hour = models.DateTimeField(primary_key=True, help_text="Start of the UTC hour.")
    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H:00} UTC v{self.version}" if self.hour else "?"
