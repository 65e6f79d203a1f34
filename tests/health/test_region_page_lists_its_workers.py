"""A region's page lists its workers (host, release, status, last heartbeat, runs in flight, queue
depth, clock offset), says whether the region is live, stale or dark, and flags a clock more than a
second off with what it means: start times from that host are off by as much. (To users with
probes.view_worker: tests/web/test_public_mode_shows_region_status_only.py has what others see.)"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def region(settings, fleet_viewer):
    # Public, so the page is the public one; the workers are shown to users with probes.view_worker only.
    settings.LATENCY_PUBLIC_DASHBOARD = True
    return RegionFactory(slug="page-lagos", name="Lagos")


def page(client, region, **headers) -> str:
    response = client.get(f"/regions/{region.slug}/", **headers)
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_lists_each_worker_with_its_figures(client, region):
    WorkerFactory(region=region, hostname="vm-lagos-1", release="0.2.0", in_flight=4, queue_depth=11)
    WorkerFactory(region=region, hostname="vm-lagos-2", release="0.1.9", queue_depth=None)
    html = page(client, region)
    assert 'id="worker-list"' in html
    for text in ("vm-lagos-1", "vm-lagos-2", "0.2.0", "0.1.9", '<td class="num">4</td>', '<td class="num">11</td>'):
        assert text in html
    assert 'data-status="live"' in html
    assert "Live: a worker reported within the last 60 s." in html


def test_a_clock_more_than_a_second_off_is_flagged_with_what_it_means(client, region):
    WorkerFactory(region=region, hostname="drifting-host", clock_offset_ms=-2400.0)
    WorkerFactory(region=region, hostname="good-host", clock_offset_ms=950.0)
    html = page(client, region)
    assert (
        "The clock of drifting-host is off by -2400 ms from the central clock: start times measured on that host "
        "are off by as much." in html
    )
    assert "The clock of good-host" not in html
    assert html.count('class="flagged"') == 1


def test_a_dark_region_says_since_when_no_worker_was_seen(client, region):
    WorkerFactory(region=region, last_seen=timezone.now() - timedelta(hours=2))
    html = page(client, region)
    assert 'id="region-status" class="region-status status-dark"' in html
    assert "Dark: no worker seen since" in html


def test_a_region_without_any_worker_says_none_has_reported(client, region):
    html = page(client, region)
    assert "Dark: no worker has reported for this region yet." in html
    assert 'id="worker-list"' not in html


def test_a_stale_region_says_when_the_latest_heartbeat_came(client, region):
    WorkerFactory(region=region, last_seen=timezone.now() - timedelta(minutes=2))
    assert "Stale: the latest heartbeat came at" in page(client, region)


def test_the_worker_list_speaks_chinese(client, region):
    WorkerFactory(region=region, hostname="drifting-host", clock_offset_ms=3000.0)
    html = page(client, region, HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert "Workers" not in html and "The clock of" not in html
    assert "drifting-host" in html
