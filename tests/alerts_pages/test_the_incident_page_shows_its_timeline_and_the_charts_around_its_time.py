"""An incident's page: its summary, scope, regions, phase, peak and baseline; the timeline in order with each
event named in words; and its charts, which ask /api/* for the rule's metric and percentile from the incident's
regions over its time (an hour before it began to 15 minutes after it ended), as the dashboard asks."""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

import pytest
from django.urls import reverse

from probes.models import IncidentEvent
from tests.factories import (
    AlertRuleFactory,
    IncidentEventFactory,
    IncidentFactory,
    NotificationChannelFactory,
    ProbeFactory,
    RegionFactory,
    TargetFactory,
    spread_measurements,
)

pytestmark = pytest.mark.django_db

STARTED = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
RESOLVED = datetime(2026, 11, 30, 9, 40, tzinfo=UTC)


def chart_query(html: str, element_id: str) -> tuple[str, dict[str, list[str]]]:
    tag = re.search(rf'<div id="{element_id}"[^>]*>', html).group(0)
    api = html_lib.unescape(re.search(r'data-chart-api="([^"]*)"', tag).group(1))
    query = html_lib.unescape(re.search(r'data-query="([^"]*)"', tag).group(1))
    return api, parse_qs(query)


@pytest.fixture
def resolved_incident():
    lagos, nairobi = RegionFactory(slug="ip-lagos", name="Lagos"), RegionFactory(slug="ip-nairobi", name="Nairobi")
    target = TargetFactory(name="gpt-eu")
    rule = AlertRuleFactory(name="TTFT p99 slow", metric="ttft", percentile="p99")
    incident = IncidentFactory(
        rule=rule,
        target=target,
        started_at=STARTED,
        opened_at=STARTED + timedelta(minutes=10),
        resolved_at=RESOLVED,
        scope="regional",
        measured_regions=15,
        regions=[lagos, nairobi],
        summary="TTFT p99 from Lagos and Nairobi to gpt-eu is 2.3x its 7-day baseline.",
        phase="server_wait",
        peak_value=1900.0,
        baseline_value=820.0,
    )
    channel = NotificationChannelFactory(name="ops-slack", url="json://127.0.0.1:9/secret-token-xyz")
    # Stored out of order: the page shows them by time.
    IncidentEventFactory(incident=incident, at=RESOLVED, kind=IncidentEvent.RESOLVED)
    IncidentEventFactory(incident=incident, at=STARTED + timedelta(minutes=10), kind=IncidentEvent.OPENED)
    IncidentEventFactory(
        incident=incident,
        at=STARTED + timedelta(minutes=11),
        kind=IncidentEvent.NOTIFICATION_FAILED,
        channel=channel,
        attempt=1,
        detail="connection refused",
    )
    IncidentEventFactory(
        incident=incident, at=STARTED + timedelta(minutes=15), kind=IncidentEvent.REGION_JOINED, region=nairobi
    )
    return incident


def test_the_page_says_what_happened_in_order(client, viewer, resolved_incident):
    response = client.get(reverse("incident", args=[resolved_incident.id]))
    assert response.status_code == 200
    html = response.content.decode()
    for text in ("TTFT p99 slow", "gpt-eu", "2.3x its 7-day baseline", "regional", "2 of 15 regions measured"):
        assert text in html, text
    assert "Lagos" in html and "Nairobi" in html and "server wait" in html
    assert "1900 ms" in html and "820 ms" in html
    assert "40\xa0minutes" in html  # how long it lasted
    timeline = html.split('id="timeline-table"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'data-kind="(\w+)"', timeline) == ["opened", "notification_failed", "region_joined", "resolved"]
    # Each kind in words, the channel by its name only: its URL holds a secret.
    assert "notification failed" in timeline and "region joined" in timeline
    assert "ops-slack" in timeline and "connection refused" in timeline
    assert "secret-token-xyz" not in html


def test_the_charts_ask_for_the_rules_metric_from_its_regions_around_its_time(client, viewer, resolved_incident):
    html = client.get(reverse("incident", args=[resolved_incident.id])).content.decode()
    api, query = chart_query(html, "incident-timeseries")
    assert api == reverse("api-timeseries")
    assert query == {
        "target": [str(resolved_incident.target_id)],
        "region": ["ip-lagos", "ip-nairobi"],
        "metric": ["ttft"],
        "percentile": ["p99"],
        "window": ["custom"],
        "since": ["2026-11-30T08:00:00Z"],
        "until": ["2026-11-30T09:55:00Z"],
    }
    api, phases = chart_query(html, "incident-phases")
    assert api == reverse("api-phases")
    assert phases["since"] == ["2026-11-30T09:00:00Z"] and phases["until"] == ["2026-11-30T09:40:00Z"]
    # The script loads from our static files; nothing inline.
    assert "js/incident.js" in html and "<script>" not in html


def test_the_api_draws_the_charts_from_those_parameters(client, viewer, resolved_incident):
    probe = ProbeFactory(target=resolved_incident.target, regions=list(resolved_incident.regions.all()))
    for n, region in enumerate(resolved_incident.regions.all()):
        spread_measurements(probe, region, STARTED - timedelta(minutes=30), RESOLVED, 40, seed=n, median=900.0)
    html = client.get(reverse("incident", args=[resolved_incident.id])).content.decode()
    for element in ("incident-timeseries", "incident-phases"):
        api, query = chart_query(html, element)
        body = client.get(api, {k: v for k, v in query.items()}).json()
        assert body.get("no_data", "") == "", (element, body)
        assert body["figure"]["data"], element


def test_an_error_rate_incident_shows_time_to_first_token(client, viewer):
    rule = AlertRuleFactory(metric="error_rate", percentile="", threshold_ms=None, threshold_percent=20.0)
    incident = IncidentFactory(rule=rule, peak_value=45.0, baseline_value=None)
    html = client.get(reverse("incident", args=[incident.id])).content.decode()
    _api, query = chart_query(html, "incident-timeseries")
    assert query["metric"] == ["ttft"] and query["percentile"] == ["p95"]
    assert "45.0 %" in html
    # Open: the charts run to now.
    assert "open for" in html


def test_an_unknown_incident_is_not_found(client, viewer):
    assert client.get(reverse("incident", args=[987654])).status_code == 404
