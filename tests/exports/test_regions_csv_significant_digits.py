"""regions.csv writes percentiles to 3 significant digits, what the merged
histograms resolve (2% buckets, midpoint within 1%), by one rule that the
COPY path (SQL) and the rollup path (Python) both apply to the same bytes."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from psycopg import sql

from latency.forms import export_filters
from probes.exports.regions import significant_sql, uses_raw_rows
from probes.models import Measurement
from probes.significant import significant
from tests.export_support import T0, close_async_thread_connections, download, measurement, rows, viewer  # noqa: F401  (autouse)

# Carries, powers of ten, ties, tiny and huge values, and floats whose
# shortest repr differs from their 15-digit form.
EDGES = [
    312.48, 0.012345, 1234.5, 99.96, 99.94, 1000.0, 999.95, 999.949, 100.0, 10.0, 1.0, 0.5, 0.1 + 0.2,
    62.5, 2.675, 1.005, 0.00005, 3599999.0, 123456789.0, 0.0,
]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "text"),
    [(312.48, "312"), (0.012345, "0.0123"), (1234.5, "1230"), (99.96, "100.0"), (2.675, "2.68"), (0.0, "0")],
)
def test_a_percentile_is_written_to_three_significant_digits(value, text):
    assert significant(value) == text


def test_a_missing_percentile_stays_an_empty_cell():
    assert significant(None) is None


@pytest.mark.django_db
def test_postgresql_rounds_every_value_to_the_same_text_as_python():
    with connection.cursor() as cursor:
        for value in EDGES:
            expr = significant_sql(sql.SQL("{}::float8").format(sql.Literal(value)))
            # As text, the way COPY writes it into the file.
            cursor.execute(sql.SQL("SELECT ({})::text").format(expr).as_string(cursor.cursor.connection))
            [got] = cursor.fetchone()
            assert got == significant(value), value


@pytest.fixture
def untidy(make_region, make_target, make_probe):
    """Two hours of values with many digits each."""
    region = make_region(slug="digits", city="Quito", country="EC")
    probe = make_probe(target=make_target(name="Digits"), regions=[region])
    Measurement.objects.bulk_create(
        measurement(
            probe, region, T0 + timedelta(minutes=3 * i),
            ttft_ms=123.456789 + i * 7.77777, ttfat_ms=1234.56789 + i, ttfb_ms=0.0123456 * (i + 1),
            connect_ms=98.7654321, total_ms=45678.9123 + i,
        )
        for i in range(40)
    )  # fmt: skip


@pytest.mark.django_db(transaction=True)
async def test_no_percentile_cell_of_either_path_carries_more_than_three_significant_digits(client, untidy):
    from probes.rollups import rebuild_range

    # Longer than the 6 h read raw, so the "all" bucket is read from rollups.
    until = T0 + timedelta(hours=8)
    window = {"since": T0.isoformat(), "until": until.isoformat()}
    await sync_to_async(rebuild_range)(T0, until)
    assert not uses_raw_rows(export_filters({"bucket": "all", **window}, until))
    for bucket in ("5m", "all"):  # the raw COPY path, then the rollup path
        got = rows((await download(client, "/export/regions.csv", bucket=bucket, **window))[1])
        cells = [v for r in got for k, v in r.items() if re.fullmatch(r"\w+_p\d\d_ms", k) and v]
        assert cells, bucket
        for cell in cells:
            digits = cell.replace(".", "").lstrip("0")
            assert len(digits) <= 3 or set(digits[3:]) == {"0"}, (bucket, cell)
