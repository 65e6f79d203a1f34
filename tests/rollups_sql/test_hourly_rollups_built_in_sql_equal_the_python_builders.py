"""The hourly rollups the SQL builder writes are the Python builder's
(devtools/rollup_reference.py), field for field and bucket for bucket, on
rows that exercise everything it must get right: many random values, values
on and next to bucket edges, NULL metrics, failures of several outcomes (calls refused for
capacity among them, which give no histogram any value),
several probes, regions and hours, and a probe re-pointed at another target
in the middle of an hour."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from devtools.rollup_reference import reference_rollups, stored_rollups
from probes.histogram import _EDGES, MAX_VALUE, MIN_VALUE
from probes.metrics import HISTOGRAM
from probes.models import HourlyRollup, Measurement, RollupHour
from probes.packed import pack
from probes.rollups import DAY, HOUR, floor_day, rebuild_hour, rebuild_range
from tests.factories import MeasurementFactory

pytestmark = pytest.mark.django_db

OUTCOMES = ("ok", "ok", "ok", "ok", "timeout", "http_error", "connect_error", "rate_limited", "overloaded")


def tricky_value(rng: random.Random) -> float | None:
    """NULL, a value on or one ulp beside a bucket edge, an end of the layout, or a log-normal latency."""
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.4:
        edge = rng.choice(_EDGES)
        return rng.choice((edge, math.nextafter(edge, 0.0), math.nextafter(edge, math.inf)))
    if roll < 0.45:
        return rng.choice((0.0, MIN_VALUE, MIN_VALUE / 3, MAX_VALUE, MAX_VALUE * 7))
    return rng.lognormvariate(5.5, 1.2)


def fill(probes, regions, hours, rng: random.Random, per_hour: int) -> None:
    rows = []
    for probe in probes:
        for region in regions:
            for hour in hours:
                for slot in sorted(rng.sample(range(3600), per_hour)):
                    scheduled = hour + timedelta(seconds=slot)
                    outcome = rng.choice(OUTCOMES)
                    rows.append(
                        MeasurementFactory.build(
                            probe=probe,
                            target_id=probe.target_id,
                            region=region,
                            scheduled_for=scheduled,
                            # Late by up to 40 s: some rows of a slot near the
                            # end of an hour start in the next one.
                            started_at=scheduled + timedelta(microseconds=rng.randrange(40_000_000)),
                            outcome=outcome,
                            **{m.column: tricky_value(rng) for m in HISTOGRAM},
                        )
                    )
    Measurement.objects.bulk_create(rows)


def test_sql_rollups_of_random_edge_and_null_values_equal_the_python_builders(make_probe, make_region, make_target):
    rng = random.Random(17)
    regions = [make_region(), make_region(), make_region()]
    probes = [make_probe(regions=regions), make_probe(regions=regions)]
    day = _a_past_day()
    hours = [day + 3 * HOUR, day + 4 * HOUR, day + 23 * HOUR]
    fill(probes, regions, hours, rng, per_hour=40)

    # Re-pointed at another target at half past: the hour's rollup is the
    # latest row's target's, as a block merged from hours is the latest hour's.
    moved, region, hour = probes[0], regions[1], day + 4 * HOUR
    other = make_target()
    Measurement.objects.filter(
        probe=moved, region=region, started_at__gte=hour + HOUR / 2, started_at__lt=hour + HOUR
    ).update(target=other)

    rebuild_range(day, day + DAY + HOUR)

    expected = reference_rollups(day, day + 2 * DAY)
    assert stored_rollups(day, day + 2 * DAY) == expected
    assert expected[(moved.id, region.id, hour)]["target_id"] == other.id
    # Every hour and group is there: 3 regions x 2 probes in each filled hour,
    # plus those whose late rows spilled over into the next hour.
    assert {h for _, _, h in expected} >= set(hours)
    assert len({k for k in expected if k[2] in hours}) == 18
    # The stored bytes themselves are what Python packs for the reference's
    # histogram (one form, whoever writes it).
    row = HourlyRollup.objects.get(probe=moved, region=region, hour=hour)
    with connection.cursor() as cur:
        cur.execute(f"SELECT ttft_hist FROM {HourlyRollup._meta.db_table} WHERE id = %s", [row.id])
        (stored,) = cur.fetchone()
    assert bytes(stored) == pack(expected[(moved.id, region.id, hour)]["ttft_hist"]) != b""


def test_an_hour_of_rows_without_any_timing_stores_empty_histograms_like_the_python_builder(make_probe, make_region):
    region = make_region()
    probe = make_probe(regions=[region])
    hour = _a_past_day() + 5 * HOUR
    MeasurementFactory(
        probe=probe,
        region=region,
        started_at=hour + timedelta(minutes=1),
        outcome="timeout",
        **{m.column: None for m in HISTOGRAM},
    )
    rebuild_hour(hour)
    expected = reference_rollups(hour, hour + HOUR)
    assert stored_rollups(hour, hour + HOUR) == expected
    assert expected[(probe.id, region.id, hour)]["ttft_hist"] == {}
    assert expected[(probe.id, region.id, hour)]["outcomes"] == {"timeout": 1}
    assert RollupHour.objects.filter(hour=hour).exists()


def _a_past_day() -> datetime:
    return floor_day(datetime.now(UTC)) - 3 * DAY
