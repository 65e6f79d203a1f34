"""Every statement a dashboard endpoint, a page, /metrics, the REST API, an export or an alert pass runs over raw
measurements names the slot time: each scan of probes_measurement (or of one of its partitions) has a condition
on scheduled_for, or is a partition whose day lies within the read's slot range. So PostgreSQL can leave out the
partitions of every other day, whichever started_at window the read was asked for."""

from __future__ import annotations

import re
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from psycopg import sql

from probes import readings
from probes.alerts.evaluate import run_pass
from probes.exports import ExportFilters
from probes.exports.measurements import measurements_select, where_clause
from probes.fleet.missed import close_slots
from probes.readings.selection import Selection
from probes.slot_time import slot_bounds
from tests.factories import AlertRuleFactory, MeasurementFactory, MissedRunFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 10, 12, 0, 30, tzinfo=UTC)
WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}
# The raw measurements' table and its partitions (not probes_measurementtally).
RAW = re.compile(r"probes_measurement($|_)")
# A partition's bound as pg_get_expr prints it.
BOUND = re.compile(r"FROM \('([^']+)'\) TO \('([^']+)'\)")


@contextmanager
def statements():
    """The SQL text and parameters of every statement run on Django's connection meanwhile."""
    seen: list[tuple[str, object]] = []

    def capture(execute, text, params, many, context):
        seen.append((text, params))
        return execute(text, params, many, context)

    with connection.execute_wrapper(capture):
        yield seen


def scans(plan: dict):
    """Every node of a plan that scans a relation."""
    if "Relation Name" in plan:
        yield plan
    for child in plan.get("Plans", ()):
        yield from scans(child)


def partition_day(relation: str) -> tuple[datetime, datetime] | None:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = %s AND relispartition", [relation]
        )
        row = cur.fetchone()
    if row is None or not (m := BOUND.search(row[0])):
        return None
    return tuple(datetime.fromisoformat(v).astimezone(UTC) for v in m.groups())  # type: ignore[return-value]


def unbounded_scans(
    seen: list[tuple[str, object]], slot_range: tuple[datetime | None, datetime | None], kinds=("SELECT", "WITH")
) -> list:
    """The scans of raw measurements in the captured reads that neither name scheduled_for nor are a partition
    inside slot_range; and how many scans there were, so a test can tell it saw some."""
    bad, count = [], 0
    low, high = slot_range
    for text, params in seen:
        if "probes_measurement" not in text or not text.lstrip().upper().startswith(kinds):
            continue
        with connection.cursor() as cur:
            cur.execute("EXPLAIN (FORMAT JSON) " + text, params)
            plan = cur.fetchone()[0][0]["Plan"]
        for node in scans(plan):
            relation = node["Relation Name"]
            if not RAW.match(relation):
                continue
            count += 1
            conditions = " ".join(str(node.get(k, "")) for k in ("Index Cond", "Filter", "Recheck Cond"))
            if "scheduled_for" in conditions:
                continue
            day = partition_day(relation)
            if day is not None and (low is None or day[1] > low) and (high is None or day[0] < high):
                continue
            bad.append((relation, node["Node Type"], conditions, text[:300]))
    return [bad, count]


@pytest.fixture
def world(make_region, make_probe):
    lagos, paris = make_region(slug="lagos"), make_region(slug="paris")
    probe = make_probe(regions=[lagos, paris])
    for region in (lagos, paris):
        for minutes in (2, 30, 90, 60 * 30, 60 * 24 * 8):
            started = NOW - timedelta(minutes=minutes)
            MeasurementFactory(probe=probe, region=region, started_at=started, scheduled_for=started)
        MeasurementFactory(probe=probe, region=region, started_at=NOW - timedelta(minutes=5), outcome="timeout")
    MissedRunFactory(probe=probe, region=lagos, target=probe.target, scheduled_for=NOW - timedelta(minutes=10))
    return probe, lagos


def assert_bounded(seen, slot_range=(None, None), kinds=("SELECT", "WITH")):
    bad, count = unbounded_scans(seen, slot_range, kinds)
    assert count, "no read of raw measurements was seen"
    assert bad == []


@pytest.mark.parametrize("window", list(WINDOWS))
@pytest.mark.parametrize("path", ["overview", "histograms", "timeseries", "phases", "table"])
def test_each_dashboard_endpoint_bounds_its_reads_for_one_and_all_targets(admin_client, world, path, window):
    probe, _region = world
    for targets in ({}, {"target": probe.target_id}):
        with time_machine.travel(NOW, tick=False), statements() as seen:
            response = admin_client.get(f"/api/{path}", {"window": window, **targets})
        assert response.status_code == 200, response.content
        assert_bounded(seen, slot_bounds(NOW - WINDOWS[window], NOW))


def test_the_pages_metrics_and_aggregates_bound_their_reads(admin_client, world):
    probe, region = world
    urls = [
        "/",
        f"/regions/{region.slug}/",
        f"/targets/{probe.target_id}/",
        "/metrics",
        "/api/v1/aggregates/table/?window=24h",
        "/api/v1/aggregates/series/?window=7d",
    ]
    for url in urls:
        with time_machine.travel(NOW, tick=False), statements() as seen:
            response = admin_client.get(url)
        assert response.status_code == 200, (url, response.content[:300])
        assert_bounded(seen)


def test_a_key_paged_measurement_list_bounds_every_page_by_its_cursor(admin_client, world):
    url = "/api/v1/measurements/?page_size=2&since=2026-03-09T00:00:00Z"
    pages = 0
    while url:
        with time_machine.travel(NOW, tick=False), statements() as seen:
            response = admin_client.get(url)
        assert response.status_code == 200, response.content
        assert_bounded(seen, slot_bounds(datetime(2026, 3, 9, tzinfo=UTC), NOW))
        url, pages = response.json()["next"], pages + 1
    assert pages >= 3


def test_an_alert_pass_bounds_its_reads(world):
    probe, _region = world
    # Its window's calls, a 7-day baseline (rollups and raw rows) and missed runs.
    AlertRuleFactory(target=probe.target, min_samples=1)
    AlertRuleFactory(target=probe.target, threshold_ms=None, baseline_factor=1.5, min_samples=1)
    AlertRuleFactory(target=probe.target, metric="missed", percentile="", threshold_ms=None, threshold_percent=50.0)
    with statements() as seen:
        run_pass(NOW)
    texts = " ".join(text for text, _params in seen)
    assert "probes_missedrun" in texts and "probes_rolluphour" in texts  # missed runs read, a baseline planned
    assert_bounded(seen)


@pytest.mark.parametrize("objectives", [False, True], ids=["alone", "counting objectives"])
def test_the_missed_run_recorder_bounds_its_reads(world, settings, objectives):
    from tests.factories import ServiceLevelObjectiveFactory

    settings.LATENCY_MISSED_LOOKBACK = 3600
    if objectives:
        # An enabled objective makes the INSERT a WITH that counts what it recorded (probes.slos.counting).
        ServiceLevelObjectiveFactory()
    with statements() as seen:
        close_slots(NOW)
    # Its INSERT ... SELECT reads measurements (EXPLAIN without ANALYZE runs nothing).
    assert_bounded(seen, kinds=("INSERT", "WITH"))


def test_the_exports_statements_are_bounded(world):
    f = ExportFilters(since=NOW - timedelta(days=1), until=NOW)
    sel = Selection(since=f.since, until=f.until)
    texts = [
        measurements_select(where_clause(f)),
        readings.bucket_statement(sel, timedelta(minutes=5)),
        readings.bucket_statement(sel, None),
    ]
    seen = [(sql.Composed([t]).as_string(connection.connection), None) for t in texts]
    assert_bounded(seen, slot_bounds(f.since, f.until))
