"""The marker of open incidents: the overview shows every open one, a target's page those of that target, a
region's page those whose regions include it; resolved incidents are never marked, the header counts the open
ones and links to the incidents page, and a visitor who is not signed in (public dashboard) sees none of it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests.factories import AlertRuleFactory, IncidentFactory, ProbeFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


def marked(html: str) -> set[int]:
    if 'id="incident-marker"' not in html:
        return set()
    marker = html.split('id="incident-marker"', 1)[1].split("</div>", 1)[0]
    return {int(n) for n in re.findall(r'data-incident="(\d+)"', marker)}


@pytest.fixture
def world():
    lagos, london = RegionFactory(slug="mk-lagos", name="Lagos"), RegionFactory(slug="mk-london", name="London")
    eu, us = TargetFactory(name="gpt-eu"), TargetFactory(name="gpt-us")
    for target in (eu, us):
        ProbeFactory(target=target, regions=[lagos, london])  # the overview draws charts, not its "no probes" page
    rule = AlertRuleFactory()
    now = datetime.now(UTC)
    return {
        "lagos": lagos,
        "london": london,
        "eu": eu,
        "us": us,
        "eu_lagos": IncidentFactory(rule=rule, target=eu, regions=[lagos]),
        "us_london": IncidentFactory(rule=rule, target=us, regions=[london]),
        "resolved": IncidentFactory(
            rule=AlertRuleFactory(), target=eu, regions=[lagos, london], resolved_at=now - timedelta(minutes=1)
        ),
    }


def test_each_page_marks_the_open_incidents_that_concern_it(client, viewer, world):
    ids = {name: world[name].id for name in ("eu_lagos", "us_london")}
    assert marked(client.get(reverse("overview")).content.decode()) == set(ids.values())
    assert marked(client.get(reverse("target", args=[world["eu"].id])).content.decode()) == {ids["eu_lagos"]}
    assert marked(client.get(reverse("target", args=[world["us"].id])).content.decode()) == {ids["us_london"]}
    assert marked(client.get(reverse("region", args=["mk-lagos"])).content.decode()) == {ids["eu_lagos"]}
    assert marked(client.get(reverse("region", args=["mk-london"])).content.decode()) == {ids["us_london"]}
    html = client.get(reverse("overview")).content.decode()
    assert "2 open incidents" in html
    assert f'href="{reverse("incident", args=[ids["eu_lagos"]])}"' in html


def test_a_page_with_nothing_open_has_no_marker(client, viewer, world):
    quiet = TargetFactory(name="quiet")
    html = client.get(reverse("target", args=[quiet.id])).content.decode()
    assert 'id="incident-marker"' not in html


def test_the_header_counts_the_open_incidents(client, viewer, world):
    html = client.get(reverse("target", args=[world["eu"].id])).content.decode()
    nav = html.split('id="nav-incidents"', 1)[1].split("</a>", 1)[0]
    assert ">2</span>" in nav and 'title="2 open incidents"' in nav


def test_a_visitor_not_signed_in_sees_no_incident_on_a_public_dashboard(client, settings, world):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    for url in (reverse("overview"), reverse("target", args=[world["eu"].id]), reverse("region", args=["mk-lagos"])):
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert 'id="incident-marker"' not in html and 'id="nav-incidents"' not in html, url
        assert 'id="silences"' not in html, url
