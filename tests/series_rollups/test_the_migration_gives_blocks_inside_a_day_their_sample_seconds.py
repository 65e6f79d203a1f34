"""Migration 0028 gives the series blocks inside a day built before it their sample_seconds, summed from their hourly
rollups as the rollup now writes them; a block whose hourly rollups are gone keeps none and loses its mark, so no
time series reads it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from probes.models import HourlyRollup, SeriesBlockMark, SeriesRollup
from probes.rollups import DAY, floor_day, rebuild_range
from probes.rollups.periods import SERIES_HOUR_GRAINS
from tests.region_rollups.rows import fill

BEFORE = [("probes", "0027_block_histograms_stay_in_their_rows")]
AFTER = [("probes", "0028_series_hour_blocks_sample_seconds")]


def migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def sample_seconds() -> dict[tuple, float | None]:
    rows = SeriesRollup.objects.filter(span_hours__in=SERIES_HOUR_GRAINS)
    return {
        (r[0], r[1], r[2], r[3]): r[4]
        for r in rows.values_list("probe", "region", "span_hours", "start", "sample_seconds")
    }


def marks() -> set[tuple[int, datetime]]:
    return set(SeriesBlockMark.objects.filter(span_hours__in=SERIES_HOUR_GRAINS).values_list("span_hours", "start"))


@pytest.mark.django_db(transaction=True)
def test_the_migration_sums_each_blocks_hours_and_unmarks_a_block_without_them(probes, regions):
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, day, 48, per_hour=2)
    rebuild_range(day, day + 2 * DAY)
    written, marked = sample_seconds(), marks()
    assert written and all(seconds for seconds in written.values())
    try:
        migrate(BEFORE)
        # The first day's hourly rollups gone (as the rollup retention takes them) before the migration runs.
        HourlyRollup.objects.filter(hour__lt=day + DAY).delete()
        migrate(AFTER)
        found = sample_seconds()
        assert found.keys() == written.keys()
        for key, seconds in written.items():
            assert found[key] == (seconds if key[3] >= day + DAY else None), key
        assert marks() == {(span, start) for span, start in marked if start >= day + DAY}
    finally:
        # Every app back at its latest migration, as the rest of the suite expects.
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
