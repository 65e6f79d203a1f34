"""In headless Chromium whose time zone is Asia/Kolkata (UTC+05:30, no summer time): a stored measurement's start
shows in Kolkata time on its target page, the footer names the zone, the over-time chart's time axis, its hover
spans and its shading of an incident are in Kolkata time, as is the map's "no worker seen since" hover, and the
incident page shades the incident's own span from its begin to its end in Kolkata time. Ticking "Show times in
UTC" shows UTC everywhere without a reload, and after a reload it is still UTC; the CSV downloaded in either zone
holds UTC times."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, timedelta

import pytest

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
    pytest.mark.browser_timezone("Asia/Kolkata"),
]

PASSWORD = "what-time-is-it-in-kolkata-47"
KOLKATA = timedelta(hours=5, minutes=30)
# The heatmap as drawn (gd.data: the converted figure), and the server's own figure for the same view.
HEATMAP_JS = """() => { const gd = document.getElementById('timeseries');
  const h = (gd && gd.data) ? gd.data.find(t => t.type === 'heatmap') : null;
  return h ? {x: Array.from(h.x), spans: h.customdata.flat().map(c => c[0]).filter(Boolean),
              title: gd.layout.xaxis.title.text, hoverformat: gd.layout.xaxis.hoverformat,
              shapes: (gd.layout.shapes || []).map(s => ({name: s.name, x0: s.x0, x1: s.x1})),
              names: gd.data.filter(t => t.meta && t.meta.role === 'incident').map(t => t.name)} : null; }"""
SERVER_X_JS = """async (query) => { const r = await fetch('/api/timeseries?' + query, {credentials: 'same-origin'});
  const body = await r.json(); return body.figure.data.find(t => t.type === 'heatmap').x; }"""
OWN_SPAN_JS = """(name) => { const gd = document.getElementById('incident-timeseries');
  const s = (gd && gd.layout && gd.layout.shapes || []).find(s => s.name === name); return s ? [s.x0, s.x1] : null; }"""
DARK_HOVER_JS = """() => { const gd = document.getElementById('map');
  const t = (gd && gd.data || []).find(t => t.meta && t.meta.role === 'dark'); return t ? t.text.join(' ') : ''; }"""
VIEW = "window=24h&over_time=heatmap"


def wall(when: datetime, offset: timedelta) -> str:
    """A UTC instant as Plotly's date axis reads it, in the zone offset by `offset`."""
    return (when.astimezone(UTC) + offset).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def server_x(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


@pytest.fixture
def world(transactional_db):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    from probes.models import Region
    from tests.factories import (
        AlertRuleFactory,
        IncidentFactory,
        MeasurementFactory,
        ProbeFactory,
        RegionFactory,
        TargetFactory,
        WorkerFactory,
    )

    Region.objects.all().delete()
    lima = RegionFactory(slug="tz-lima", name="Lima", latitude=-12.0, longitude=-77.0)
    WorkerFactory(region=lima)
    target = TargetFactory(name="Zone target")
    # A dark region the target is probed from: its map hover says since when, a time the server writes in UTC.
    oslo = RegionFactory(slug="tz-oslo", name="Oslo", latitude=59.9, longitude=10.7)
    WorkerFactory(region=oslo, last_seen=datetime.now(UTC) - timedelta(hours=2, minutes=17))
    probe = ProbeFactory(target=target, regions=[lima, oslo])
    now = datetime.now(UTC).replace(microsecond=0)
    known = now - timedelta(hours=2, minutes=17, seconds=23)
    for minutes in (30, 95, 170, 250, 320):
        MeasurementFactory(probe=probe, region=lima, started_at=now - timedelta(minutes=minutes), ttft_ms=300.0)
    MeasurementFactory(probe=probe, region=lima, started_at=known, ttft_ms=321.0)
    incident = IncidentFactory(
        rule=AlertRuleFactory(name="TTFT p95 slow", target=target),
        target=target,
        regions=[lima],
        started_at=known - timedelta(minutes=20),
        opened_at=known - timedelta(minutes=10),
        resolved_at=known + timedelta(minutes=40),
    )
    user = get_user_model().objects.create_user("traveller", "t@example.com", PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="view_measurement", content_type__app_label="probes"))
    return {"target": target, "known": known, "incident": incident}


def known_time_text(page, known: datetime) -> str:
    iso = known.strftime("%Y-%m-%dT%H:%M:%SZ")
    return page.locator(f'#recent-measurements time[datetime="{iso}"]').text_content()


def heatmap(page, want_zone: str) -> dict:
    page.wait_for_function(
        f"(zone) => {{ const h = ({HEATMAP_JS})(); return !!h && h.title.includes(zone) && h.shapes.length > 0; }}",
        arg=want_zone,
    )
    return page.evaluate(HEATMAP_JS)


def download_csv(page) -> list[dict]:
    with page.expect_download() as info:
        page.click("#download-measurements")
    text = open(info.value.path(), encoding="utf-8").read()
    return list(csv.DictReader(io.StringIO(text)))


def test_times_show_in_the_browsers_zone_until_utc_is_chosen_and_the_csv_stays_utc(world, asgi_server, browser_page):
    page = browser_page
    origin = asgi_server.origin
    known, incident = world["known"], world["incident"]
    login(page, origin, "traveller", PASSWORD)

    # 1. The target page: the known row's start in Kolkata time, the footer naming the zone.
    page.goto(f"{origin}/targets/{world['target'].id}/")
    # Chromium's ICU may name the zone by its older alias.
    zone = page.evaluate("() => Intl.DateTimeFormat().resolvedOptions().timeZone")
    assert zone in ("Asia/Kolkata", "Asia/Calcutta")
    page.wait_for_function("(zone) => document.getElementById('time-zone-note').textContent.includes(zone)", arg=zone)
    assert page.inner_text("#time-zone-note") == f"Times in {zone} (UTC+05:30)."
    local = known + KOLKATA
    assert f"{local:%H:%M:%S}" in known_time_text(page, known)
    assert f"{known:%H:%M:%S}" not in known_time_text(page, known)
    snap(page, "target-kolkata")

    # 2. The overview's over-time chart: its edges, the hover's spans and the incident's shading in Kolkata time.
    page.goto(f"{origin}/?{VIEW}")
    drawn = heatmap(page, zone)
    utc_edges = [server_x(x) for x in page.evaluate(SERVER_X_JS, VIEW)]
    # The last edge is the window's end, "now" as each request saw it: the columns' starts are compared.
    assert drawn["x"][:-1] == [wall(x, KOLKATA) for x in utc_edges[:-1]]
    assert f"{zone} (UTC+05:30)" in drawn["title"] and zone in drawn["hoverformat"]
    assert drawn["spans"] and all(span.endswith(" UTC+05:30") for span in drawn["spans"])
    # The cell holding the known row: its span starts at its column's left edge, in Kolkata time.
    column = max(i for i, edge in enumerate(utc_edges[:-1]) if edge <= known)
    assert any(span.startswith(wall(utc_edges[column], KOLKATA)[:16]) for span in drawn["spans"])
    shade = next(s for s in drawn["shapes"] if s["name"] == f"incident-{incident.id}")
    assert (shade["x0"], shade["x1"]) == (wall(incident.started_at, KOLKATA), wall(incident.resolved_at, KOLKATA))
    assert drawn["names"] == ["Incident: TTFT p95 slow · Zone target"]
    page.wait_for_function(f"() => ({DARK_HOVER_JS})() !== ''")
    dark_hover = page.evaluate(DARK_HOVER_JS)
    assert "UTC+05:30" in dark_hover and not re.search(r"\d\d:\d\d UTC(?![+-])", dark_hover), dark_hover
    in_local = download_csv(page)
    snap(page, "overview-kolkata")

    # 3. The incident page: its own span shaded from its begin to its end, in Kolkata time.
    page.goto(f"{origin}/incidents/{incident.id}/")
    own = f"incident-{incident.id}"
    page.wait_for_function(f"() => ({OWN_SPAN_JS})('{own}') !== null")
    assert page.evaluate(OWN_SPAN_JS, own) == [wall(incident.started_at, KOLKATA), wall(incident.resolved_at, KOLKATA)]
    started = incident.started_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    shown = page.locator(f'#incident-started time[datetime="{started}"]').text_content()
    assert f"{incident.started_at + KOLKATA:%H:%M:%S}" in shown
    snap(page, "incident-kolkata")

    # 4. UTC on the toggle: the chart is drawn again in UTC without a reload, and stays UTC after one.
    page.goto(f"{origin}/?{VIEW}")
    heatmap(page, zone)
    toggle = page.get_by_label("Show times in UTC")
    toggle.check()
    assert page.inner_text("#time-zone-note") == "Times in UTC."
    drawn = heatmap(page, "time, UTC")
    assert drawn["x"][:-1] == [wall(x, timedelta(0)) for x in utc_edges[:-1]]
    assert all(span.endswith(" UTC") for span in drawn["spans"])
    assert re.search(r"\d\d:\d\d UTC(?![+-])", page.evaluate(DARK_HOVER_JS))
    page.reload()
    drawn = heatmap(page, "time, UTC")
    assert page.get_by_label("Show times in UTC").is_checked()
    assert page.inner_text("#time-zone-note") == "Times in UTC."
    shade = next(s for s in drawn["shapes"] if s["name"] == f"incident-{incident.id}")
    assert shade["x0"] == wall(incident.started_at, timedelta(0))
    in_utc = download_csv(page)
    snap(page, "overview-utc")
    page.goto(f"{origin}/targets/{world['target'].id}/")
    page.wait_for_function("() => document.getElementById('time-zone-note').textContent === 'Times in UTC.'")
    assert f"{known:%H:%M:%S}" in known_time_text(page, known)

    # 5. The CSV is UTC whichever zone the page shows: the same rows, the known one at its UTC instant.
    assert in_local == in_utc and len(in_utc) == 6
    assert f"{known:%Y-%m-%dT%H:%M:%S}.000000Z" in [row["measured_at"] for row in in_utc]
    assert all(row["measured_at"].endswith("Z") for row in in_utc)
    assert page.recorder.page_errors == [], page.recorder.page_errors
