"""/slos/ lists every objective with its attainment against the objective, its error budget bar (overspent said
in words), the burn rate over the six windows, its status as a word, the window and from when counts are exact;
an objective still rebuilding says so. The navigation links to it."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from probes.readings.slos import BURN_WINDOWS
from tests.factories import ServiceLevelObjectiveFactory, SLOHourCountFactory
from tests.slos_pages.conftest import attribute, counted, element, shown, text, this_hour

pytestmark = pytest.mark.django_db


def row_of(client, objective_id: int) -> str:
    page = client.get("/slos/")
    assert page.status_code == 200
    return element(page.content.decode(), "tr", f'data-slo="{objective_id}"')


def test_an_overspent_objective_shows_its_attainment_and_says_its_budget_is_spent(signed_in, known):
    good, bad = known.total("good"), known.total("bad")
    row = row_of(signed_in, known.objective.id)
    assert f"{shown(good / (good + bad) * 100, 3)} % of 99 %" in text(row)
    overspent_by = ((bad / (good + bad)) / 0.01 - 1) * 100
    assert f"overspent by {shown(overspent_by, 1)} %" in text(row)
    assert 'data-status="exhausted"' in row
    assert "budget exhausted" in text(element(row, "span", "slo-status"))
    assert attribute(row, "meter", "value") == "0.0000"
    assert re.findall(r'<li class="burn[^"]*" data-window="([^"]+)"', row) == [label for label, _ in BURN_WINDOWS]
    assert "rolling 30 days" in text(row)


def test_an_objective_within_budget_shows_what_is_left_and_no_exhaustion_when_not_burning(signed_in):
    objective = counted(ServiceLevelObjectiveFactory(objective_percent=99.0))
    good, bad = 1000, 1
    SLOHourCountFactory(objective=objective, hour=this_hour() - timedelta(days=5), good=good, degraded=0, bad=bad)
    row = row_of(signed_in, objective.id)
    left = (1 - (bad / (good + bad)) / 0.01) * 100
    assert 'data-status="ok"' in row
    assert f"{shown(left, 1)} % left" in text(row)
    assert float(attribute(row, "meter", "value")) == pytest.approx(left / 100, abs=1e-4)
    # Nothing in the last 24 hours: no rate to project from.
    assert "not burning" in text(element(row, "td", 'class="exhaustion"'))


def test_a_burning_objective_projects_when_its_budget_runs_out(signed_in):
    objective = counted(ServiceLevelObjectiveFactory(objective_percent=90.0))
    SLOHourCountFactory(objective=objective, hour=this_hour() - timedelta(hours=2), good=99, degraded=0, bad=1)
    exhaustion = element(row_of(signed_in, objective.id), "td", 'class="exhaustion"')
    assert attribute(exhaustion, "time", "datetime").endswith("Z")


def test_an_objective_not_yet_counted_says_it_is_rebuilding(signed_in):
    objective = ServiceLevelObjectiveFactory()
    row = row_of(signed_in, objective.id)
    assert 'data-status="rebuilding"' in row
    assert "rebuilding" in text(row)


def test_the_site_navigation_links_to_the_objectives(signed_in):
    nav = element(signed_in.get("/").content.decode(), "a", 'id="nav-slos"')
    assert 'href="/slos/"' in nav and text(nav) == "Objectives"
