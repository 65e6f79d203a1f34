"""Daily rollups: the exact merge of a day's hourly rollups, rebuilt with
every hour of the day, and read only for days whose 24 hours are all marked
complete."""

from __future__ import annotations

import importlib
import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from latency.forms import dashboard_filters
from probes import metrics, readings
from probes.engine.result import Measurement as EngineResult
from probes.histogram import Histogram, exact_percentile
from probes.ingest import store
from probes.metrics import HISTOGRAM_NAMES as METRICS
from probes.models import DailyRollup, HourlyRollup, Measurement, RollupHour
from probes.readings.plan import coverage
from probes.readings.window import read_window
from probes.rollups import DAY, HOUR, floor_day, prune_raw, rebuild_day, rebuild_hour, rebuild_range
from tests.factories import MeasurementFactory
from tests.jsonb_histograms import histograms_as_jsonb

backfill_migration = importlib.import_module("probes.migrations.0003_daily_rollups")


@pytest.fixture
def day():
    """Three days ago: entirely in the past whatever the time now."""
    return floor_day(datetime.now(UTC)) - 3 * DAY


@pytest.fixture
def regions(make_region):
    return [make_region(), make_region()]


@pytest.fixture
def probes(make_probe, regions):
    return [make_probe(regions=regions), make_probe(regions=regions)]


# The columns fill() gives a shape of their own; every other histogram metric gets plain values.
SHAPED_COLUMNS = {"dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "ttft_ms", "ttfat_ms", "total_ms", "tokens_per_s"}


def fill(probes, regions, start: datetime, hours: int, per_hour: int = 10) -> None:
    rows = []
    for h in range(hours):
        hour = start + HOUR * h
        for p_index, probe in enumerate(probes):
            for r_index, region in enumerate(regions):
                rng = random.Random(h * 100 + p_index * 10 + r_index)
                for i in range(per_hour):
                    started = hour + HOUR * (i / per_hour)
                    failed = i % 6 == 5
                    ok = not failed
                    rows.append(
                        MeasurementFactory.build(
                            probe=probe,
                            region=region,
                            scheduled_for=started,
                            outcome="ok" if ok else "http_error",
                            http_status=None,
                            output_tokens=None,
                            itl_p50_ms=None,
                            dns_ms=rng.uniform(1, 30) if ok else None,
                            connect_ms=rng.uniform(10, 90),
                            tls_ms=rng.uniform(20, 180) if ok else None,
                            ttfb_ms=rng.lognormvariate(math.log(300), 0.4) if ok else None,
                            ttft_ms=rng.lognormvariate(math.log(400 * (r_index + 1)), 0.5) if ok else None,
                            ttfat_ms=rng.lognormvariate(math.log(450), 0.5) if ok else None,
                            total_ms=rng.uniform(1000, 4000),
                            tokens_per_s=rng.uniform(10, 100) if ok else None,
                            # Any histogram metric added to probes.metrics later gets values too.
                            **{
                                m.column: rng.uniform(5, 500) if ok else None
                                for m in metrics.HISTOGRAM
                                if m.column not in SHAPED_COLUMNS
                            },
                        )
                    )
    Measurement.objects.bulk_create(rows)


def build_day(day: datetime) -> None:
    for h in range(24):
        rebuild_hour(day + HOUR * h)


def daily_rows(columns: tuple[str, ...] | None = None) -> dict[tuple, dict]:
    """Daily rollup rows by (probe, region, day): every stored field, or only the given columns
    (a migration written before a metric existed fills only the histograms it knew)."""
    fields = [
        f.name
        for f in DailyRollup._meta.concrete_fields
        if f.name not in ("id", "updated_at") and (columns is None or not f.name.endswith("_hist") or f.name in columns)
    ]
    return {(r["probe"], r["region"], r["day"]): r for r in DailyRollup.objects.values(*fields)}


def test_a_daily_rollup_is_the_exact_merge_of_its_days_hourly_rollups(probes, regions, day):
    fill(probes, regions, day - 2 * HOUR, 28)  # spills into the days either side
    build_day(day)

    for daily in DailyRollup.objects.filter(day=day):
        hourly = HourlyRollup.objects.filter(
            probe=daily.probe_id, region=daily.region_id, hour__gte=day, hour__lt=day + DAY
        )
        assert hourly.count() == 24
        assert daily.target_id == daily.probe.target_id
        assert daily.samples == sum(h.samples for h in hourly) == 24 * 10
        assert daily.errors == sum(h.errors for h in hourly) == 24 * 1
        assert daily.outcomes == {"ok": 24 * 9, "http_error": 24}
        for metric in METRICS:
            merged = Histogram.merged(Histogram.from_sparse(getattr(h, f"{metric}_hist")) for h in hourly)
            assert Histogram.from_sparse(getattr(daily, f"{metric}_hist")) == merged
            assert merged.count > 0  # dns included
        # Same bucket order as Histogram.to_sparse writes.
        assert list(daily.ttft_hist) == list(Histogram.from_sparse(daily.ttft_hist).to_sparse())
    assert DailyRollup.objects.filter(day=day).count() == len(probes) * len(regions)


def test_rebuilding_hours_again_leaves_the_daily_rollups_unchanged(probes, regions, day):
    fill(probes, regions, day, 24, per_hour=4)
    build_day(day)
    first = daily_rows()
    rebuild_hour(day + 5 * HOUR)
    assert rebuild_day(day) == len(probes) * len(regions)
    assert daily_rows() == first
    # A range merges each day once, after its hours: the same rows.
    DailyRollup.objects.all().delete()
    assert rebuild_range(day - 2 * HOUR, day + DAY) == (26, 24 * len(probes) * len(regions))
    assert daily_rows() == first


def test_the_days_rollups_follow_a_rebuilt_hour(probes, regions, day):
    fill(probes, regions, day, 24, per_hour=4)
    build_day(day)
    extra = Measurement.objects.filter(region=regions[0], probe=probes[0], started_at__gte=day + 7 * HOUR).first()
    extra.pk = None
    extra.scheduled_for += timedelta(seconds=1)
    extra.ttft_ms = 99_999.0
    extra.save()
    rebuild_hour(day + 7 * HOUR)
    daily = DailyRollup.objects.get(day=day, probe=probes[0], region=regions[0])
    assert daily.samples == 24 * 4 + 1
    assert Histogram.from_sparse(daily.ttft_hist).percentile(1.0) == pytest.approx(99_999.0, rel=0.02)


def read(since, until, regions):
    return read_window(since, until, region_ids=[r.id for r in regions])


def test_a_day_with_all_24_hours_marked_is_read_from_its_daily_rows(probes, regions, day):
    fill(probes, regions, day - HOUR, 26)
    build_day(day)
    for hour in (day - HOUR, day + DAY):
        rebuild_hour(hour)
    since, until = day - HOUR, day + DAY + HOUR

    plan = coverage(since, until)
    assert plan.days == [day]
    assert plan.hours == [day - HOUR, day + DAY]
    assert plan.raw == []
    readings = read(since, until, regions)
    for region in regions:
        rows = Measurement.objects.filter(region=region, started_at__gte=since, started_at__lt=until)
        reading = readings[(region.id,)]
        assert (reading.samples, reading.errors) == (rows.count(), rows.exclude(outcome="ok").count())
        ttft = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
        for q in (0.5, 0.95, 0.99):
            assert reading.hists["ttft"].percentile(q) == pytest.approx(exact_percentile(ttft, q), rel=0.02)

    # The daily row, not the hours, is what the reader used.
    DailyRollup.objects.filter(day=day, region=regions[0]).update(samples=10_000)
    assert read(since, until, regions)[(regions[0].id,)].samples == 10_000 * len(probes) + 2 * 2 * 10


def test_a_day_missing_one_mark_reads_its_hours_and_the_unmarked_one_up_to_its_cut_and_the_late_row(
    probes, regions, day
):
    fill(probes, regions, day, 24)
    build_day(day)
    DailyRollup.objects.filter(day=day).update(samples=10_000)  # would show if the day were read whole
    late_started = day + 13 * HOUR + timedelta(minutes=3, seconds=1)
    payload = {
        "probe_id": probes[0].id,
        "target_id": probes[0].target_id,
        "region_id": regions[0].id,
        "scheduled_for": late_started.isoformat(),
        "worker": "late",
        "result": EngineResult(started_at=late_started.isoformat(), ttft_ms=77_777.0).to_dict(),
    }
    assert len(store([payload])) == 1
    assert not RollupHour.objects.filter(hour=day + 13 * HOUR).exists()

    plan = coverage(day, day + DAY)
    assert plan.days == []
    assert len(plan.hours) == 23
    # The unmarked hour: its rollups up to their cut, and the late row above it (its tail).
    assert plan.raw == []
    assert list(plan.partial) == [day + 13 * HOUR]
    assert [tail[:2] for tail in plan.tails] == [(day + 13 * HOUR, day + 14 * HOUR)]
    reading = read(day, day + DAY, regions)[(regions[0].id,)]
    assert reading.samples == 24 * 10 * len(probes) + 1
    assert reading.hists["ttft"].percentile(1.0) == pytest.approx(77_777.0, rel=0.02)


def test_a_day_only_partly_inside_the_window_is_not_read_from_its_daily_rows(probes, regions, day):
    fill(probes, regions, day, 24, per_hour=3)
    build_day(day)
    DailyRollup.objects.filter(day=day).update(samples=10_000)
    plan = coverage(day + timedelta(minutes=1), day + DAY)
    assert plan.days == [] and len(plan.hours) == 23
    assert read(day + timedelta(minutes=1), day + DAY, regions)[(regions[0].id,)].samples == 24 * 3 * 2 - 2


def test_the_dashboard_reads_thirty_days_from_daily_rows_with_the_same_answer(probes, regions, day):
    fill(probes, regions, day - DAY, 48, per_hour=6)
    for d in (day - DAY, day):
        build_day(d)
    now = day + DAY + 30 * HOUR
    f = dashboard_filters({"target": [str(probes[0].target_id)], "window": ["30d"]}, now)
    assert coverage(f.since, f.until).days == [day - DAY, day]
    summary = {row["slug"]: row for row in readings.summary(f)}
    for region in regions:
        rows = Measurement.objects.filter(region=region, target=probes[0].target)
        assert summary[region.slug]["samples"] == rows.count()
        ttft = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
        assert summary[region.slug]["p95"] == pytest.approx(exact_percentile(ttft, 0.95), rel=0.02)


def test_the_migration_backfill_builds_the_same_daily_rows_as_rebuilding(probes, regions, day):
    fill(probes, regions, day - 3 * HOUR, 30, per_hour=3)
    for h in range(-3, 27):
        rebuild_hour(day + HOUR * h)
    # The days either side hold 3 hours each: only a rebuild that completes a day merges it, so these are
    # merged here, as the migration merges every day it finds.
    rebuild_day(day - DAY)
    rebuild_day(day + DAY)
    known = backfill_migration.JSON_COLUMNS
    rebuilt = daily_rows(known)
    assert {key[2] for key in rebuilt} == {day - DAY, day, day + DAY}
    DailyRollup.objects.all().delete()
    with connection.cursor() as cur:
        # The columns 0003 knew and 0006 dropped, back for its SQL (inside
        # the test's transaction, which rolls them away again). Deferred
        # foreign key checks run first: ALTER TABLE refuses to wait for them.
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in (HourlyRollup._meta.db_table, DailyRollup._meta.db_table):
            cur.execute(
                f"ALTER TABLE {table} ADD COLUMN tokens_per_s_sum float8 NOT NULL DEFAULT 0, "
                "ADD COLUMN tokens_per_s_count integer NOT NULL DEFAULT 0"
            )
        # At the schema it was written for, then converted as an installation's rows are.
        with histograms_as_jsonb():
            cur.execute(backfill_migration.BACKFILL)
    assert daily_rows(known) == rebuilt


def test_rollup_retention_drops_only_daily_rows_of_days_wholly_before_the_cut(probes, regions, day, settings):
    fill(probes, regions, day - DAY, 48, per_hour=2)
    for d in (day - DAY, day):
        build_day(d)
    settings.LATENCY_RETENTION_DAYS = 1
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 1
    # Cut at noon of `day`: the day before goes, `day` itself stays but
    # loses its morning marks, so readers read its remaining hours.
    prune_raw(now=day + DAY + 12 * HOUR)
    assert set(DailyRollup.objects.values_list("day", flat=True)) == {day}
    assert coverage(day, day + DAY).days == []
