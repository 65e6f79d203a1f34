"""HourlyRollup.percentile_cells marks a row that regions.csv may write as a whole 1 h group: the builder keeps
them only on a row no other probe's row shares its (hour, region, target) with. Migration 0026 turns the bucket
indexes such rows kept before (ranks) into the cells the export wrote from them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from probes.histogram import bucket_value
from probes.models import HourlyRollup, Measurement
from probes.rollups import rebuild_range
from probes.significant import significant
from tests.factories import MeasurementFactory

BEFORE = [("probes", "0025_hour_cuts")]
AFTER = [("probes", "0026_hourly_percentile_cells")]


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


def cells_by_row() -> dict[tuple, str | None]:
    return {(r.hour, r.region_id, r.target_id, r.probe_id): r.percentile_cells for r in HourlyRollup.objects.all()}


@pytest.mark.django_db
def test_a_row_sharing_its_hour_region_and_target_with_another_probe_has_no_cells(hours):
    start, lagos, alpha = hours
    cells = cells_by_row()
    assert len(cells) == 3 * 3 + 2
    for (hour, region_id, target_id, _), text in cells.items():
        shared = region_id == lagos.id and target_id == alpha.id and hour < start + timedelta(hours=2)
        assert (text is None) is shared, (hour, region_id, target_id)
        if text is not None:
            # 5 metrics x 4 percentiles; the rows have TTFT, so its cells are not empty.
            assert text.count(",") == 19 and text.split(",")[0]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.mark.django_db(transaction=True)
def test_the_migration_writes_the_cells_of_the_ranks_kept_before(hours):
    try:
        migrate(BEFORE)
        ranks = {1: [0, 5, None, 995] + [None] * 16, 2: [300] * 20}
        with connection.cursor() as cur:
            cur.execute("SELECT id FROM probes_hourlyrollup ORDER BY id LIMIT 3")
            first, second, third = (row[0] for row in cur.fetchall())
            cur.execute("UPDATE probes_hourlyrollup SET ranks = %s WHERE id = %s", [ranks[1], first])
            cur.execute("UPDATE probes_hourlyrollup SET ranks = %s WHERE id = %s", [ranks[2], second])
            cur.execute("UPDATE probes_hourlyrollup SET ranks = NULL WHERE id = %s", [third])
        migrate(AFTER)
        cells = dict(HourlyRollup.objects.filter(id__in=[first, second, third]).values_list("id", "percentile_cells"))

        def text(indexes):
            return ",".join("" if k is None else significant(bucket_value(k)) for k in indexes)

        assert cells == {first: text(ranks[1]), second: text(ranks[2]), third: None}
        assert cells[first].startswith(f"{significant(bucket_value(0))},{significant(bucket_value(5))},,")
    finally:
        # Every app back at its latest migration, as the rest of the suite expects.
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
