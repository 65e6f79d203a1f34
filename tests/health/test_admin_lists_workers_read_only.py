"""The admin lists every region worker (region, host, node name, release, status, last heartbeat,
runs in flight, clock offset flagged, key id), filtered by region and state; nobody adds or edits
one there: the heartbeats write them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from probes.models import Worker
from tests.factories import RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db

LIST = "/admin/probes/worker/"


@pytest.fixture
def fleet():
    lagos, lima = RegionFactory(name="Lagos"), RegionFactory(name="Lima")
    a = WorkerFactory(region=lagos, hostname="lagos-vm", key_id="aaaabbbbccccdddd", clock_offset_ms=1800.0)
    b = WorkerFactory(
        region=lima, hostname="lima-vm", state=Worker.STOPPED, last_seen=timezone.now() - timedelta(minutes=1)
    )
    return lagos, lima, a, b


def test_the_list_shows_each_worker_and_flags_a_clock_more_than_a_second_off(admin_client, fleet):
    html = admin_client.get(LIST).content.decode()
    for text in ("lagos-vm", "lima-vm", "aaaabbbbccccdddd", "Lagos", "Lima", "live", "stopped"):
        assert text in html
    assert 'class="field-clock_off"><img src="/static/admin/img/icon-yes.svg" alt="True">' in html


def test_the_list_filters_by_region_and_state(admin_client, fleet):
    lagos, _lima, _a, _b = fleet
    html = admin_client.get(f"{LIST}?region__id__exact={lagos.id}").content.decode()
    assert "lagos-vm" in html and "lima-vm" not in html
    html = admin_client.get(f"{LIST}?state__exact=stopped").content.decode()
    assert "lima-vm" in html and "lagos-vm" not in html


def test_nobody_adds_changes_or_deletes_a_worker_here(admin_client, fleet):
    _lagos, _lima, a, _b = fleet
    assert admin_client.get(f"{LIST}add/").status_code == 403
    page = admin_client.get(f"{LIST}{a.id}/change/")
    assert page.status_code == 200  # a view-only page for a superuser
    assert 'name="_save"' not in page.content.decode()
    assert admin_client.post(f"{LIST}{a.id}/change/", {"hostname": "forged"}).status_code == 403
    assert admin_client.get(f"{LIST}{a.id}/delete/").status_code == 403
    assert Worker.objects.get(id=a.id).hostname == "lagos-vm"
