"""Whole days of a window: a day whose 24 hours are all marked is read from rollups alone and gives what its raw
rows give; a day missing a mark (a late row) reads its other hours from rollups and the unmarked one up to its cut
plus the late row; the dashboard's 30 days give the raw rows' answer; and a day the rollup retention cuts into is
no longer complete."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from latency.forms import dashboard_filters
from probes import metrics, readings
from probes.engine.result import Measurement as EngineResult
from probes.histogram import exact_percentile
from probes.ingest import store
from probes.models import Measurement, RollupHour
from probes.readings.plan import complete_days, coverage
from probes.readings.window import read_window
from probes.rollups import DAY, HOUR, floor_day, prune_raw, rebuild_hour
from tests.factories import MeasurementFactory


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


def read(since, until, regions):
    return read_window(since, until, region_ids=[r.id for r in regions])


def test_a_day_with_all_24_hours_marked_is_read_from_rollups_alone(probes, regions, day):
    fill(probes, regions, day - HOUR, 26)
    build_day(day)
    for hour in (day - HOUR, day + DAY):
        rebuild_hour(hour)
    since, until = day - HOUR, day + DAY + HOUR

    plan = coverage(since, until)
    assert complete_days(plan.hours) == ([day], [day - HOUR, day + DAY])
    assert plan.raw == []
    readings = read(since, until, regions)
    for region in regions:
        rows = Measurement.objects.filter(region=region, started_at__gte=since, started_at__lt=until)
        reading = readings[(region.id,)]
        assert (reading.samples, reading.errors) == (rows.count(), rows.exclude(outcome="ok").count())
        ttft = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
        for q in (0.5, 0.95, 0.99):
            assert reading.hists["ttft"].percentile(q) == pytest.approx(exact_percentile(ttft, q), rel=0.02)
    # The same as the raw rows' histograms, bucket for bucket.
    raw = read_window(since, until, region_ids=[r.id for r in regions], rollups=False)
    assert raw.keys() == readings.keys()
    for key, reading in raw.items():
        for metric in metrics.HISTOGRAM_NAMES:
            assert readings[key].hists[metric] == reading.hists[metric], (key, metric)


def test_a_day_missing_one_mark_reads_its_hours_and_the_unmarked_one_up_to_its_cut_and_the_late_row(
    probes, regions, day
):
    fill(probes, regions, day, 24)
    build_day(day)
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
    assert complete_days(plan.hours)[0] == []
    assert len(plan.hours) == 23
    # The unmarked hour: its rollups up to their cut, and the late row above it (its tail).
    assert plan.raw == []
    assert list(plan.partial) == [day + 13 * HOUR]
    assert [tail[:2] for tail in plan.tails] == [(day + 13 * HOUR, day + 14 * HOUR)]
    reading = read(day, day + DAY, regions)[(regions[0].id,)]
    assert reading.samples == 24 * 10 * len(probes) + 1
    assert reading.hists["ttft"].percentile(1.0) == pytest.approx(77_777.0, rel=0.02)


def test_the_dashboard_reads_thirty_days_from_rollups_with_the_same_answer(probes, regions, day):
    fill(probes, regions, day - DAY, 48, per_hour=6)
    for d in (day - DAY, day):
        build_day(d)
    now = day + DAY + 30 * HOUR
    f = dashboard_filters({"target": [str(probes[0].target_id)], "window": ["30d"]}, now)
    assert complete_days(coverage(f.since, f.until).hours)[0] == [day - DAY, day]
    summary = {row["slug"]: row for row in readings.summary(f)}
    for region in regions:
        rows = Measurement.objects.filter(region=region, target=probes[0].target)
        assert summary[region.slug]["samples"] == rows.count()
        ttft = [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]
        assert summary[region.slug]["p95"] == pytest.approx(exact_percentile(ttft, 0.95), rel=0.02)


def test_a_day_the_rollup_retention_cuts_into_is_no_longer_complete(probes, regions, day, settings):
    fill(probes, regions, day - DAY, 48, per_hour=2)
    for d in (day - DAY, day):
        build_day(d)
    settings.LATENCY_RETENTION_DAYS = 1
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 1
    # Cut at noon of `day`: the day before goes, `day` itself loses its morning marks, so readers read its
    # remaining hours.
    prune_raw(now=day + DAY + 12 * HOUR)
    plan = coverage(day - DAY, day + DAY)
    assert complete_days(plan.hours) == ([], [day + HOUR * h for h in range(12, 24)])
