"""/status/<slug>/badge/<target-id>.svg: a shields-style SVG (valid XML, a <title> naming the label and the value),
cached a minute with an ETag (a repeated request with it answers 304); its TTFT p95 is /api/table's for the same
target, region and window, its uptime the good share of the objectives' calls over the window, its status the
page's. A bad parameter is a 400 naming it; a target the page does not show, or a page the reader may not read,
a 404."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

from probes.models import StatusPage
from tests.factories import SLOHourCountFactory, TargetFactory

SVG = "{http://www.w3.org/2000/svg}"


def _title(response) -> str:
    root = ET.fromstring(response.content)
    assert root.tag == f"{SVG}svg"
    return root.find(f"{SVG}title").text


def test_the_ttft_badge_reads_what_the_api_reads(scene, client, django_user_model):
    now = datetime.now(UTC)
    scene.calls(now - timedelta(hours=3), now, good=200, bad=0)
    response = client.get(f"/status/acme/badge/{scene.target.id}.svg?metric=ttft_p95&region=zz-lagos&window=24h")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert response["Cache-Control"] == "max-age=60"
    label, value = _title(response).split(": ")
    assert label == "TTFT p95 24h Lagos"

    client.force_login(django_user_model.objects.create_user(username="api", password="x-long-password-271"))
    rows = client.get(f"/api/table?target={scene.target.id}&region=zz-lagos&window=24h&metric=ttft").json()["rows"]
    assert value == f"{rows[0]['p95']:.0f} ms"


def test_the_uptime_badge_is_the_good_share_of_the_windows_calls(scene, client):
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=2)
    SLOHourCountFactory(
        objective=scene.objective,
        target=scene.target,
        region=scene.regions[0],
        hour=hour,
        good=995,
        degraded=0,
        bad=5,
        missed=0,
        excluded=0,
        bad_minutes=0,
    )
    assert _title(client.get(f"/status/acme/badge/{scene.target.id}.svg?metric=uptime&window=7d")) == (
        "uptime 7d: 99.50 %"
    )
    # Two days back is outside the last 24 hours.
    assert _title(client.get(f"/status/acme/badge/{scene.target.id}.svg?metric=uptime&window=24h")) == "uptime 24h: –"


def test_the_status_badge_and_its_etag(scene, client):
    url = f"/status/acme/badge/{scene.target.id}.svg"
    response = client.get(url)
    assert _title(response) == "status: operational"
    again = client.get(url, HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    assert again["ETag"] == response["ETag"]


def test_bad_parameters_and_what_the_page_does_not_show(scene, client):
    base = f"/status/acme/badge/{scene.target.id}.svg"
    for query, name in (("metric=p99", "metric"), ("window=2h", "window"), ("region=zz-nowhere", "region")):
        response = client.get(f"{base}?{query}")
        assert response.status_code == 400 and response.content.decode().startswith(f"{name}: "), query
    assert client.get(f"/status/acme/badge/{TargetFactory().id}.svg").status_code == 404
    StatusPage.objects.filter(id=scene.page.id).update(public=False)
    assert client.get(base).status_code == 404


def test_a_regions_status_badge_reads_that_regions_calls_alone(scene, client):
    now = datetime.now(UTC)
    scene.calls(now - timedelta(hours=1), now, good=60, bad=60)  # all from the first region
    base = f"/status/acme/badge/{scene.target.id}.svg"
    assert _title(client.get(f"{base}?region=zz-lagos")) == "status Lagos: outage"
    assert _title(client.get(f"{base}?region=zz-oslo")) == "status Oslo: operational"
    assert _title(client.get(base)) == "status: outage"
