"""A long window's partial first and last hours are read from the raw rows of those hours alone: the statement
classifying them names only the partitions of their days, never the days of whole hours between them (those are
read from the hour counts), so a 30-day attainment reads a few hours of raw rows, not 30 days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from probes import partitions
from probes.readings.slos import counts_in
from tests.factories import ServiceLevelObjectiveFactory

NOW = datetime(2026, 3, 10, 12, 20, 30, tzinfo=UTC)


def _ranged_scans(plan: dict):
    """The relations the plan scans by a range of slots (not the lookups of one slot a missed run makes to see
    whether it was measured after all)."""
    own = {k: v for k, v in plan.items() if k != "Plans"}
    if "Relation Name" in plan and "scheduled_for >=" in str(own):
        yield plan["Relation Name"]
    for child in plan.get("Plans", ()):
        yield from _ranged_scans(child)


@pytest.mark.django_db
def test_the_raw_read_of_a_30_day_window_scans_only_the_partitions_of_its_edges():
    objective = ServiceLevelObjectiveFactory()
    partitions.ensure_days(partitions.MEASUREMENTS, partitions.days_between(NOW - timedelta(days=31), NOW))
    seen: list[tuple[str, object]] = []

    def capture(execute, text, params, many, context):
        seen.append((text, params))
        return execute(text, params, many, context)

    with connection.execute_wrapper(capture):
        counts_in([objective.id], {"30d": (NOW - timedelta(days=30), NOW), "5m": (NOW - timedelta(minutes=5), NOW)})
    # The raw read (by slot and start); the rows not counted yet are found by id instead (probes.slos.counting).
    raw = [(text, params) for text, params in seen if "probes_measurement" in text and "m.started_at >=" in text]
    assert len(raw) == 1
    with connection.cursor() as cur:
        cur.execute("EXPLAIN (FORMAT JSON) " + raw[0][0], raw[0][1])
        plan = cur.fetchone()[0][0]["Plan"]
    days = {name.removeprefix("probes_measurement_p") for name in _ranged_scans(plan) if "measurement_p" in name}
    assert days == {f"{NOW - timedelta(days=30):%Y%m%d}", f"{NOW:%Y%m%d}"}
