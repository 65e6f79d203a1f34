"""/export/regions.csv: one row per bucket x region x target with samples,
errors and nearest-rank percentiles to 3 significant digits; 5m buckets the
exact values so rounded, from raw rows, 1h, 1d and all from rollups where
marked, all within 2% of the exact values over the raw rows, and the same
with or without rollups."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async

from probes.histogram import exact_percentile
from probes.models import HourlyRollup, Measurement
from probes.rollups import rebuild_range
from probes.significant import significant
from tests.export_support import T0, close_async_thread_connections, download, header, measurement, rows, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/regions.csv"
DAY0 = T0.replace(hour=0)
RANGE = {"since": DAY0.isoformat(), "until": (DAY0 + timedelta(days=1)).isoformat()}
METRICS = ("ttft", "ttfat", "ttfb", "connect", "total")
QS = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}
ISSUE_COLUMNS = [
    "bucket_start", "region", "region_city", "region_country", "target", "model", "samples", "errors",
    "error_rate", *(f"{m}_{p}_ms" for m in METRICS for p in QS),
]  # fmt: skip


@pytest.fixture
def day(make_region, make_target, make_probe):
    """One UTC day, a measurement every 4 minutes from two regions, log-normal
    latencies, one in ten a timeout without ttft; returns the rows."""
    rng = random.Random(7)
    lagos = make_region(slug="lagos", city="Lagos", country="NG")
    oslo = make_region(slug="oslo", city="Oslo", country="NO")
    target = make_target(name="Gamma", model="gamma-3")
    probe = make_probe(target=target, regions=[lagos, oslo])
    made = []
    for region, base in ((lagos, 300.0), (oslo, 120.0)):
        for i in range(360):
            failed = i % 10 == 3
            ttft = base * rng.lognormvariate(0, 0.4)
            made.append(
                measurement(
                    probe, region, DAY0 + timedelta(minutes=4 * i),
                    outcome="timeout" if failed else "ok",
                    ttft_ms=None if failed else ttft, ttfat_ms=None if failed else ttft * 1.1,
                    ttfb_ms=ttft * 0.8, connect_ms=base / 5 * rng.uniform(0.9, 1.3), total_ms=ttft * 3,
                )
            )  # fmt: skip
    Measurement.objects.bulk_create(made)
    return made


def exact(measurements, metric: str, q: float) -> float:
    values = [getattr(m, f"{metric}_ms") for m in measurements if getattr(m, f"{metric}_ms") is not None]
    return exact_percentile(values, q) if values else None


def groups(measurements, size: timedelta | None) -> dict[tuple, list]:
    out = defaultdict(list)
    for m in measurements:
        start = DAY0 if size is None else DAY0 + (m.started_at - DAY0) // size * size
        out[(start.strftime("%Y-%m-%dT%H:%M:%S.000000Z"), m.region.slug)].append(m)
    return out


def assert_matches(got: list[dict], measurements, size, tolerance: float) -> None:
    expected = groups(measurements, size)
    assert {(r["bucket_start"], r["region"]) for r in got} == set(expected)
    for r in got:
        ms = expected[(r["bucket_start"], r["region"])]
        assert int(r["samples"]) == len(ms)
        errors = sum(m.outcome != "ok" for m in ms)
        assert int(r["errors"]) == errors
        assert float(r["error_rate"]) == pytest.approx(errors / len(ms))
        for metric in METRICS:
            for label, q in QS.items():
                want = exact(ms, metric, q)
                if want is None:  # no value in the bucket: an empty cell
                    assert r[f"{metric}_{label}_ms"] == ""
                    continue
                if tolerance == 0:  # the exact value, to the file's 3 significant digits
                    assert r[f"{metric}_{label}_ms"] == significant(want), (metric, label)
                else:
                    assert float(r[f"{metric}_{label}_ms"]) == pytest.approx(want, rel=tolerance), (metric, label)


async def test_the_header_lists_the_issue_columns_in_order(client, day):
    for bucket in ("5m", "1h", "1d", "all"):
        response, text = await download(client, URL, bucket=bucket, **RANGE)
        assert response.status_code == 200
        assert header(text) == ISSUE_COLUMNS


async def test_5m_buckets_are_exact_nearest_rank_from_raw_rows(client, day):
    _, text = await download(client, URL, bucket="5m", **RANGE)
    got = rows(text)
    assert got[0]["region_city"] == "Lagos" and got[0]["target"] == "Gamma" and got[0]["model"] == "gamma-3"
    assert_matches(got, day, timedelta(minutes=5), tolerance=0)


async def test_1h_buckets_from_raw_rows_are_within_2_percent(client, day):
    got = rows((await download(client, URL, bucket="1h", **RANGE))[1])
    assert len(got) == 48
    assert_matches(got, day, timedelta(hours=1), tolerance=0.02)


async def test_1d_and_all_buckets_are_within_2_percent(client, day):
    for bucket, size in (("1d", timedelta(days=1)), ("all", None)):
        got = rows((await download(client, URL, bucket=bucket, **RANGE))[1])
        assert len(got) == 2
        assert_matches(got, day, size, tolerance=0.02)


async def test_rollup_backed_and_raw_backed_exports_agree(client, day):
    before = {b: rows((await download(client, URL, bucket=b, **RANGE))[1]) for b in ("1h", "1d", "all")}
    await sync_to_async(rebuild_range)(DAY0, DAY0 + timedelta(days=1))
    assert await HourlyRollup.objects.acount() == 48
    for bucket, size in (("1h", timedelta(hours=1)), ("1d", timedelta(days=1)), ("all", None)):
        after = rows((await download(client, URL, bucket=bucket, **RANGE))[1])
        assert_matches(after, day, size, tolerance=0.02)
        assert len(after) == len(before[bucket])
        for a, b in zip(before[bucket], after, strict=True):
            assert a["samples"] == b["samples"] and a["errors"] == b["errors"]
            for column in ISSUE_COLUMNS[9:]:
                if a[column] == b[column] == "":
                    continue
                assert float(b[column]) == pytest.approx(float(a[column]), rel=0.02), column


async def test_an_outcome_filter_reads_raw_rows_exactly(client, day):
    await sync_to_async(rebuild_range)(DAY0, DAY0 + timedelta(days=1))
    got = rows((await download(client, URL, bucket="1h", outcome="ok", **RANGE))[1])
    ok = [m for m in day if m.outcome == "ok"]
    assert all(r["errors"] == "0" for r in got)
    assert_matches(got, ok, timedelta(hours=1), tolerance=0)


async def test_the_filename_names_the_bucket(client, day):
    response, _ = await download(client, URL, bucket="1d", **RANGE)
    name = "latency-regions-1d_20260302T0000Z_20260303T0000Z.csv"
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
