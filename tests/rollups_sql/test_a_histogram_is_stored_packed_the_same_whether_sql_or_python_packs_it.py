"""A rollup histogram has one stored form (probes.packed): what SQL packs (the rollup statements) is byte for byte
what Python packs (the ORM, the reference builder), SQL and Python read it back as the same counts, the ORM reads
and writes it as Histogram.to_sparse's dict, a count one entry cannot hold is an error rather than a wrong count,
and migration 0024 converts an installation's jsonb histograms without losing a count."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.db import DataError, connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from probes.histogram import BUCKETS, Histogram
from probes.models import HourlyRollup
from probes.packed import MAX_COUNT, entries_sql, pack, pack_agg, sparse, unpack
from tests.factories import HourlyRollupFactory
from tests.jsonb_histograms import histograms_as_jsonb

pytestmark = pytest.mark.django_db
counts = st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(1, MAX_COUNT), max_size=80)


def packed_in_sql(buckets: dict[int, int]) -> bytes:
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {pack_agg('k', 'n')} FROM unnest(%s::int[], %s::int8[]) AS t(k, n)",
            [list(buckets), list(buckets.values())],
        )
        return bytes(cur.fetchone()[0])


def expanded_in_sql(data: bytes) -> dict[int, int]:
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT e.bucket, e.n FROM (SELECT %s::bytea AS h) AS x CROSS JOIN LATERAL {entries_sql('x.h')} e", [data]
        )
        return dict(cur.fetchall())


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=40)
@given(counts)
def test_sql_packs_what_python_packs_and_both_read_it_back(buckets: dict[int, int]) -> None:
    data = packed_in_sql(buckets)
    assert data == pack(buckets)
    assert expanded_in_sql(data) == buckets
    assert sparse(data) == Histogram(buckets).to_sparse()
    indexes, found = unpack(data)
    assert dict(zip(indexes.tolist(), found.tolist(), strict=True)) == buckets


def test_the_empty_histogram_is_no_bytes_either_way() -> None:
    assert packed_in_sql({}) == pack({}) == b""
    assert expanded_in_sql(b"") == {}
    assert sparse(b"") == {}


def test_a_count_no_entry_can_hold_is_refused_in_sql_and_in_python() -> None:
    with pytest.raises(ValueError, match="counts in"):
        pack({5: MAX_COUNT + 1})
    with pytest.raises(ValueError, match="bucket indexes in"):
        pack({-1: 3})
    with pytest.raises(DataError, match="out of range"), transaction.atomic():
        packed_in_sql({5: MAX_COUNT + 1})


def test_the_orm_writes_and_reads_the_sparse_dict() -> None:
    ttft = Histogram({3: 2, 700: 5, BUCKETS - 1: MAX_COUNT})
    rollup = HourlyRollupFactory(ttft_hist=ttft.to_sparse())
    stored = HourlyRollup.objects.get(pk=rollup.pk)
    assert stored.ttft_hist == ttft.to_sparse()
    assert list(stored.ttft_hist) == ["3", "700", str(BUCKETS - 1)]
    assert stored.total_hist == {} and stored.tokens_per_s_hist == {}
    with connection.cursor() as cur:
        cur.execute(f"SELECT ttft_hist, total_hist FROM {HourlyRollup._meta.db_table} WHERE id = %s", [rollup.pk])
        assert tuple(map(bytes, cur.fetchone())) == (pack(ttft.to_sparse()), b"")


def test_the_migration_converts_jsonb_histograms_and_back_without_losing_a_count(make_probe) -> None:
    probe = make_probe()
    hists = [Histogram({i: i + 1, 3 * i + 9: MAX_COUNT - i}) for i in range(6)]
    for h, hist in enumerate(hists):
        HourlyRollupFactory(
            probe=probe,
            hour=datetime(2026, 3, 1, h, tzinfo=UTC),
            ttft_hist=hist.to_sparse(),
            tokens_per_s_hist=Histogram({h: 1}).to_sparse(),
        )
    with histograms_as_jsonb(), connection.cursor() as cur:
        cur.execute(f"SELECT ttft_hist::text, tokens_per_s_hist::text FROM {HourlyRollup._meta.db_table} ORDER BY hour")
        as_jsonb = cur.fetchall()
        # The jsonb column's default is back with it, for SQL of its time that leaves the column out.
        cur.execute(
            f"INSERT INTO {HourlyRollup._meta.db_table} (probe_id, target_id, region_id, hour, samples, errors, "
            "outcomes, ttft_hist, ttfat_hist, ttfb_hist, connect_hist, tls_hist, total_hist, dns_hist, updated_at) "
            "SELECT probe_id, target_id, region_id, hour + interval '1 day', 0, 0, '{}', '{}', '{}', '{}', '{}', "
            f"'{{}}', '{{}}', '{{}}', now() FROM {HourlyRollup._meta.db_table} WHERE hour = %s",
            [datetime(2026, 3, 1, 0, tzinfo=UTC)],
        )

    assert [(json.loads(t), json.loads(p)) for t, p in as_jsonb] == [
        (hist.to_sparse(), Histogram({h: 1}).to_sparse()) for h, hist in enumerate(hists)
    ]
    rows = list(HourlyRollup.objects.order_by("hour").values_list("ttft_hist", "tokens_per_s_hist"))
    assert rows == [(hist.to_sparse(), Histogram({h: 1}).to_sparse()) for h, hist in enumerate(hists)] + [({}, {})]


def test_a_histogram_postgres_keeps_compressed_expands_to_the_same_counts() -> None:
    # A wide region block is stored compressed; expanding it reads the value decompressed once.
    buckets = {i: 1 + i % 7 for i in range(BUCKETS)}
    with connection.cursor() as cur:
        cur.execute("CREATE TEMP TABLE wide (h bytea)")
        cur.execute("INSERT INTO wide VALUES (%s)", [pack(buckets)])
        cur.execute("SELECT pg_column_size(h) < length(h) FROM wide")
        assert cur.fetchone() == (True,)
        cur.execute(f"SELECT e.bucket, e.n FROM wide w CROSS JOIN LATERAL {entries_sql('w.h')} e")
        assert dict(cur.fetchall()) == buckets
