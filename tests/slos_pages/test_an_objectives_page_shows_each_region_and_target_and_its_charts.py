"""/slos/<id>/ shows the objective's figures, a row per region and per region x target with the exact counts,
the budget in calls and the burn per window, says plainly that missed runs count as bad, whether silences are
excluded and from when counts are exact, and hands its two charts (burn-down and goodput, incidents shaded) to
the page as JSON; an objective with a mix shows each region's share."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import plotly.graph_objects as go
import pytest

from probes.readings.slos import BURN_WINDOWS
from tests.factories import IncidentFactory, ServiceLevelObjectiveFactory
from tests.slos_pages.conftest import element, make_known, shown, text, this_hour

pytestmark = pytest.mark.django_db
COUNTS = ("good", "degraded", "bad", "missed", "excluded")


def page_of(client, objective_id: int) -> str:
    page = client.get(f"/slos/{objective_id}/")
    assert page.status_code == 200
    return page.content.decode()


def figure(html: str, tag: str, marker: str, name: str) -> str:
    return text(element(element(html, tag, marker), "td", f'data-figure="{name}"'))


def test_each_region_and_target_shows_its_exact_counts_and_budget(signed_in, known):
    html = page_of(signed_in, known.objective.id)
    for (target, region), values in known.cells.items():
        row = re.search(rf'<tr data-region="{region.slug}" data-target="{target.id}">.*?</tr>', html, re.S).group(0)
        for name in COUNTS:
            assert text(element(row, "td", f'data-figure="{name}"')) == str(values[name]), (target, region, name)
        eligible = values["good"] + values["bad"]
        assert text(element(row, "td", 'data-figure="eligible"')) == str(eligible)
        assert text(element(row, "td", 'data-figure="attainment"')) == f"{shown(values['good'] / eligible * 100, 3)} %"
        assert text(element(row, "td", 'data-figure="budget_allowed"')) == f"{shown(0.01 * eligible, 1)}"
        assert text(element(row, "td", 'data-figure="budget_used"')) == f"{shown(values['bad'], 1)}"
        assert re.findall(r'data-window="([^"]+)"', element(row, "td", 'data-window="5m"')) == ["5m"]
    lima = known.regions[0]
    regions = element(html, "table", 'id="slo-regions"')
    row = re.search(rf'<tr data-region="{lima.slug}">.*?</tr>', regions, re.S).group(0)
    in_lima = [v for (t, r), v in known.cells.items() if r == lima]
    assert text(element(row, "td", 'data-figure="good"')) == str(sum(v["good"] for v in in_lima))
    assert text(element(row, "td", 'data-figure="bad"')) == str(sum(v["bad"] for v in in_lima))


def test_the_page_says_missed_runs_are_bad_whether_silences_are_excluded_and_since_when_counts_are_exact(
    signed_in, known
):
    html = page_of(signed_in, known.objective.id)
    rules = text(element(html, "p", 'id="slo-rules"'))
    assert "Missed runs count as bad." in rules
    assert "Calls in silences (maintenance) are excluded" in rules
    assert "Counts are exact since" in rules
    assert known.objective.exact_since.strftime("%Y-%m-%dT%H:%M:%SZ") in html
    known.objective.exclude_silences = False
    known.objective.save(update_fields=["exclude_silences"])
    assert "Silences are not excluded" in text(element(page_of(signed_in, known.objective.id), "p", 'id="slo-rules"'))


def test_an_objective_still_rebuilding_says_so_and_draws_no_chart(signed_in):
    objective = ServiceLevelObjectiveFactory()
    html = page_of(signed_in, objective.id)
    assert "Rebuilding: the counts are being recounted" in text(element(html, "p", 'id="slo-rules"'))
    assert 'id="slo-charts"' not in html


def test_the_charts_come_with_the_page_the_incidents_shaded(signed_in, known):
    incident = IncidentFactory(
        target=known.targets[0],
        regions=[known.regions[0]],
        started_at=this_hour() - timedelta(hours=3),
        opened_at=this_hour() - timedelta(hours=3),
    )
    html = page_of(signed_in, known.objective.id)
    charts = json.loads(re.search(r'<script id="slo-charts" type="application/json">(.*?)</script>', html, re.S)[1])
    burn_down = charts["burn_down"]
    line = next(t for t in burn_down["data"] if t.get("meta", {}).get("role") == "burn-down")
    # One point per hour with calls, the last the budget left over the window.
    assert len(line["y"]) == len(known.hours)
    good, bad = known.total("good"), known.total("bad")
    assert line["y"][-1] == pytest.approx((1 - (bad / (good + bad)) / 0.01) * 100)
    goodput = charts["goodput"]
    regions = {t["name"] for t in goodput["data"] if t.get("meta", {}).get("region")}
    assert regions == {r.slug for r in known.regions}
    for fig in (burn_down, goodput):
        assert f"incident-{incident.id}" in {s.get("name") for s in fig["layout"].get("shapes", [])}
        # The lines are built as plain dicts (latency.charts.figure_json); plotly's schema refuses what it does not
        # know, so a misnamed property fails here rather than in a browser that ignores it.
        go.Figure(fig)
    assert f'data-incident="{incident.id}"' in element(html, "section", 'id="slo-incidents"')
    assert "static/js/slo.js" in html and "vendor/plotly/plotly.min.js" in html


def test_an_objective_with_a_mix_shows_each_regions_share(signed_in):
    known = make_known(name="mixed", mix={"zz-lima": 3, "zz-oslo": 1})
    regions = element(page_of(signed_in, known.objective.id), "table", 'id="slo-regions"')
    assert "Share of the mix" in regions
    assert "75.0 %" in text(element(regions, "tr", 'data-region="zz-lima"'))
    assert "weighted by the mix" in page_of(signed_in, known.objective.id)
    assert [label for label, _ in BURN_WINDOWS] == re.findall(r"Burn (\w+)</th>", regions)
