"""Two very different targets in view (a fast self-hosted one at about 30 ms to first token, measured from two
regions, one of them its own, and a slow hosted one at about 900 ms from one region): every figure of the
overview keeps them apart, names the target beside the region, and the map is coloured for one target (the
best-ranked unless chosen) or for each region's best; pool=on draws the pooled figures of before."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from probes.histogram import exact_percentile
from tests.factories import MeasurementFactory, WorkerFactory

pytestmark = pytest.mark.django_db

FAST = [28.0 + i for i in range(6)]
SLOW = [880.0 + 10 * i for i in range(6)]


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-47"))
    return client


@pytest.fixture
def two_targets(make_region, make_target, make_probe):
    tokyo = make_region(slug="kt-tokyo", name="Tokyo")
    lima = make_region(slug="kt-lima", name="Lima")
    # Live regions: a dark one is drawn as a grey ring, without its figures.
    for region in (tokyo, lima):
        WorkerFactory(region=region)
    fast = make_target(name="Fast vLLM")
    slow = make_target(name="Slow hosted")
    now = timezone.now()
    for target, regions, values in ((fast, [tokyo, lima], FAST), (slow, [tokyo], SLOW)):
        probe = make_probe(target=target, regions=regions)
        for region in regions:
            for i, ttft in enumerate(values):
                MeasurementFactory(
                    probe=probe, region=region, scheduled_for=now - timedelta(minutes=2 + i), ttft_ms=ttft
                )
    return {"fast": fast, "slow": slow, "tokyo": tokyo, "lima": lima}


def get(client, path, **params) -> dict:
    response = client.get(path, params)
    assert response.status_code == 200, response.content
    return json.loads(response.content)


def box_labels(figure) -> list[str]:
    return [label for trace in figure["data"] if trace["type"] == "box" for label in trace["y"]]


def map_hovers(figure) -> dict[str, str]:
    [markers] = [t for t in figure["data"] if t.get("meta", {}).get("role") == "regions"]
    return dict(zip(markers["customdata"], markers["text"], strict=True))


def map_colours(figure) -> dict[str, float]:
    [markers] = [t for t in figure["data"] if t.get("meta", {}).get("role") == "regions"]
    return dict(zip(markers["customdata"], markers["marker"]["color"], strict=True))


def test_the_distribution_has_a_group_of_rows_per_target(signed_in, two_targets):
    body = get(signed_in, "/api/histograms")
    assert body["per_target"] is True
    assert box_labels(body["figure"]) == ["Fast vLLM · Lima", "Fast vLLM · Tokyo", "Slow hosted · Tokyo"]
    boxes = [t for t in body["figure"]["data"] if t["type"] == "box"]
    # A legend entry per target, each naming it.
    assert [t["meta"]["target"] for t in boxes] == ["Fast vLLM", "Slow hosted"]
    by_row = {(r["target"], r["region"]): r["p50"] for r in body["rows"]}
    assert by_row == {
        ("Fast vLLM", "kt-lima"): exact_percentile(FAST, 0.5),
        ("Fast vLLM", "kt-tokyo"): exact_percentile(FAST, 0.5),
        ("Slow hosted", "kt-tokyo"): exact_percentile(SLOW, 0.5),
    }


def test_pooled_the_distribution_merges_them_per_region_as_before(signed_in, two_targets):
    body = get(signed_in, "/api/histograms", pool="on")
    assert body["per_target"] is False
    assert sorted(box_labels(body["figure"])) == ["Lima", "Tokyo"]
    tokyo = next(r for r in body["rows"] if r["region"] == "kt-tokyo")
    assert tokyo["samples"] == len(FAST) + len(SLOW)
    assert tokyo["p95"] == exact_percentile(FAST + SLOW, 0.95)


def test_over_time_is_a_heatmap_row_per_target_and_region(signed_in, two_targets):
    body = get(signed_in, "/api/timeseries")
    [heatmap] = body["figure"]["data"]
    assert heatmap["type"] == "heatmap"
    assert heatmap["y"] == ["Fast vLLM · Lima", "Fast vLLM · Tokyo", "Slow hosted · Tokyo"]
    values = {label: [v for v in row if v is not None] for label, row in zip(heatmap["y"], heatmap["z"], strict=True)}
    assert max(values["Fast vLLM · Tokyo"]) <= max(FAST)
    assert min(values["Slow hosted · Tokyo"]) >= min(SLOW)


def test_one_region_chosen_draws_a_line_per_target(signed_in, two_targets):
    body = get(signed_in, "/api/timeseries", region="kt-tokyo")
    assert body["lines"] is True
    names = [trace["name"] for trace in body["figure"]["data"]]
    assert names == ["Fast vLLM · Tokyo", "Slow hosted · Tokyo"]
    ids = {trace["meta"]["target"] for trace in body["figure"]["data"]}
    assert ids == {two_targets["fast"].id, two_targets["slow"].id}


def test_pooled_over_time_has_a_row_per_region(signed_in, two_targets):
    body = get(signed_in, "/api/timeseries", pool="on")
    [heatmap] = body["figure"]["data"]
    assert sorted(heatmap["y"]) == ["Lima", "Tokyo"]


def test_the_map_is_coloured_for_the_best_ranked_target_and_names_it(signed_in, two_targets):
    body = get(signed_in, "/api/overview", layer="synthetic")
    assert body["map_target"] == two_targets["fast"].id
    assert [t["name"] for t in body["map_targets"]] == ["Fast vLLM", "Slow hosted"]
    colours = map_colours(body["figure"])
    assert colours == {"kt-lima": exact_percentile(FAST, 0.5), "kt-tokyo": exact_percentile(FAST, 0.5)}
    assert all("target: Fast vLLM" in hover for hover in map_hovers(body["figure"]).values())


def test_the_map_shows_the_chosen_target(signed_in, two_targets):
    body = get(signed_in, "/api/overview", layer="synthetic", map_target=two_targets["slow"].id)
    assert map_colours(body["figure"]) == {"kt-tokyo": exact_percentile(SLOW, 0.5)}
    assert "target: Slow hosted" in map_hovers(body["figure"])["kt-tokyo"]


def test_the_map_can_show_each_regions_best_target(signed_in, two_targets):
    body = get(signed_in, "/api/overview", layer="synthetic", map_target="best")
    assert body["map_target"] == "best"
    assert map_colours(body["figure"])["kt-tokyo"] == exact_percentile(FAST, 0.5)
    assert "best target here: Fast vLLM" in map_hovers(body["figure"])["kt-tokyo"]


def test_the_pooled_map_merges_the_targets_of_a_region(signed_in, two_targets):
    body = get(signed_in, "/api/overview", layer="synthetic", pool="on")
    assert body["per_target"] is False
    tokyo = next(r for r in body["rows"] if r["slug"] == "kt-tokyo")
    assert tokyo["samples"] == len(FAST) + len(SLOW)
    assert "target:" not in map_hovers(body["figure"])["kt-tokyo"]


def test_the_phases_have_a_bar_per_target_and_region(signed_in, two_targets):
    body = get(signed_in, "/api/phases")
    assert [(r["target"], r["region"]) for r in body["rows"]] == [
        ("Fast vLLM", "kt-lima"),
        ("Fast vLLM", "kt-tokyo"),
        ("Slow hosted", "kt-tokyo"),
    ]
    assert body["figure"]["data"][0]["y"] == ["Fast vLLM · Lima", "Fast vLLM · Tokyo", "Slow hosted · Tokyo"]


def test_one_target_chosen_is_drawn_as_before(signed_in, two_targets):
    body = get(signed_in, "/api/histograms", target=two_targets["slow"].id)
    assert body["per_target"] is False
    assert box_labels(body["figure"]) == ["Tokyo"]


def test_a_map_target_that_is_no_target_is_refused(signed_in, two_targets):
    response = signed_in.get("/api/overview", {"map_target": "fastest"})
    assert response.status_code == 400
    assert json.loads(response.content)["param"] == "map_target"
