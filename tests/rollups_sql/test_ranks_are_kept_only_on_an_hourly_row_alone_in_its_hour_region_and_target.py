"""HourlyRollup.ranks marks a row that regions.csv may write as a whole 1 h group: the builder keeps them only
on a row no other probe's row shares its (hour, region, target) with, and migration 0023 takes them off such
rows built before the rule."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.db import connection

from probes.models import HourlyRollup, Measurement
from probes.rollups import rebuild_range
from tests.factories import MeasurementFactory

pytestmark = pytest.mark.django_db

SHARED_RANKS = importlib.import_module("probes.migrations.0023_hourly_ranks_only_alone").SHARED_RANKS


@pytest.fixture
def hours(now, make_region, make_target, make_probe):
    lagos, oslo = make_region(slug="lagos"), make_region(slug="oslo")
    alpha, beta = make_target(name="alpha"), make_target(name="beta")
    first = make_probe(target=alpha, regions=[lagos, oslo])
    second = make_probe(target=alpha, regions=[lagos])  # shares (hour, lagos, alpha) with the first
    other = make_probe(target=beta, regions=[lagos])
    start = now.replace(minute=0) - timedelta(hours=3)
    rows = [
        MeasurementFactory.build(probe=probe, region=region, started_at=start + timedelta(hours=h, minutes=m))
        for probe, region in ((first, lagos), (first, oslo), (second, lagos), (other, lagos))
        for h in range(3)
        for m in (5, 25)
    ]
    # The second probe is silent in the last hour: there the first one is alone again.
    Measurement.objects.bulk_create(
        [r for r in rows if not (r.probe == second and r.started_at >= start + timedelta(hours=2))]
    )
    rebuild_range(start, start + timedelta(hours=3))
    return start, lagos, alpha


def ranked() -> dict[tuple, bool]:
    return {(r.hour, r.region_id, r.target_id, r.probe_id): r.ranks is not None for r in HourlyRollup.objects.all()}


def test_a_row_sharing_its_hour_region_and_target_with_another_probe_has_no_ranks(hours):
    start, lagos, alpha = hours
    flags = ranked()
    assert len(flags) == 3 * 3 + 2
    for (hour, region_id, target_id, _), has_ranks in flags.items():
        shared = region_id == lagos.id and target_id == alpha.id and hour < start + timedelta(hours=2)
        assert has_ranks is not shared, (hour, region_id, target_id)


def test_the_migration_takes_ranks_off_shared_rows_built_before_the_rule_and_keeps_the_others(hours):
    before = ranked()
    HourlyRollup.objects.update(ranks=[1, 2, 3])  # as the builder wrote them before: on every row
    with connection.cursor() as cur:
        cur.execute(SHARED_RANKS)
    assert ranked() == before
