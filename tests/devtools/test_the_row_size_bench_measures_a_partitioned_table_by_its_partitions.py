"""bench/row_size.py's sizes: a partitioned table (the raw measurements) holds no pages of its own, so its heap,
its indexes and each index are its day partitions' together; a plain table (the hourly rollups) is measured as
itself. Summing over the partitions is what the bench is for: the parent's own size is 0 whatever it holds."""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime

import pytest
from django.db import connection

from probes import partitions
from probes.models import HourlyRollup, Measurement
from tests.factories import HourlyRollupFactory, MeasurementFactory
from tests.partitions.conftest import fresh_days  # noqa: F401 (the fixture)
from tests.support import ROOT


@pytest.fixture
def row_size():
    """bench/row_size.py as a module; the paths it puts first on sys.path (the repository, bench/) are taken off
    again, so no bench script's name shadows a module for the rest of the session."""
    before = list(sys.path)
    spec = importlib.util.spec_from_file_location("bench_row_size", ROOT / "bench" / "row_size.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = before
    return module


def _sql(query: str, params: list) -> int:
    with connection.cursor() as cur:
        cur.execute(query, params)
        return int(cur.fetchone()[0] or 0)


@pytest.mark.usefixtures("fresh_days")
def test_the_measurements_sizes_are_their_partitions_together(row_size, make_probe, make_region):
    region = make_region()
    probe = make_probe(regions=[region])
    today = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    partitions.ensure_days(partitions.MEASUREMENTS, [today.date()])
    Measurement.objects.bulk_create(
        MeasurementFactory.build_rows(
            [{"scheduled_for": today.replace(hour=0, minute=m % 60, second=m // 60)} for m in range(600)],
            probe=probe,
            region=region,
        )
    )

    sizes = row_size.sizes(Measurement)

    leaves = "SELECT inhrelid FROM pg_inherits WHERE inhparent = %s::regclass"
    assert _sql("SELECT pg_relation_size('probes_measurement')", []) == 0
    assert sizes["rows"] == 600
    assert sizes["heap_bytes"] == _sql(f"SELECT sum(pg_relation_size(r)) FROM ({leaves}) p(r)", ["probes_measurement"])
    assert sizes["heap_bytes"] > 0
    assert sizes["index_bytes"] == _sql(f"SELECT sum(pg_indexes_size(r)) FROM ({leaves}) p(r)", ["probes_measurement"])
    for index in ("measurement_one_per_slot", "meas_target_region_started", "probes_measurement_pkey"):
        assert sizes["each"][index] == _sql(f"SELECT sum(pg_total_relation_size(r)) FROM ({leaves}) p(r)", [index]) > 0
    assert sum(sizes["each"].values()) == sizes["index_bytes"]
    assert sizes["total_bytes"] >= sizes["heap_bytes"] + sizes["index_bytes"]


@pytest.mark.django_db(transaction=True)
def test_a_plain_table_is_measured_as_itself(row_size, make_probe, make_region):
    probe = make_probe(regions=[make_region()])
    HourlyRollupFactory(probe=probe)

    sizes = row_size.sizes(HourlyRollup)

    table = HourlyRollup._meta.db_table
    assert sizes["rows"] == 1
    assert sizes["heap_bytes"] == _sql("SELECT pg_relation_size(%s::regclass)", [table]) > 0
    assert sizes["index_bytes"] == _sql("SELECT pg_indexes_size(%s::regclass)", [table]) > 0
    assert sum(sizes["each"].values()) == sizes["index_bytes"]
