"""Migration 0015 fills the tally from the rows already stored; its one INSERT ... SELECT must count exactly what
ingest would have counted for them (same counts, same histogram under the same bounds), or the counters would
jump at the first scrape after an upgrade."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from probes.models import MeasurementTally
from probes.tally import BUCKETS_S

migration = importlib.import_module("probes.migrations.0015_measurement_tally")


def snapshot() -> dict:
    return {
        (t.target_id, t.region_id, t.outcome): (t.measurements, t.ttft_count, t.ttft_sum_ms, t.ttft_buckets)
        for t in MeasurementTally.objects.all()
    }


def test_its_bounds_are_the_tally_bounds():
    assert tuple(bound * 1000 for bound in BUCKETS_S) == migration.BOUNDS_MS


@pytest.mark.django_db
def test_the_backfill_equals_what_ingest_kept(make_probe, make_region, stored):
    regions = [make_region(), make_region()]
    probe = make_probe(regions=regions)
    when = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    for i in range(12):
        outcome = "timeout" if i % 5 == 4 else "ok"
        ttft = None if outcome == "timeout" else 45.0 * (i + 1) ** 1.6
        stored(probe, regions[i % 2], when + timedelta(minutes=i), outcome=outcome, ttft_ms=ttft)
    kept = snapshot()
    assert sum(counts[0] for counts in kept.values()) == 12

    MeasurementTally.objects.all().delete()
    with connection.cursor() as cur:
        cur.execute(migration.BACKFILL)
    got = snapshot()
    assert got.keys() == kept.keys()
    for key, (n, count, total, buckets) in kept.items():
        assert (got[key][0], got[key][1], got[key][3]) == (n, count, buckets)
        assert got[key][2] == pytest.approx(total)
