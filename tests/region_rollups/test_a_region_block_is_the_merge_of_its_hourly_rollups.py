"""Every region rollup block holds the merge of the hourly rollups of its
region and hours, whichever grain it was built from, after a rebuild and
after the migration's backfill."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime
from types import SimpleNamespace

from django.db import connection

from probes.histogram import Histogram
from probes.models import HourlyRollup, RegionRollup
from probes.rollups import DAY, HOUR, rebuild_range
from probes.rollups.block_merge import JSON_COLUMNS
from probes.rollups.periods import GRAINS, block_start
from tests.jsonb_histograms import histograms_as_jsonb
from tests.region_rollups.rows import fill

backfill_migration = importlib.import_module("probes.migrations.0020_region_rollups")
WEEK = 7 * DAY


def blocks() -> dict[tuple, dict]:
    fields = ["region", "span_hours", "start", "samples", "errors", "sample_seconds", *JSON_COLUMNS]
    return {(r["region"], r["span_hours"], r["start"]): r for r in RegionRollup.objects.values(*fields)}


def expected(region: int, start: datetime, span: int) -> dict:
    rows = list(HourlyRollup.objects.filter(region=region, hour__gte=start, hour__lt=start + HOUR * span))
    merged: dict = {
        "samples": sum(r.samples for r in rows),
        "errors": sum(r.errors for r in rows),
        "sample_seconds": sum(r.samples * (r.hour.timestamp() + 1800) for r in rows),
        "outcomes": {},
    }
    for r in rows:
        for outcome, n in r.outcomes.items():
            merged["outcomes"][outcome] = merged["outcomes"].get(outcome, 0) + n
    for column in JSON_COLUMNS[1:]:
        merged[column] = Histogram.merged(Histogram.from_sparse(getattr(r, column)) for r in rows)
    return merged


def assert_merges(found: dict[tuple, dict]) -> None:
    assert {span for _, span, _ in found} == set(GRAINS)
    for (region, span, start), row in found.items():
        want = expected(region, start, span)
        assert row["samples"] == want["samples"] > 0
        assert row["errors"] == want["errors"]
        assert row["sample_seconds"] == want["sample_seconds"]
        assert row["outcomes"] == want["outcomes"]
        for column in JSON_COLUMNS[1:]:
            assert Histogram.from_sparse(row[column]) == want[column], (span, start, column)
    # And no block is missing: every hourly row's region has one per grain.
    for region, hour in HourlyRollup.objects.values_list("region", "hour").distinct():
        for grain in GRAINS:
            assert (region, grain, block_start(hour, HOUR * grain)) in found


def test_every_block_built_with_its_hours_is_the_merge_of_their_hourly_rollups(probes, regions):
    week = block_start(datetime.now(UTC) - 2 * DAY, WEEK) - WEEK
    fill(probes, week - 5 * HOUR, 8 * 24)
    rebuild_range(week - DAY, week + WEEK + DAY)
    assert_merges(blocks())


def test_the_migration_backfill_builds_the_same_blocks_as_rebuilding(probes, regions):
    week = block_start(datetime.now(UTC) - 2 * DAY, WEEK) - WEEK
    fill(probes, week + 2 * DAY - 3 * HOUR, 30, per_hour=3)
    rebuild_range(week + DAY, week + 4 * DAY)
    rebuilt = blocks()
    RegionRollup.objects.all().delete()
    # At the schema it was written for, then converted as an installation's rows are.
    with histograms_as_jsonb():
        backfill_migration.backfill(None, SimpleNamespace(connection=connection))
    assert blocks() == rebuilt
