"""The SQL builder's bucket index (width_bucket over the layout's edges) is
probes.histogram.bucket_index exactly: on every edge, one ulp either side of
it, and at the ends of the layout, where a rounding slip would move a sample
into the next bucket."""

from __future__ import annotations

import math

import pytest
from django.db import connection

from probes.histogram import _EDGES, MAX_VALUE, MIN_VALUE, bucket_index
from probes.rollups.build import _EDGE_PARAM

pytestmark = pytest.mark.django_db


def sql_bucket_indexes(values: list[float]) -> list[int]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT width_bucket(v, %s::float8[]) FROM unnest(%s::float8[]) WITH ORDINALITY AS u(v, i) ORDER BY i",
            [_EDGE_PARAM, values],
        )
        return [index for (index,) in cur.fetchall()]


def test_every_edge_and_its_neighbours_land_in_the_same_bucket_in_sql_and_python():
    values = [0.0, 5e-324, MIN_VALUE / 2, MAX_VALUE, MAX_VALUE * 10, 1e300, math.inf]
    for edge in _EDGES:
        values += [math.nextafter(edge, 0.0), edge, math.nextafter(edge, math.inf)]
    assert sql_bucket_indexes(values) == [bucket_index(v) for v in values]


def test_bucket_zero_holds_what_is_below_the_smallest_value_and_the_last_bucket_everything_from_its_edge_up():
    below, at, huge = math.nextafter(MIN_VALUE, 0.0), MIN_VALUE, 1e12
    assert sql_bucket_indexes([0.0, below, at, huge]) == [0, 0, 1, len(_EDGES) - 1]
