"""What the series rollup tests share: the stored blocks of days and their
marks (the blocks inside a day have tests of their own), and the merge of the
daily rollups a block should hold."""

from __future__ import annotations

from datetime import datetime

from probes.histogram import Histogram
from probes.models import DailyRollup, SeriesBlockMark, SeriesRollup
from probes.rollups import HOUR
from probes.rollups.ladder import JSON_COLUMNS
from probes.rollups.periods import SERIES_GRAINS


def blocks() -> dict[tuple, dict]:
    fields = ["probe", "region", "target", "span_hours", "start", "samples", "errors", *JSON_COLUMNS]
    return {
        (r["probe"], r["region"], r["target"], r["span_hours"], r["start"]): r
        for r in SeriesRollup.objects.filter(span_hours__in=SERIES_GRAINS).values(*fields)
    }


def marks() -> set[tuple[int, datetime]]:
    return set(SeriesBlockMark.objects.filter(span_hours__in=SERIES_GRAINS).values_list("span_hours", "start"))


def merge_of_days(probe: int, region: int, target: int, start: datetime, span: int) -> dict:
    days = DailyRollup.objects.filter(
        probe=probe, region=region, target=target, day__gte=start, day__lt=start + HOUR * span
    )
    merged: dict = {"samples": 0, "errors": 0, "outcomes": {}}
    hists = {column: Histogram() for column in JSON_COLUMNS[1:]}
    for day in days:
        merged["samples"] += day.samples
        merged["errors"] += day.errors
        for outcome, n in day.outcomes.items():
            merged["outcomes"][outcome] = merged["outcomes"].get(outcome, 0) + n
        for column in hists:
            hists[column].merge(Histogram.from_sparse(getattr(day, column)))
    return merged | hists


def assert_blocks_merge_their_days(found: dict[tuple, dict]) -> None:
    assert found, "no blocks: the comparison would prove nothing"
    for (probe, region, target, span, start), row in found.items():
        want = merge_of_days(probe, region, target, start, span)
        assert row["samples"] == want["samples"] > 0
        assert row["errors"] == want["errors"]
        assert row["outcomes"] == want["outcomes"]
        for column in JSON_COLUMNS[1:]:
            assert Histogram.from_sparse(row[column]) == want[column], (span, start, column)
