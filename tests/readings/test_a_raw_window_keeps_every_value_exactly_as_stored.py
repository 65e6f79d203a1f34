"""A raw window keeps its values for exact percentiles (read_raw with raw values): every stored value of the
group, bit for bit (doubles with 17 significant digits, the smallest subnormal, the largest double, 0), none
of the NULLs, in ascending order, from every interval read and no row outside them; and its exact
percentiles are the nearest ranks of those values."""

from __future__ import annotations

import math
import random
import struct
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from probes.histogram import exact_percentile
from probes.models import Measurement
from probes.readings.raw import read_raw
from probes.readings.rows import Reading
from tests.factories import MeasurementFactory

START = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
AWKWARD = [0.0, 0.1 + 0.2, 1 / 3, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 123456.78901234567]


def bits(values: list[float]) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]


def test_every_value_is_kept_as_stored_and_sorted(make_probe, make_region):
    rng = random.Random(5)
    regions = [make_region(slug="a", name="A"), make_region(slug="b", name="B")]
    probe = make_probe(regions=regions)
    rows, expected = [], defaultdict(list)
    intervals = [(START, START + timedelta(hours=1)), (START + timedelta(hours=2), START + timedelta(hours=3))]
    for k in range(400):
        started = START + timedelta(seconds=27 * k)  # three hours: the middle one is outside every interval
        region = regions[k % 2]
        ttft = rng.choice([None, *AWKWARD, rng.uniform(0, 9_000), rng.lognormvariate(5, 2)])
        rows.append(
            MeasurementFactory.build(probe=probe, target=probe.target, region=region, started_at=started, ttft_ms=ttft)
        )
        if ttft is not None and any(a <= started < b for a, b in intervals):
            expected[(region.id,)].append(ttft)
    Measurement.objects.bulk_create(rows)

    out: dict = defaultdict(Reading)
    read_raw(out, intervals, ("region_id",), {"region_id": None}, ("ttft", "total"), ("ttft_ms",))

    assert set(out) == set(expected)
    for group, values in expected.items():
        kept = out[group].values["ttft_ms"]
        assert bits(kept) == bits(sorted(values))
        assert out[group].hists["ttft"].count == len(values)
        for q in (0.0, 0.5, 0.95, 0.99, 1.0):
            assert out[group].percentile("ttft", q) == exact_percentile(values, q)
    assert any(v == 5e-324 for values in expected.values() for v in values)
    assert not any(math.isnan(v) for group in out for v in out[group].values["ttft_ms"])


def test_a_group_with_only_nulls_keeps_no_values_but_counts_its_rows(make_probe, make_region):
    region = make_region(slug="n", name="N")
    probe = make_probe(regions=[region])
    Measurement.objects.bulk_create(
        [
            MeasurementFactory.build(
                probe=probe, target=probe.target, region=region, started_at=START + timedelta(minutes=k), ttft_ms=None
            )
            for k in range(5)
        ]
    )
    out: dict = defaultdict(Reading)
    read_raw(out, [(START, START + timedelta(hours=1))], ("region_id",), {}, ("ttft",), ("ttft_ms",))

    reading = out[(region.id,)]
    assert reading.samples == 5
    assert "ttft_ms" not in reading.values
    assert reading.hists["ttft"].count == 0
    assert reading.percentile("ttft", 0.5) is None
