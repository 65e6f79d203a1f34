"""Rebuilding an hour never holds ingest into it up, and never marks the hour
complete without a row committed while it was being built.

Two real connections (a thread each): the rebuild is held open right after
its statement read the hour's raw rows; meanwhile an ingest into that hour
must commit; then the rebuild finishes. The hour must then be unmarked (its
rollup lacks the row), and the next rebuild counts the row and marks it."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection

from probes.ingest import store
from probes.models import HourlyRollup, RollupHour
from probes.rollups import HOUR, floor_hour, rebuild_hour
from tests.factories import MeasurementFactory
from tests.support import ConnectionThread, ingest_payload

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

DEADLINE_S = 20


def payload(probe, region, started):
    return ingest_payload(probe, region, started, ttft_ms=777.0, total_ms=900.0)


def rebuild_held_after_reading_rows(hour, read, release):
    """rebuild_hour(hour), paused (transaction open) just after the statement
    that reads the hour's raw rows, until `release` is set."""

    def pause_after_the_build(execute, sql, params, many, context):
        outcome = execute(sql, params, many, context)
        if "rolled AS (" in sql and "INSERT INTO" in sql:  # the hourly statement
            read.set()
            assert release.wait(DEADLINE_S), "the test never released the rebuild"
        return outcome

    def run():
        with connection.execute_wrapper(pause_after_the_build):
            return rebuild_hour(hour)

    return ConnectionThread(run, DEADLINE_S)


def test_an_ingest_commits_while_its_hour_is_being_rebuilt_and_the_hour_is_left_unmarked(make_probe, make_region, now):
    region = make_region()
    probe = make_probe(regions=[region])
    hour = floor_hour(now) - 2 * HOUR
    MeasurementFactory(probe=probe, region=region, started_at=hour + timedelta(minutes=10))
    rebuild_hour(hour)
    assert RollupHour.objects.filter(hour=hour).exists()

    read, release = threading.Event(), threading.Event()
    rebuild = rebuild_held_after_reading_rows(hour, read, release)
    rebuild.start()
    try:
        assert read.wait(DEADLINE_S), "the rebuild never read the hour"
        # The rebuild's transaction is open: the ingest must commit anyway.
        ingest = ConnectionThread(lambda: store([payload(probe, region, hour + timedelta(minutes=40))]))
        ingest.start()
        assert len(ingest.result()) == 1
    finally:
        release.set()
    assert rebuild.result() == 1

    # Built without the row, so not complete; readers take the hour raw.
    assert not RollupHour.objects.filter(hour=hour).exists()
    assert HourlyRollup.objects.get(hour=hour).samples == 1

    rebuild_hour(hour)
    assert RollupHour.objects.filter(hour=hour).exists()
    assert HourlyRollup.objects.get(hour=hour).samples == 2


def test_a_rebuild_after_an_ingest_committed_marks_the_hour_with_the_row_counted(make_probe, make_region, now):
    region = make_region()
    probe = make_probe(regions=[region])
    hour = floor_hour(now) - 3 * HOUR
    assert len(store([payload(probe, region, hour + timedelta(minutes=5))])) == 1
    rebuild_hour(hour)
    assert RollupHour.objects.filter(hour=hour).exists()
    assert HourlyRollup.objects.get(hour=hour).samples == 1
