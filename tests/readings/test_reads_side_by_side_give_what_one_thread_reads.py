"""probes.readings.side_by_side: in the served web process a reading's independent statements (a window's days,
edge hours and raw rows; the time series' totals, histograms and raw counts) run side by side on connections of
their own. They must give exactly what the same reading gives on one thread and connection, run on other
backends than the caller's, and never leave the caller waiting for a helper that has not started its job.

The data is committed (transaction=True): a helper's connection could not see a test's open transaction."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from latency.forms import dashboard_filters
from probes import readings
from probes.models import Target
from probes.readings import side_by_side
from probes.readings.cache import merge_cache
from probes.rollups import DAY, HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def helpers():
    side_by_side.enable(2)
    yield
    side_by_side.disable()


@pytest.fixture
def now():
    # In the past: the time series clips a point's time to the clock's now, which moves between two reads,
    # unless the window ends before it.
    return floor_hour(datetime.now(UTC)) - HOUR + timedelta(minutes=37)


@pytest.fixture
def measured(make_region, make_target, make_probe, now):
    """Nine days of two targets from two regions, rolled up but for the last hours, so that a 7-day window
    reads series blocks or days, marked hours and raw rows, and its time series rolled-up, mixed and raw
    buckets."""
    regions = [make_region(), make_region()]
    for t, median in enumerate((200.0, 650.0)):
        probe = make_probe(target=make_target(), regions=regions)
        for r, region in enumerate(regions):
            spread_measurements(
                probe, region, now - 9 * DAY, now, 9 * 24 * 6, seed=10 * t + r, median=median, fail_every=9
            )
    rebuild_range(now - 10 * DAY, floor_hour(now) - 2 * HOUR, workers=1)


def read_all(now):
    out = {}
    target = str(Target.objects.order_by("id").values_list("id", flat=True)[0])
    # 1h: raw rows only, with their values kept (exact percentiles), read in two halves side by side. 7d: the
    # time series' rolled-up buckets in two halves too, for every target (region blocks) and for one (hourly rows).
    for window in ("1h", "24h", "7d"):
        for params in (
            {"window": window},
            {"window": window, "percentile": "p99", "metric": "total"},
            {"window": window, "target": target},
        ):
            f = dashboard_filters(params, now)
            for reader in (readings.table, readings.series, readings.phases, readings.summary):
                merge_cache.clear()
                out[(reader.__name__, window, params.get("metric"), params.get("target"))] = reader(f)
    return out


def test_every_reading_side_by_side_equals_the_same_reading_on_one_thread(measured, now, helpers) -> None:
    side_by_side.disable()
    alone = read_all(now)
    side_by_side.enable(2)
    together = read_all(now)
    assert together == alone
    assert any(rows for rows in alone.values())


def test_helpers_read_on_other_backends_than_the_caller(measured, helpers) -> None:
    def backend() -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            return cur.fetchone()[0]

    mine, *theirs = side_by_side.run([backend, backend, backend])
    assert mine == backend()
    assert theirs and all(pid != mine for pid in theirs)


def test_a_job_no_helper_has_started_is_run_by_the_caller(helpers) -> None:
    side_by_side.enable(1)
    released = threading.Event()
    ran_on: dict[str, int] = {}

    def first() -> str:
        ran_on["first"] = threading.get_ident()
        return "first"

    def holds_the_only_helper() -> str:
        # Waits for the third job: only the caller can run it while this one holds the helper.
        ran_on["second"] = threading.get_ident()
        assert released.wait(timeout=60), "the caller waited for a job no helper could start"
        return "second"

    def releases() -> str:
        ran_on["third"] = threading.get_ident()
        released.set()
        return "third"

    assert side_by_side.run([first, holds_the_only_helper, releases]) == ["first", "second", "third"]
    assert ran_on["third"] == ran_on["first"] == threading.get_ident()
    assert ran_on["second"] != ran_on["first"]


def test_off_every_job_runs_on_the_callers_thread() -> None:
    side_by_side.disable()
    idents = side_by_side.run([threading.get_ident, threading.get_ident])
    assert idents == [threading.get_ident()] * 2
