"""/api/timeseries shades the incidents whose span overlaps the window, of the shown targets and regions only:
a translucent rectangle over each span (cut at the window's edges; an open one runs to the window's end), and a
trace named after the rule and the target for the legend and the hover. Times are UTC, as Plotly reads them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from latency.charts.over_time import plotly_time
from tests.factories import AlertRuleFactory, IncidentFactory, MeasurementFactory

SINCE = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
UNTIL = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def world(viewer, make_region, make_target, make_probe):
    lagos = make_region(slug="sh-lagos", name="Lagos")
    paris = make_region(slug="sh-paris", name="Paris")
    alpha = make_target(name="Alpha")
    beta = make_target(name="Beta")
    for target in (alpha, beta):
        probe = make_probe(target=target, regions=[lagos, paris])
        for region in (lagos, paris):
            for hour in range(12):
                MeasurementFactory(probe=probe, region=region, started_at=SINCE + timedelta(hours=hour, minutes=20))
    rule = AlertRuleFactory(name="Slow TTFT", target=alpha)

    def incident(target, regions, start, end):
        return IncidentFactory(
            rule=rule, target=target, regions=regions, started_at=start, opened_at=start, resolved_at=end
        )

    return {
        "alpha": alpha,
        "lagos": lagos,
        "inside": incident(alpha, [lagos], SINCE + timedelta(hours=3), SINCE + timedelta(hours=4)),
        "from_before": incident(alpha, [lagos, paris], SINCE - timedelta(hours=2), SINCE + timedelta(hours=1)),
        "still_open": incident(alpha, [lagos], SINCE + timedelta(hours=10), None),
        "elsewhere": incident(alpha, [paris], SINCE + timedelta(hours=5), SINCE + timedelta(hours=6)),
        "other_target": incident(beta, [lagos], SINCE + timedelta(hours=5), SINCE + timedelta(hours=6)),
        "long_ago": incident(alpha, [lagos], SINCE - timedelta(days=2), SINCE - timedelta(days=1)),
    }


def figure(client, **params) -> dict:
    query = {"window": "custom", "since": SINCE.isoformat(), "until": UNTIL.isoformat(), **params}
    response = client.get("/api/timeseries", query)
    assert response.status_code == 200, response.content
    return response.json()["figure"]


def shaded(fig: dict) -> dict[str, tuple[str, str]]:
    return {s["name"]: (s["x0"], s["x1"]) for s in fig["layout"].get("shapes", []) if s["name"].startswith("incident-")}


@pytest.mark.django_db
@pytest.mark.parametrize("over_time", ["heatmap", "lines"])
def test_the_chart_shades_the_shown_targets_incidents_in_the_shown_regions(client, world, over_time):
    fig = figure(client, target=world["alpha"].id, region=world["lagos"].slug, over_time=over_time)
    expected = {
        f"incident-{world['from_before'].id}": (plotly_time(SINCE), plotly_time(SINCE + timedelta(hours=1))),
        f"incident-{world['inside'].id}": (
            plotly_time(SINCE + timedelta(hours=3)),
            plotly_time(SINCE + timedelta(hours=4)),
        ),
        f"incident-{world['still_open'].id}": (plotly_time(SINCE + timedelta(hours=10)), plotly_time(UNTIL)),
    }
    assert shaded(fig) == expected
    named = [t for t in fig["data"] if (t.get("meta") or {}).get("role") == "incident"]
    assert [t["meta"]["incident"] for t in named] == [
        world["from_before"].id,
        world["inside"].id,
        world["still_open"].id,
    ]
    assert {t["name"] for t in named} == {"Incident: Slow TTFT · Alpha"}
    assert all(t["yaxis"] == "y2" for t in named) and fig["layout"]["yaxis2"]["visible"] is False


@pytest.mark.django_db
def test_every_target_and_region_shows_every_overlapping_incident(client, world):
    fig = figure(client, over_time="heatmap")
    ids = {int(name.removeprefix("incident-")) for name in shaded(fig)}
    assert ids == {world[k].id for k in ("inside", "from_before", "still_open", "elsewhere", "other_target")}


@pytest.mark.django_db
def test_hours_between_the_incidents_have_no_shading_and_no_incident_in_the_legend(client, world):
    between = {"since": (SINCE + timedelta(hours=6)).isoformat(), "until": (SINCE + timedelta(hours=9)).isoformat()}
    fig = figure(client, target=world["alpha"].id, region=world["lagos"].slug, **between)
    assert fig["data"] and shaded(fig) == {}
    assert not [t for t in fig["data"] if (t.get("meta") or {}).get("role") == "incident"]
