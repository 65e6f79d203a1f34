"""Every rollup kind of the catalogue but the hourly one can be switched off for readers (LATENCY_ROLLUPS_OFF, how
bench/dashboard.py --without measures a kind's worth), and a reading without it gives exactly what it gives with
every kind: windows, time series and buckets fall back on the kinds left, and the switched-off kind's table is not
read."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from probes import readings
from probes.models import Target
from probes.readings.cache import merge_cache
from probes.readings.selection import Selection
from probes.readings.window import read_window
from probes.rollups import DAY, HOUR, floor_day, rebuild_range
from probes.rollups.catalogue import BY_NAME, SWITCHABLE
from tests.factories import RegionFactory
from tests.region_rollups.conftest import four_probes
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import assert_same
from tests.support import shared_rows

DAYS = 10


pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def filled(django_db_setup, django_db_blocker) -> Iterator[datetime]:
    """Ten whole days rolled up and the hours since, so a week's window holds complete days, blocks of days, whole
    hours at its ends and partial hours: written once for the module's tests, which only read them."""
    with shared_rows(django_db_blocker):
        now = datetime.now(UTC)
        first = floor_day(now) - DAYS * DAY
        hours = (now - first) // HOUR + 1
        fill(four_probes([RegionFactory() for _ in range(3)]), first, hours, per_hour=1)
        rebuild_range(first, first + HOUR * hours)
        yield first


def reads(since: datetime, until: datetime) -> tuple[dict, set[str]]:
    """Every kind of window read, nothing cached: (their results, the rollup tables their SQL named)."""
    merge_cache.clear()
    targets = sorted(Target.objects.values_list("id", flat=True))
    series_since = floor_day(until) - 7 * DAY
    with CaptureQueriesContext(connection) as queries:
        found = {
            "every target by region": read_window(
                since, until, group_by=("region_id",), target_ids=targets, every_target=True
            ),
            "per target and region": read_window(since, until, group_by=("region_id", "target_id"), target_ids=targets),
            **{
                f"series {window} {scope}": readings.series(
                    Selection(target_ids=ids, since=series_since, until=until, window=window, percentile=0.9)
                )
                for window in ("7d", "30d")
                for scope, ids in (("all", []), ("one", targets[:1]))
            },
        }
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    tables = {t for t in ("regionrollup", "seriesrollup") if f"probes_{t}" in sql}
    return found, tables


@pytest.mark.parametrize("name", SWITCHABLE)
def test_a_reading_without_one_kind_equals_the_reading_with_every_kind(filled, now, name):
    until = now - timedelta(minutes=7)
    since = until - 7 * DAY - timedelta(minutes=23)
    with_all, tables = reads(since, until)
    assert {"regionrollup", "seriesrollup"} <= tables, "every kind read: the test would prove nothing"
    with override_settings(LATENCY_ROLLUPS_OFF=(name,)):
        without, tables_without = reads(since, until)
    model = BY_NAME[name].model.lower()
    shared = [k for k in SWITCHABLE if k != name and BY_NAME[k].model == BY_NAME[name].model]
    if not shared:
        assert model not in tables_without
    for read in ("every target by region", "per target and region"):
        assert_same(without[read], with_all[read])
    for read in with_all:
        if read.startswith("series"):
            assert without[read] == with_all[read], read
            assert with_all[read], "an empty series would prove nothing"


def test_with_both_kinds_of_series_blocks_off_no_series_block_is_read(filled, now):
    until = now - timedelta(minutes=7)
    with override_settings(LATENCY_ROLLUPS_OFF=("series_days", "series_hours")):
        _, tables = reads(until - 7 * DAY, until)
    assert "seriesrollup" not in tables
