"""A long window's raw edges are counted into histogram buckets in SQL
(probes.readings.raw.read_raw without raw values): the same samples, errors
and bucket counts, per group and metric, as adding the rows one by one in
Python, on random values, values exactly on bucket edges and one ulp either
side, 0, values under MIN_VALUE and over MAX_VALUE, and NULL phases."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from probes.histogram import _EDGES, MAX_VALUE, MIN_VALUE
from probes.metrics import HISTOGRAM, HISTOGRAM_NAMES
from probes.models import Measurement
from probes.readings.raw import _read_raw_rows, read_raw
from probes.readings.rows import Reading
from tests.factories import MeasurementFactory

START = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def awkward_value(rng: random.Random) -> float | None:
    edge = _EDGES[rng.randrange(len(_EDGES) - 1)]
    return rng.choice(
        [
            None,
            0.0,
            MIN_VALUE / 3,
            MAX_VALUE * 2,
            edge,
            math.nextafter(edge, 0.0),
            math.nextafter(edge, math.inf),
            rng.uniform(0.01, 5_000.0),
        ]
    )


def readings_both_ways(group_by, narrow, intervals):
    metrics = tuple(HISTOGRAM_NAMES)
    in_sql: dict = defaultdict(Reading)
    one_by_one: dict = defaultdict(Reading)
    read_raw(in_sql, intervals, group_by, narrow, metrics)
    # The row-by-row path (kept for raw values), asked for one value column so it runs; the histograms are compared.
    _read_raw_rows(one_by_one, intervals, group_by, narrow, metrics, ("ttft_ms",))
    return in_sql, one_by_one


def test_raw_rows_bucketed_in_sql_equal_the_python_histograms(make_probe, make_region):
    rng = random.Random(17)
    regions = [make_region(slug=f"r{i}", name=f"R{i}") for i in range(3)]
    probes = [make_probe(regions=regions) for _ in range(2)]
    columns = [m.column for m in HISTOGRAM]
    rows = []
    for k in range(600):
        probe = probes[k % 2]
        values = {column: awkward_value(rng) for column in columns}
        rows.append(
            MeasurementFactory.build(
                probe=probe,
                target=probe.target,
                region=regions[rng.randrange(3)],
                started_at=START + timedelta(seconds=17 * k),  # distinct slots, over three hours
                outcome=rng.choice(["ok", "ok", "ok", "timeout", "http_error"]),
                **values,
            )
        )
    Measurement.objects.bulk_create(rows)
    intervals = [
        (START + timedelta(minutes=7), START + timedelta(hours=1)),
        (START + timedelta(hours=2), START + timedelta(hours=3)),
    ]

    for group_by, narrow in [
        (("region_id",), {"target_id": None, "probe_id": None, "region_id": None}),
        (("region_id", "target_id"), {"target_id": [probes[0].target_id], "probe_id": None, "region_id": None}),
        (("probe_id",), {"target_id": None, "probe_id": None, "region_id": [regions[1].id]}),
    ]:
        in_sql, one_by_one = readings_both_ways(group_by, narrow, intervals)
        assert set(in_sql) == set(one_by_one) and in_sql
        for group, expected in one_by_one.items():
            got = in_sql[group]
            assert (got.samples, got.errors) == (expected.samples, expected.errors)
            for metric in HISTOGRAM_NAMES:
                assert got.hists[metric] == expected.hists[metric], (group, metric)


def test_no_interval_reads_nothing(db):
    out: dict = defaultdict(Reading)
    read_raw(out, [], ("region_id",), {}, tuple(HISTOGRAM_NAMES))
    assert out == {}
