"""/export/real-users.csv: the issue's columns, one row per hour (or day, or the range) x place x target or
provider host and model, the pages' numbers, only rows of at least the minimum of calls, formula cells
neutralised, the same filters and permission as the other exports."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from probes.realusers.types import Place
from tests.export_support import close_async_thread_connections, download, header, rows, viewer  # noqa: F401  (autouse)
from tests.factories import IngestSourceFactory, TargetFactory
from tests.realusers_pages.support import LAGOS, LONDON, calls

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/real-users.csv"
T = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
RANGE = {"since": T.isoformat(), "until": (T + timedelta(hours=2)).isoformat()}
COLUMNS = [
    "bucket", "country", "city", "latitude", "longitude", "target", "host", "model", "samples",
    "ttft_p50_ms", "ttft_p95_ms", "total_p50_ms", "total_p95_ms",
]  # fmt: skip


@pytest.fixture
def world(db):
    target = TargetFactory(name="Gamma", url="https://api.example.com/v1/chat/completions", model="gpt-4o")
    source = IngestSourceFactory()
    calls(source.id, 6, T + timedelta(minutes=5), LAGOS, ttft_ms=800.0, total_ms=1500.0, errors=1)
    calls(source.id, 5, T + timedelta(hours=1, minutes=5), LAGOS, ttft_ms=1200.0)
    calls(source.id, 5, T + timedelta(minutes=5), LONDON, host="=cmd|' /C calc'!A0", model="@evil")
    calls(source.id, 4, T + timedelta(minutes=5), LONDON)  # under the minimum: never written
    return target


@pytest.fixture
def client(django_user_model):
    client = AsyncClient()
    client.force_login(viewer(django_user_model))
    return client


async def test_hourly_rows_have_the_issues_columns_and_the_pages_numbers(client, world):
    response, text = await download(client, URL, **RANGE)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="latency-real-users-1h_')
    assert header(text) == COLUMNS
    got = [(r["bucket"], r["city"], r["target"], r["host"], r["model"], r["samples"]) for r in rows(text)]
    assert got == [
        ("2026-11-20T12:00:00.000000Z", "London", "", "'=cmd|' /C calc'!A0", "'@evil", "5"),
        ("2026-11-20T12:00:00.000000Z", "Lagos", "Gamma", "", "gpt-4o", "6"),
        ("2026-11-20T13:00:00.000000Z", "Lagos", "Gamma", "", "gpt-4o", "5"),
    ]
    lagos = next(r for r in rows(text) if r["city"] == "Lagos" and r["bucket"].startswith("2026-11-20T12"))
    assert (lagos["country"], float(lagos["latitude"]), float(lagos["longitude"])) == ("NG", 6.45, 3.4)
    assert float(lagos["ttft_p50_ms"]) == pytest.approx(800, rel=0.01)
    assert float(lagos["total_p95_ms"]) == pytest.approx(1500, rel=0.01)


async def test_a_day_bucket_merges_the_hours_and_a_target_filter_keeps_its_rows(client, world):
    _, text = await download(client, URL, bucket="1d", target=str(world.id), **RANGE)
    [row] = rows(text)
    assert (row["bucket"], row["city"], row["target"], row["samples"]) == (
        "2026-11-20T00:00:00.000000Z",
        "Lagos",
        "Gamma",
        "11",
    )
    # 6 calls at 800 ms and 5 at 1200 ms: the merged median is 800 ms, never a mean of the two hours.
    assert float(row["ttft_p50_ms"]) == pytest.approx(800, rel=0.01)
    assert float(row["ttft_p95_ms"]) == pytest.approx(1200, rel=0.01)


async def test_five_minute_buckets_are_refused_since_real_users_are_kept_by_the_hour(client, world):
    response, _ = await download(client, URL, bucket="5m", **RANGE)
    assert response.status_code == 400
    assert response.json()["param"] == "bucket"


async def test_a_region_filter_is_not_one_of_its_parameters_and_changes_nothing(client, world):
    _, everything = await download(client, URL, **RANGE)
    _, with_region = await download(client, URL, region="nowhere", **RANGE)
    assert with_region == everything


@pytest.fixture
def plain(django_user_model):
    client = AsyncClient()
    client.force_login(viewer(django_user_model, "plain", permitted=False))
    return client


async def test_it_needs_sign_in_and_the_permission_to_view_measurements(plain, world):
    response = await AsyncClient().get(URL, RANGE)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    response = await plain.get(URL, RANGE)
    assert response.status_code == 403


async def test_a_place_without_coordinates_leaves_them_empty(client, world):
    source = await sync_to_async(IngestSourceFactory)()
    await sync_to_async(calls)(source.id, 5, T + timedelta(minutes=9), Place("KE", "", None, None, "address"))
    _, text = await download(client, URL, bucket="all", **RANGE)
    kenya = next(r for r in rows(text) if r["country"] == "KE")
    assert (kenya["bucket"], kenya["city"], kenya["latitude"], kenya["longitude"]) == (
        "2026-11-20T12:00:00.000000Z", "", "", "",
    )  # fmt: skip
