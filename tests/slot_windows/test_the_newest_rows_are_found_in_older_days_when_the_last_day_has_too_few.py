"""Reads of the newest rows without a window (/metrics' last results, a target page's recent measurements and
failures) look in the last day first and, for what they did not find there, in the week before, then in older
days: the answer is the same as one read over every day, in the same order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import store
from probes.readings import latest_results, window_quantiles
from probes.readings.recent import recent_failures, recent_measurements
from probes.readings.slots import RECENT_FIRST, RECENT_THEN
from tests.factories import MeasurementFactory, measurement_payload
from tests.slot_windows.support import EARLY, LATE

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
SPLIT = NOW - RECENT_FIRST


def stored(probe, region, slot: datetime, started: datetime, **result) -> None:
    # Through ingest, so the tally (whose pairs latest_results reads) counts the row.
    assert store([measurement_payload(probe, region, slot, started_at=started.isoformat(), **result)])


def test_a_pair_silent_for_days_shows_its_last_result_and_a_busy_pair_its_newest(make_region, make_probe):
    region = make_region(slug="lagos")
    silent, busy = make_probe(regions=[region]), make_probe(regions=[region])
    old = NOW - timedelta(days=3)
    stored(silent, region, old - timedelta(minutes=1), old - timedelta(minutes=1), ttft_ms=111.0)
    stored(silent, region, old - LATE, old, ttft_ms=222.0)  # its newest: started late after its slot
    stored(busy, region, old, old, ttft_ms=333.0)
    stored(busy, region, SPLIT - LATE, SPLIT, ttft_ms=444.0)  # the first instant of the last day, a late start
    by_target = {r.target: r for r in latest_results(NOW)}
    assert by_target[silent.target.name].started_at == old
    assert by_target[silent.target.name].values["ttft"] == pytest.approx(222.0)
    assert by_target[busy.target.name].started_at == SPLIT
    assert by_target[busy.target.name].values["ttft"] == pytest.approx(444.0)


def test_recent_measurements_fill_up_with_older_days_newest_first(make_region, make_probe):
    regions = [make_region(slug="lagos"), make_region(slug="paris")]
    probe = make_probe(regions=regions)
    starts = [NOW - timedelta(hours=h) for h in (1, 5, 23)] + [SPLIT - timedelta(hours=h) for h in (1, 30, 60)]
    starts += [NOW - RECENT_THEN - timedelta(hours=1), NOW - RECENT_THEN - timedelta(days=9)]
    for i, started in enumerate(starts):
        MeasurementFactory(probe=probe, region=regions[i % 2], started_at=started, scheduled_for=started + EARLY)
    for limit in (2, 5, 7, 100):
        got = recent_measurements(probe.target_id, limit=limit, now=NOW)
        assert [r["started_at"] for r in got] == starts[:limit]


def test_recent_failures_fill_up_with_older_days_newest_first(make_region, make_probe):
    region = make_region(slug="lagos")
    probe = make_probe(regions=[region])
    failed = [NOW - timedelta(hours=2), SPLIT - timedelta(hours=1), SPLIT - timedelta(days=2), SPLIT - RECENT_THEN]
    for started in failed:
        MeasurementFactory(probe=probe, region=region, started_at=started, outcome="timeout", ttft_ms=None)
    MeasurementFactory(probe=probe, region=region, started_at=NOW - timedelta(hours=1))  # ok: not a failure
    got = recent_failures(probe.target_id, limit=10, now=NOW)
    assert [r["started_at"] for r in got] == failed


def test_trailing_quantiles_count_late_and_early_starts_at_the_windows_edges(make_region, make_probe):
    region = make_region(slug="lagos")
    probe = make_probe(regions=[region])
    hour_ago = NOW - timedelta(hours=1)
    stored(probe, region, hour_ago - LATE, hour_ago, ttft_ms=100.0)  # first instant of the 1 h window
    stored(probe, region, NOW + timedelta(minutes=4), NOW - timedelta(seconds=1), ttft_ms=200.0)  # an early start
    stored(probe, region, NOW - LATE, NOW, ttft_ms=900.0)  # starts at the end: outside
    got = {(q.window, q.quantile): (q.samples, q.value) for q in window_quantiles(NOW)}
    assert got[("1h", 0.5)] == (2, pytest.approx(100.0))
    assert got[("1h", 0.99)] == (2, pytest.approx(200.0))
    assert got[("5m", 0.5)] == (1, pytest.approx(200.0))
