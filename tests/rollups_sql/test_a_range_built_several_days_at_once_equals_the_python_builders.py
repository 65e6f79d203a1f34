"""rebuild_range with workers builds days side by side on connections of
their own: the rollups and marks are those of one connection building day
after day."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from devtools.rollup_reference import reference_rollups, stored_rollups
from probes.models import RollupHour
from probes.rollups import DAY, HOUR, floor_day, rebuild_range
from tests.rollups_sql.test_hourly_rollups_built_in_sql_equal_the_python_builders import fill

pytestmark = pytest.mark.django_db(transaction=True)


def test_three_days_built_two_at_a_time_equal_the_python_builders(make_probe, make_region):
    regions = [make_region(), make_region()]
    probes = [make_probe(regions=regions)]
    first = floor_day(datetime.now(UTC)) - 5 * DAY
    hours = [first + d * DAY + h * HOUR for d in range(3) for h in (0, 11, 23)]
    fill(probes, regions, hours, random.Random(3), per_hour=12)

    expected = reference_rollups(first, first + 3 * DAY)
    assert rebuild_range(first, first + 3 * DAY, workers=2) == (72, len(expected))

    assert stored_rollups(first, first + 3 * DAY) == expected
    assert RollupHour.objects.filter(hour__gte=first, hour__lt=first + 3 * DAY).count() == 72
