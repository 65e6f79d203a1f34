"""Hourly rollups: rebuilt idempotently, mixed with raw rows into readings as
accurate as the raw rows themselves, kept correct when a late row lands, and
surviving the pruning of the rows they came from."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from probes.engine.result import Measurement as EngineResult
from probes.histogram import exact_percentile
from probes.ingest import store
from probes.models import HourlyRollup, Measurement, RollupHour
from probes.readings.window import read_window
from probes.rollups import HOUR, floor_hour, prune_raw, rebuild_hour, rebuild_range, rollup_stale_hours
from tests.factories import spread_measurements

QUANTILES = (0.5, 0.9, 0.95, 0.99)
# Per-region latency: far enough apart that mixing regions up shows.
MEDIAN_TTFT = {0: 180.0, 1: 950.0}


@pytest.fixture
def regions(make_region):
    return [make_region(), make_region()]


@pytest.fixture
def probe(make_probe, regions):
    return make_probe(regions=regions)


def fill_hours(probe, regions, hours, *, per_hour=60, now=None):
    """Raw rows in each given hour for each region; the current hour only up
    to `now`."""
    for h_index, hour in enumerate(hours):
        end = min(hour + HOUR, now) if now is not None else hour + HOUR
        for r_index, region in enumerate(regions):
            spread_measurements(
                probe,
                region,
                hour,
                end,
                per_hour,
                seed=h_index * 10 + r_index,
                median=MEDIAN_TTFT[r_index],
                fail_every=7,
            )


def rollup_rows() -> list[tuple]:
    fields = [f.name for f in HourlyRollup._meta.concrete_fields if f.name not in ("id", "updated_at")]
    return sorted(tuple(str(v) for v in row) for row in HourlyRollup.objects.values_list(*fields))


def raw(region, since, until):
    return Measurement.objects.filter(region=region, started_at__gte=since, started_at__lt=until)


def assert_reading_matches_raw(reading, rows):
    rows = list(rows.values_list("outcome", "ttft_ms"))
    assert reading.samples == len(rows)
    assert reading.errors == sum(1 for outcome, _ in rows if outcome != "ok")
    ttfts = [t for _, t in rows if t is not None]
    for q in QUANTILES:
        exact = exact_percentile(ttfts, q)
        got = reading.hists["ttft"].percentile(q)
        assert abs(got - exact) <= 0.02 * exact, (q, got, exact)


# Rebuilding -----------------------------------------------------------------


def test_rebuilding_hours_twice_gives_identical_rollups_and_marks_only_ended_hours(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, [current - 3 * HOUR, current - 2 * HOUR, current], now=now)
    # current - 1h has no rows at all.
    hours, _ = rebuild_range(current - 3 * HOUR, now)
    assert hours == 4
    first = rollup_rows()
    assert rebuild_range(current - 3 * HOUR, now)[1] == 6  # 3 hours with rows x 2 regions
    assert rebuild_hour(current - 2 * HOUR) == 2
    assert rollup_rows() == first

    marked = set(RollupHour.objects.values_list("hour", flat=True))
    assert marked == {current - 3 * HOUR, current - 2 * HOUR, current - HOUR}
    # The current hour is rolled up (for long readings) but not marked complete.
    assert HourlyRollup.objects.filter(hour=current).count() == 2
    for rollup in HourlyRollup.objects.all():
        rows = raw(rollup.region, rollup.hour, rollup.hour + HOUR)
        assert rollup.samples == rows.count()
        assert rollup.errors == rows.exclude(outcome="ok").count()
        assert rollup.outcomes == {"ok": rows.filter(outcome="ok").count(), "timeout": rollup.errors}
        assert sum(rollup.tokens_per_s_hist.values()) == rows.filter(tokens_per_s__isnull=False).count()
        assert sum(rollup.ttft_hist.values()) == rows.filter(ttft_ms__isnull=False).count()


# Reading --------------------------------------------------------------------


def test_a_window_mixing_rolled_up_and_raw_hours_matches_the_exact_percentiles(probe, regions, now):
    current = floor_hour(now)
    hours = [current - k * HOUR for k in range(5, 0, -1)] + [current]
    fill_hours(probe, regions, hours, now=now)
    # The three oldest hours are rolled up; the two before the current one are
    # not yet, and the current one never is.
    rebuild_range(current - 5 * HOUR, current - 2 * HOUR)
    assert set(RollupHour.objects.values_list("hour", flat=True)) == {current - k * HOUR for k in (5, 4, 3)}

    since, until = current - 5 * HOUR, now + timedelta(seconds=1)
    readings = read_window(since, until)
    assert set(readings) == {(r.id,) for r in regions}
    for region in regions:
        assert_reading_matches_raw(readings[(region.id,)], raw(region, since, until))


def test_a_window_not_aligned_to_hours_counts_only_its_own_rows(probe, regions, now):
    current = floor_hour(now)
    hours = [current - k * HOUR for k in range(5, 0, -1)]
    fill_hours(probe, regions, hours)
    rebuild_range(current - 5 * HOUR, current - 2 * HOUR)  # marks -5h, -4h, -3h
    # Starts inside a marked hour and ends inside an unmarked one: the marked
    # hour's rollup must not be used for its partial share.
    since = current - 5 * HOUR + timedelta(minutes=20, seconds=7)
    until = current - HOUR + timedelta(minutes=10, microseconds=5)
    readings = read_window(since, until)
    for region in regions:
        rows = raw(region, since, until)
        assert rows.count() < raw(region, current - 5 * HOUR, current).count()
        assert_reading_matches_raw(readings[(region.id,)], rows)


def test_hours_not_rolled_up_yet_are_read_from_raw_rows_with_the_same_result(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, [current - 3 * HOUR, current - 2 * HOUR, current - HOUR])
    since, until = current - 3 * HOUR, current
    before = read_window(since, until)
    assert not RollupHour.objects.exists()
    for region in regions:
        assert_reading_matches_raw(before[(region.id,)], raw(region, since, until))

    rebuild_range(since, until)
    assert RollupHour.objects.count() == 3
    after = read_window(since, until)
    assert set(after) == set(before)
    for key, reading in after.items():
        assert (reading.samples, reading.errors) == (before[key].samples, before[key].errors)
        assert reading.hists["ttft"] == before[key].hists["ttft"]
        assert reading.hists["tokens_per_s"] == before[key].hists["tokens_per_s"]
        for q in QUANTILES:
            assert reading.hists["ttft"].percentile(q) == pytest.approx(
                before[key].hists["ttft"].percentile(q), rel=0.02
            )


def test_readings_can_be_grouped_by_probe_and_narrowed_to_a_region(make_probe, regions, now):
    current = floor_hour(now)
    one, two = make_probe(regions=regions), make_probe(regions=regions)
    for p in (one, two):
        fill_hours(p, regions, [current - 2 * HOUR, current - HOUR])
    rebuild_hour(current - 2 * HOUR)
    readings = read_window(current - 2 * HOUR, current, group_by=("probe_id",), region_ids=[regions[1].id])
    assert set(readings) == {(one.id,), (two.id,)}
    for p in (one, two):
        rows = Measurement.objects.filter(probe=p, region=regions[1])
        assert_reading_matches_raw(readings[(p.id,)], rows)


# Late rows ------------------------------------------------------------------


def late_payload(probe, region, started: datetime, ttft_ms: float) -> dict:
    result = EngineResult(started_at=started.isoformat(), ttft_ms=ttft_ms, total_ms=ttft_ms + 100).to_dict()
    return {
        "probe_id": probe.id,
        "target_id": probe.target_id,
        "region_id": region.id,
        "scheduled_for": (started - timedelta(milliseconds=3)).isoformat(),
        "worker": "late-worker",
        "result": result,
    }


def test_a_late_row_unmarks_its_rolled_up_hour_and_the_next_rollup_includes_it(probe, regions, now):
    current = floor_hour(now)
    late_hour, other_hour = current - 2 * HOUR, current - 3 * HOUR
    fill_hours(probe, regions, [other_hour, late_hour])
    rebuild_range(other_hour, current - HOUR)
    rollup = HourlyRollup.objects.get(hour=late_hour, region=regions[0])
    samples_before = rollup.samples

    late_started = late_hour + timedelta(minutes=59, seconds=59, microseconds=123)
    assert len(store([late_payload(probe, regions[0], late_started, 54_321.0)])) == 1
    marked = set(RollupHour.objects.values_list("hour", flat=True))
    assert late_hour not in marked
    assert other_hour in marked  # other hours keep their marks
    # Meanwhile readings take the hour from raw rows, late row included.
    reading = read_window(late_hour, late_hour + HOUR)[(regions[0].id,)]
    assert reading.samples == samples_before + 1
    assert reading.hists["ttft"].percentile(1.0) == pytest.approx(54_321.0, rel=0.02)

    rollup_stale_hours()
    assert RollupHour.objects.filter(hour=late_hour).exists()
    rollup = HourlyRollup.objects.get(hour=late_hour, region=regions[0])
    assert rollup.samples == samples_before + 1
    rebuilt = read_window(late_hour, late_hour + HOUR)[(regions[0].id,)]
    assert rebuilt.hists["ttft"].percentile(1.0) == pytest.approx(54_321.0, rel=0.02)
    assert_reading_matches_raw(rebuilt, raw(regions[0], late_hour, late_hour + HOUR))


def test_a_row_in_the_current_hour_leaves_the_marks_alone(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, [current - HOUR])
    rebuild_hour(current - HOUR)
    store([late_payload(probe, regions[0], now - timedelta(milliseconds=10), 200.0)])
    assert RollupHour.objects.filter(hour=current - HOUR).exists()


def test_rollup_stale_hours_builds_ended_hours_that_were_never_built(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, [current - 5 * HOUR, current - HOUR])
    rollup_stale_hours()
    marked = set(RollupHour.objects.values_list("hour", flat=True))
    assert {current - 5 * HOUR, current - HOUR} <= marked
    assert current not in marked
    assert HourlyRollup.objects.filter(hour=current - 5 * HOUR).count() == 2


# Retention ------------------------------------------------------------------


def test_prune_deletes_old_raw_rows_in_batches_and_their_rollups_keep_the_readings(probe, regions, now, settings):
    settings.LATENCY_RETENTION_DAYS = 2
    settings.LATENCY_PRUNE_BATCH = 100
    cutoff = floor_hour(now - timedelta(days=2))
    old_hours = [cutoff - 3 * HOUR, cutoff - 2 * HOUR, cutoff - HOUR]
    fill_hours(probe, regions, old_hours, per_hour=50)
    recent_hour = floor_hour(now) - HOUR
    fill_hours(probe, regions, [cutoff + HOUR, recent_hour], per_hour=20)
    # Right on the edge: one row just before the cutoff goes, one at it stays.
    spread_measurements(
        probe, regions[0], cutoff - timedelta(microseconds=1), cutoff, 1, seed=99, median=MEDIAN_TTFT[0]
    )
    spread_measurements(
        probe, regions[0], cutoff, cutoff + timedelta(microseconds=1), 1, seed=98, median=MEDIAN_TTFT[0]
    )
    old_count = Measurement.objects.filter(started_at__lt=cutoff).count()
    new_count = Measurement.objects.filter(started_at__gte=cutoff).count()
    assert old_count == 3 * 2 * 50 + 1 and new_count == 2 * 20 * 2 + 1

    # The oldest hour was rolled up before; the other two never were.
    rebuild_hour(old_hours[0])
    exact = {r.id: list(raw(r, old_hours[0], cutoff).values_list("ttft_ms", flat=True)) for r in regions}
    counts = {
        r.id: (raw(r, old_hours[0], cutoff).count(), raw(r, old_hours[0], cutoff).exclude(outcome="ok").count())
        for r in regions
    }
    before = read_window(old_hours[0], cutoff)

    table = Measurement._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        deleted = prune_raw(now)
    deletes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith(f"DELETE FROM {table}")]

    assert deleted == old_count
    assert len(deletes) == old_count // 100 + 1  # 100, 100, 100, then the last 1
    assert not Measurement.objects.filter(started_at__lt=cutoff).exists()
    assert Measurement.objects.count() == new_count
    assert Measurement.objects.filter(started_at=cutoff).exists()
    assert Measurement.objects.filter(started_at__gte=recent_hour).count() == 2 * 20

    assert set(old_hours) <= set(RollupHour.objects.values_list("hour", flat=True))
    assert HourlyRollup.objects.filter(hour__in=old_hours).count() == 3 * 2
    after = read_window(old_hours[0], cutoff)
    for region in regions:
        reading = after[(region.id,)]
        assert (reading.samples, reading.errors) == counts[region.id]
        assert reading.hists["ttft"] == before[(region.id,)].hists["ttft"]
        values = [v for v in exact[region.id] if v is not None]
        for q in QUANTILES:
            assert reading.hists["ttft"].percentile(q) == pytest.approx(exact_percentile(values, q), rel=0.02)

    # Rebuilding hours whose raw rows are gone keeps their rollups.
    rebuild_range(old_hours[0], cutoff)
    again = read_window(old_hours[0], cutoff)
    assert {k: (v.samples, v.errors) for k, v in again.items()} == {k: (v.samples, v.errors) for k, v in after.items()}


def test_prune_with_nothing_old_deletes_nothing(probe, regions, now, settings):
    settings.LATENCY_RETENTION_DAYS = 2
    fill_hours(probe, regions, [floor_hour(now) - HOUR], per_hour=10)
    assert prune_raw(now) == 0
    assert Measurement.objects.count() == 20


# The command ----------------------------------------------------------------


def test_the_rollup_command_builds_the_same_rollups_as_rebuild_range(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, [current - 4 * HOUR, current - 3 * HOUR, current - HOUR, current], now=now)
    since, until = current - 4 * HOUR + timedelta(minutes=30), current - HOUR + timedelta(minutes=1)
    rebuild_range(floor_hour(since), until)
    expected_rollups = rollup_rows()
    expected_marks = set(RollupHour.objects.values_list("hour", flat=True))
    assert expected_marks == {current - k * HOUR for k in (4, 3, 2, 1)}
    HourlyRollup.objects.all().delete()
    RollupHour.objects.all().delete()

    call_command("rollup", since=since.isoformat(), until=until.isoformat(), stdout=open("/dev/null", "w"))
    assert rollup_rows() == expected_rollups
    assert set(RollupHour.objects.values_list("hour", flat=True)) == expected_marks
    assert not HourlyRollup.objects.filter(hour=current).exists()


def test_the_rollup_command_accepts_relative_times(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, [current - 2 * HOUR])
    call_command("rollup", "--since", "3h", stdout=open("/dev/null", "w"))
    assert RollupHour.objects.filter(hour=current - 2 * HOUR).exists()
    assert HourlyRollup.objects.filter(hour=current - 2 * HOUR).count() == 2


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"since": "garbage"}, "--since"),
        ({"since": "2025-01-01T00:00:00Z", "until": "soon"}, "--until"),
        ({"since": "2025-02-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"}, "--since"),
        ({"since": "2025-01-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"}, "--since"),
    ],
    ids=["since garbage", "until garbage", "since after until", "empty range"],
)
def test_the_rollup_command_rejects_bad_values_naming_the_option(db, options, named):
    with pytest.raises(CommandError) as err:
        call_command("rollup", **options)
    assert named in str(err.value)
    assert not RollupHour.objects.exists()
