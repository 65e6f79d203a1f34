"""What the series rollup tests share: the stored blocks of days and their
marks (the blocks inside a day have tests of their own), the merge of the
hourly rollups a block should hold, and the window reads the tests compare
with and without the blocks' marks, before and after a late row."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext

from probes.engine.result import Measurement as EngineResult
from probes.histogram import Histogram
from probes.ingest import store
from probes.metrics import HISTOGRAM_NAMES
from probes.models import HourlyRollup, SeriesBlockMark, SeriesRollup
from probes.readings.cache import merge_cache
from probes.readings.window import read_window
from probes.rollups import HOUR
from probes.rollups.block_merge import JSON_COLUMNS
from probes.rollups.periods import SERIES_GRAINS


def blocks() -> dict[tuple, dict]:
    fields = ["probe", "region", "target", "span_hours", "start", "samples", "errors", *JSON_COLUMNS]
    return {
        (r["probe"], r["region"], r["target"], r["span_hours"], r["start"]): r
        for r in SeriesRollup.objects.filter(span_hours__in=SERIES_GRAINS).values(*fields)
    }


def marks() -> set[tuple[int, datetime]]:
    return set(SeriesBlockMark.objects.filter(span_hours__in=SERIES_GRAINS).values_list("span_hours", "start"))


class HourlyRollups:
    """Every stored hourly rollup, read once, with each hour's histograms made once: a block's expected merge is
    then a sum over its hours, and an hour inside blocks of five grains is not read and decoded five times."""

    def __init__(self) -> None:
        self.series: dict[tuple, list[tuple[datetime, dict]]] = {}
        fields = ["probe", "region", "target", "hour", "samples", "errors", "outcomes", *JSON_COLUMNS[1:]]
        for row in HourlyRollup.objects.order_by("hour").values(*fields):
            hists = {column: Histogram.from_sparse(row[column]) for column in JSON_COLUMNS[1:]}
            self.series.setdefault((row["probe"], row["region"], row["target"]), []).append((row["hour"], row | hists))

    def merge_of_hours(self, probe: int, region: int, target: int, start: datetime, span: int) -> dict:
        """The merge, in Python, of the hourly rollups of a series over a block's hours."""
        merged: dict = {"samples": 0, "errors": 0, "outcomes": {}}
        hists = {column: Histogram() for column in JSON_COLUMNS[1:]}
        end = start + HOUR * span
        for hour, row in self.series.get((probe, region, target), []):
            if not start <= hour < end:
                continue
            merged["samples"] += row["samples"]
            merged["errors"] += row["errors"]
            for outcome, n in row["outcomes"].items():
                merged["outcomes"][outcome] = merged["outcomes"].get(outcome, 0) + n
            for column in hists:
                hists[column].merge(row[column])
        return merged | hists


def assert_blocks_merge_their_hours(found: dict[tuple, dict]) -> None:
    assert found, "no blocks: the comparison would prove nothing"
    hours = HourlyRollups()
    for (probe, region, target, span, start), row in found.items():
        want = hours.merge_of_hours(probe, region, target, start, span)
        assert row["samples"] == want["samples"] > 0
        assert row["errors"] == want["errors"]
        assert row["outcomes"] == want["outcomes"]
        for column in JSON_COLUMNS[1:]:
            assert Histogram.from_sparse(row[column]) == want[column], (span, start, column)


GROUPS = ("region_id", "target_id")


def read(since: datetime, until: datetime, probes) -> tuple[dict, bool]:
    """(the reading per region and target of the probes' targets, whether it read series blocks)."""
    merge_cache.clear()
    targets = sorted({p.target_id for p in probes})
    with CaptureQueriesContext(connection) as queries:
        found = read_window(since, until, group_by=GROUPS, target_ids=targets, metrics=HISTOGRAM_NAMES)
    return found, any("probes_seriesrollup" in q["sql"] for q in queries.captured_queries)


@contextmanager
def no_block_marks() -> Iterator[None]:
    """Every series block's mark gone meanwhile, so reads take hourly rollups only."""
    saved = list(SeriesBlockMark.objects.values("span_hours", "start", "built_at"))
    SeriesBlockMark.objects.all().delete()
    try:
        yield
    finally:
        SeriesBlockMark.objects.bulk_create(SeriesBlockMark(**m) for m in saved)


def read_without_blocks(since: datetime, until: datetime, probes) -> dict:
    with no_block_marks():
        found, used_blocks = read(since, until, probes)
    assert not used_blocks
    return found


def assert_same(got: dict, want: dict) -> None:
    assert want, "nothing read: the comparison would prove nothing"
    assert got.keys() == want.keys()
    for group, expected in want.items():
        assert (got[group].samples, got[group].errors) == (expected.samples, expected.errors), group
        for metric in HISTOGRAM_NAMES:
            assert got[group].hists[metric] == expected.hists[metric], (group, metric)


def store_late_row(probe, hour: datetime) -> tuple[int, int]:
    """A measurement 20 minutes into `hour` stored through ingest (which unmarks the hour); its (region, target)."""
    region = probe.regions.first()
    moment = hour + timedelta(minutes=20)
    payload = {
        "probe_id": probe.id,
        "target_id": probe.target_id,
        "region_id": region.id,
        "scheduled_for": moment.isoformat(),
        "worker": "late",
        "result": EngineResult(started_at=moment.isoformat(), ttft_ms=12_345.0).to_dict(),
    }
    assert len(store([payload])) == 1
    return region.id, probe.target_id
