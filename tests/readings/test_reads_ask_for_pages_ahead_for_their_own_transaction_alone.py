"""A read asks PostgreSQL to fetch pages ahead of its bitmap heap scans (effective_io_concurrency, from
LATENCY_READ_IO_CONCURRENCY) for its own transaction alone; 0 leaves the server's setting; and a server that
refuses the value (as one built without posix_fadvise refuses anything but 0) still serves every read, with its
own setting."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from latency.forms import dashboard_filters
from probes import readings
from probes.readings import plan
from probes.readings.plan import reporting_reads
from tests.factories import spread_measurements

# Whole transactions: a SET LOCAL lasts until the outermost one ends, which a test's own would hide.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def unasked():
    plan._ReadAhead.supported = None
    yield
    plan._ReadAhead.supported = None


def shown() -> str:
    with connection.cursor() as cur:
        cur.execute("SHOW effective_io_concurrency")
        return cur.fetchone()[0]


def test_a_read_asks_for_the_configured_depth_and_leaves_the_session_as_it_was(settings):
    settings.LATENCY_READ_IO_CONCURRENCY = 37
    before = shown()
    assert before != "37"
    with reporting_reads():
        assert shown() == "37"
    assert shown() == before
    # Known to work now: the next read sets it without a savepoint, to the same effect.
    assert plan._ReadAhead.supported is True
    with reporting_reads():
        assert shown() == "37"
    assert shown() == before


def test_zero_leaves_the_servers_setting(settings):
    settings.LATENCY_READ_IO_CONCURRENCY = 0
    before = shown()
    with reporting_reads():
        assert shown() == before


def test_a_refused_depth_leaves_reads_working_with_the_servers_setting(settings, make_probe, make_region, now):
    probe = make_probe(regions=[make_region(slug="lagos", name="Lagos")])
    region = probe.regions.get()
    spread_measurements(probe, region, now - timedelta(hours=2), now, 40, seed=4)
    # Past PostgreSQL's maximum (1000): refused, like any non-zero value on a server without posix_fadvise.
    settings.LATENCY_READ_IO_CONCURRENCY = 5000
    before = shown()
    f = dashboard_filters({"window": ["1h"]}, now)
    for _ in range(2):
        (row,) = readings.table(f)
        assert row["samples"] > 0 and row["p50"] is not None
    assert plan._ReadAhead.supported is False
    with reporting_reads():
        assert shown() == before
