"""A region is live while a running worker was heard within the stale limit, stale up to the dark
limit, dark after it, with every worker stopped, or with no worker at all. Time is passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes import readings
from probes.models import Worker
from tests.factories import RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def limits(settings):
    settings.LATENCY_REGION_STALE_AFTER = 60
    settings.LATENCY_REGION_DARK_AFTER = 300


def status_of(region, now=NOW) -> str:
    return readings.region_status(now)[region.id]


def test_a_worker_heard_within_the_last_minute_makes_its_region_live():
    region = RegionFactory()
    WorkerFactory(region=region, last_seen=NOW - timedelta(seconds=59))
    assert status_of(region) == "live"


def test_a_region_whose_newest_worker_is_a_few_minutes_silent_is_stale():
    region = RegionFactory()
    WorkerFactory(region=region, last_seen=NOW - timedelta(seconds=61))
    WorkerFactory(region=region, last_seen=NOW - timedelta(seconds=250))
    assert status_of(region) == "stale"


def test_a_region_silent_longer_than_the_dark_limit_is_dark():
    region = RegionFactory()
    WorkerFactory(region=region, last_seen=NOW - timedelta(seconds=301))
    assert status_of(region) == "dark"
    health = readings.region_health(NOW)[region.id]
    assert health.last_seen == NOW - timedelta(seconds=301)


def test_a_region_no_worker_ever_reported_for_is_dark_and_never_seen():
    region = RegionFactory()
    assert status_of(region) == "dark"
    assert readings.region_health(NOW)[region.id].last_seen is None


def test_a_stopped_worker_leaves_its_region_dark_however_recent_its_goodbye():
    region = RegionFactory()
    WorkerFactory(region=region, state=Worker.STOPPED, last_seen=NOW - timedelta(seconds=1))
    assert status_of(region) == "dark"


def test_one_live_worker_among_stopped_and_silent_ones_keeps_the_region_live():
    region = RegionFactory()
    WorkerFactory(region=region, state=Worker.STOPPED, last_seen=NOW)
    WorkerFactory(region=region, last_seen=NOW - timedelta(hours=2))
    WorkerFactory(region=region, last_seen=NOW - timedelta(seconds=5))
    assert status_of(region) == "live"


def test_passing_time_turns_a_live_region_stale_then_dark():
    region = RegionFactory()
    WorkerFactory(region=region, last_seen=NOW)
    assert [status_of(region, NOW + timedelta(seconds=s)) for s in (0, 60, 61, 300, 301)] == [
        "live",
        "live",
        "stale",
        "stale",
        "dark",
    ]


def test_the_limits_are_settings(settings):
    region = RegionFactory()
    WorkerFactory(region=region, last_seen=NOW - timedelta(seconds=90))
    settings.LATENCY_REGION_STALE_AFTER = 120
    assert status_of(region) == "live"
    settings.LATENCY_REGION_STALE_AFTER, settings.LATENCY_REGION_DARK_AFTER = 30, 60
    assert status_of(region) == "dark"


def test_each_region_is_judged_by_its_own_workers():
    lagos, mumbai, lima = RegionFactory(), RegionFactory(), RegionFactory()
    WorkerFactory(region=lagos, last_seen=NOW)
    WorkerFactory(region=mumbai, last_seen=NOW - timedelta(minutes=3))
    statuses = readings.region_status(NOW)
    assert (statuses[lagos.id], statuses[mumbai.id], statuses[lima.id]) == ("live", "stale", "dark")


def test_worker_rows_judge_each_worker_and_flag_a_clock_more_than_a_second_off():
    region = RegionFactory(slug="hs-lagos", name="Lagos")
    WorkerFactory(region=region, hostname="on-time", last_seen=NOW, clock_offset_ms=-999.0)
    WorkerFactory(region=region, hostname="fast-clock", last_seen=NOW - timedelta(seconds=2), clock_offset_ms=1500.0)
    WorkerFactory(region=region, hostname="late", last_seen=NOW - timedelta(seconds=90), clock_offset_ms=None)
    WorkerFactory(region=region, hostname="lost", last_seen=NOW - timedelta(hours=3))
    WorkerFactory(region=region, hostname="said-goodbye", state=Worker.STOPPED, last_seen=NOW - timedelta(minutes=1))
    rows = readings.worker_rows([region.id], NOW)
    assert [(r.hostname, r.status, r.clock_flagged) for r in rows] == [
        ("on-time", "live", False),
        ("fast-clock", "live", True),
        ("said-goodbye", "stopped", False),
        ("late", "stale", False),
        ("lost", "lost", False),
    ]
    assert {(r.region_slug, r.region_name) for r in rows} == {("hs-lagos", "Lagos")}


def test_worker_rows_leave_out_long_stopped_and_day_old_workers():
    region = RegionFactory()
    WorkerFactory(region=region, hostname="yesterday", last_seen=NOW - timedelta(days=1, seconds=1))
    WorkerFactory(region=region, hostname="stopped-long-ago", state=Worker.STOPPED, last_seen=NOW - timedelta(hours=1))
    WorkerFactory(region=region, hostname="here", last_seen=NOW)
    assert [r.hostname for r in readings.worker_rows(None, NOW)] == ["here"]
