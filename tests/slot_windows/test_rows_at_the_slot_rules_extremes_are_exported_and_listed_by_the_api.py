"""measurements.csv, regions.csv and the REST API's measurement list read a window's rows started as late or as
early as the slot rule allows at its first and last instants, and no row started outside it; a key-paged list
keeps every row started at a cursor's instant, however early before its slot it started."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import AsyncClient

from probes.models import Measurement
from tests.export_support import close_async_thread_connections, download, rows, viewer  # noqa: F401  (autouse)
from tests.factories import MeasurementFactory
from tests.slot_windows.support import SINCE, edge_rows, started_within

UNTIL = SINCE + timedelta(hours=3)
WINDOW = {"since": SINCE.isoformat(), "until": UNTIL.isoformat()}


@pytest.fixture
def world(make_region, make_probe):
    region = make_region(slug="lagos")
    probe = make_probe(regions=[region])
    edge_rows(probe, region, SINCE, UNTIL)
    return started_within(SINCE, UNTIL)


@pytest.fixture
def exporter(django_user_model):
    client = AsyncClient()
    client.force_login(viewer(django_user_model))
    return client


@pytest.mark.django_db(transaction=True)
async def test_measurements_csv_has_every_row_started_in_the_window(exporter, world):
    response, text = await download(exporter, "/export/measurements.csv", **WINDOW)
    assert response.status_code == 200
    assert sorted(float(r["ttft_ms"]) for r in rows(text)) == sorted(m.ttft_ms for m in world)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("bucket", ["5m", "1h"])
async def test_regions_csv_counts_every_row_started_in_the_window(exporter, world, bucket):
    response, text = await download(exporter, "/export/regions.csv", bucket=bucket, **WINDOW)
    assert response.status_code == 200
    assert sum(int(r["samples"]) for r in rows(text)) == len(world)


@pytest.mark.django_db
def test_the_api_lists_every_row_started_in_the_window_page_by_page(admin_client, world):
    url, seen = f"/api/v1/measurements/?page_size=2&since={SINCE.isoformat()}&until={UNTIL.isoformat()}", []
    while url:
        page = admin_client.get(url.replace("+00:00", "Z"))
        assert page.status_code == 200, page.content
        seen += [row["id"] for row in page.json()["results"]]
        url = page.json()["next"]
    assert sorted(seen) == sorted(m.id for m in world)


@pytest.mark.django_db
def test_a_cursor_keeps_the_rows_started_at_its_instant_however_early(admin_client, make_region, make_probe):
    region = make_region(slug="lagos")
    probe = make_probe(regions=[region])
    at = SINCE + timedelta(minutes=30)
    # One instant, three slots: as early as the rule allows (the lowest id: read last, after a cursor at that
    # instant), on time and an hour late.
    for slot in (at + timedelta(minutes=5), at, at - timedelta(hours=1)):
        MeasurementFactory(probe=probe, region=region, started_at=at, scheduled_for=slot)
    url, seen = f"/api/v1/measurements/?page_size=1&since={SINCE.isoformat()}", []
    while url:
        page = admin_client.get(url.replace("+00:00", "Z"))
        assert page.status_code == 200, page.content
        seen += [row["id"] for row in page.json()["results"]]
        url = page.json()["next"]
    assert seen == sorted(Measurement.objects.values_list("id", flat=True), reverse=True)
