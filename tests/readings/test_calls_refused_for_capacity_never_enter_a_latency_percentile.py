"""A 429 or an overloaded answer comes back fast: counted as a latency sample, a burst of them would make a provider
look quicker exactly when it serves nobody. Rate-limited and overloaded calls count as calls and as errors, and
give no value to any percentile, however the window is read: raw values, raw rows counted in SQL, hourly rollups,
region rollups, the table and the time series, and the trailing quantiles /metrics exposes (regions.csv's
statements: test_csv_and_chart_agree)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from latency.forms import dashboard_filters
from probes import readings
from probes.models import Measurement
from probes.readings.window import read_window
from probes.rollups import DAY, HOUR, floor_day, rebuild_hour
from tests.factories import MeasurementFactory

pytestmark = pytest.mark.django_db

SLOW, FAST = 1000.0, 10.0


@pytest.fixture
def day():
    """Three days ago: entirely in the past whatever the time now."""
    return floor_day(datetime.now(UTC)) - 3 * DAY


@pytest.fixture
def made(make_region, make_probe, day):
    """Every hour of the day: 4 ok calls at SLOW, and 6 refused ones at FAST (a 429 and an overloaded answer
    whose head came fast, one of them after a first token: a rate_limit_error in the stream)."""
    region = make_region()
    probe = make_probe(regions=[region])
    rows = []
    for h in range(24):
        for i in range(10):
            at = day + HOUR * h + timedelta(minutes=5 * i)
            refused = i >= 4
            value = FAST if refused else SLOW
            rows.append(
                MeasurementFactory.build(
                    probe=probe, region=region, scheduled_for=at, started_at=at,
                    outcome=("rate_limited", "overloaded")[i % 2] if refused else "ok",
                    http_status=(429, 529)[i % 2] if refused else 200,
                    dns_ms=value, connect_ms=value, tls_ms=value, ttfb_ms=value, total_ms=value,
                    ttft_ms=value if (not refused or i == 4) else None,
                    ttfat_ms=value if (not refused or i == 4) else None,
                    tokens_per_s=None, first_event_ms=None,
                )
            )  # fmt: skip
    Measurement.objects.bulk_create(rows)
    return probe, region


def assert_slow(reading, samples: int) -> None:
    assert (reading.samples, reading.errors) == (samples, samples * 6 // 10)
    for metric in ("dns", "connect", "tls", "ttfb", "ttft", "total"):
        assert reading.hists[metric].count == samples * 4 // 10, metric
        assert reading.hists[metric].percentile(0.0) == pytest.approx(SLOW, rel=0.01), metric


def test_a_raw_window_read_as_values_or_counted_in_sql_holds_only_the_served_calls(made, day):
    _probe, region = made
    six_hours = read_window(day, day + 6 * HOUR, region_ids=[region.id], rollups=False, raw_values=("ttfb_ms",))
    assert_slow(six_hours[(region.id,)], 60)
    assert set(six_hours[(region.id,)].values["ttfb_ms"]) == {SLOW}
    whole_day = read_window(day, day + DAY, region_ids=[region.id], rollups=False)
    assert_slow(whole_day[(region.id,)], 240)


def test_rollups_of_every_kind_hold_only_the_served_calls(made, day):
    probe, region = made
    for h in range(24):
        rebuild_hour(day + HOUR * h)
    hourly = read_window(day, day + DAY, region_ids=[region.id], target_ids=[probe.target_id])
    assert_slow(hourly[(region.id,)], 240)
    # Every target and region: the region rollups, written by the same statement.
    every = read_window(day, day + DAY, region_ids=[region.id], every_target=True, every_region=True)
    assert_slow(every[(region.id,)], 240)
    with connection.cursor() as cur:
        cur.execute("SELECT outcomes FROM probes_hourlyrollup WHERE probe_id = %s LIMIT 1", [probe.id])
        (outcomes,) = cur.fetchone()
    # The rollups still say what happened to every call.
    assert json.loads(outcomes) == {"ok": 4, "rate_limited": 3, "overloaded": 3}


@pytest.mark.parametrize("window", ["custom", "30d"])
def test_the_dashboard_table_and_series_rank_only_the_served_calls(made, day, window):
    probe, _region = made
    params = {"target": [str(probe.target_id)], "window": [window], "metric": ["ttfb"]}
    if window == "custom":  # six hours: raw rows
        params |= {"since": [day.isoformat()], "until": [(day + 6 * HOUR).isoformat()]}
    else:
        for h in range(24):
            rebuild_hour(day + HOUR * h)
    f = dashboard_filters(params, day + DAY + HOUR)
    (row,) = readings.table(f)
    assert row["errors"] == row["samples"] * 6 // 10
    assert row["p50"] == pytest.approx(SLOW, rel=0.01)
    assert all(point["p50"] == pytest.approx(SLOW, rel=0.01) for point in readings.series(f) if point["p50"])


def test_the_trailing_quantiles_of_metrics_leave_out_a_first_token_followed_by_a_rate_limit(made, day):
    quantiles = readings.window_quantiles(day + 6 * HOUR)
    assert quantiles and {q.value for q in quantiles} == {SLOW}
