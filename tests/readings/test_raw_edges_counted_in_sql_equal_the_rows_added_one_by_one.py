"""Raw rows read by probes.readings.raw.read_raw: short intervals (a raw
window, a long window's edges) gathered as values and bucketed in numpy,
with their values kept or not, and longer ones counted into histogram
buckets in SQL: all give the same samples, errors and bucket counts, per
group and metric, as
adding the rows one by one in Python, on random values, values exactly on bucket edges and one ulp either
side, 0, values under MIN_VALUE and over MAX_VALUE, and NULL phases."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from django.db.models import Q

from probes.histogram import _EDGES, MAX_VALUE, MIN_VALUE
from probes.metrics import HISTOGRAM, HISTOGRAM_NAMES
from probes.models import Measurement
from probes.readings import raw
from probes.readings.raw import read_raw
from probes.readings.rows import Reading
from probes.readings.slots import started_in
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


def added_one_by_one(group_by, narrow, intervals) -> dict:
    """The reference: the rows themselves, read through the ORM and added to their readings one value at a time."""
    q = Q(pk__in=[])
    for a, b in intervals:
        q |= started_in(a, b)
    rows = Measurement.objects.filter(q)
    for column, values in narrow.items():
        if values:
            rows = rows.filter(**{f"{column}__in": values})
    out: dict = defaultdict(Reading)
    for row in rows:
        r = out[tuple(getattr(row, c) for c in group_by)]
        r.samples += 1
        r.errors += row.outcome != "ok"
        for metric in HISTOGRAM:
            value = getattr(row, metric.column)
            if value is not None:
                r.hists[metric.name].add(value)
    return out


def test_raw_rows_bucketed_in_sql_equal_the_python_histograms(make_probe, make_region, monkeypatch):
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
        one_by_one = added_one_by_one(group_by, narrow, intervals)
        # Gathered as values (short intervals; ttft's values kept, or none), and counted in SQL (longer ones).
        with_values: dict = defaultdict(Reading)
        read_raw(with_values, intervals, group_by, narrow, tuple(HISTOGRAM_NAMES), ("ttft_ms",))
        gathered: dict = defaultdict(Reading)
        read_raw(gathered, intervals, group_by, narrow, tuple(HISTOGRAM_NAMES))
        with monkeypatch.context() as m:
            m.setattr(raw, "VALUES_MAX", timedelta(minutes=10))
            in_sql: dict = defaultdict(Reading)
            read_raw(in_sql, intervals, group_by, narrow, tuple(HISTOGRAM_NAMES))
        assert set(in_sql) == set(gathered) == set(with_values) == set(one_by_one) and in_sql
        assert all(not r.values for r in [*in_sql.values(), *gathered.values()])
        for group, expected in one_by_one.items():
            for got in (in_sql[group], gathered[group], with_values[group]):
                assert (got.samples, got.errors) == (expected.samples, expected.errors)
                for metric in HISTOGRAM_NAMES:
                    assert got.hists[metric] == expected.hists[metric], (group, metric)


def test_no_interval_reads_nothing(db):
    out: dict = defaultdict(Reading)
    read_raw(out, [], ("region_id",), {}, tuple(HISTOGRAM_NAMES))
    assert out == {}
