"""/api/v1/model-groups/<id>/leaderboard/ and /api/v1/aggregates/*/ take workload as the pages do: the chosen
workload's calls alone (the leaderboard says which it ranked), and an unknown one is a 400 naming it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.api.conftest import bearer
from tests.factories import ModelGroupFactory, ProbeFactory, RegionFactory, TargetFactory, spread_measurements

pytestmark = pytest.mark.django_db
# TTFT (ms): Alpha is the faster with a short prompt, Beta with 10k tokens.
TTFT = {"Alpha": {"short": 100.0, "prompt_10k": 3000.0}, "Beta": {"short": 400.0, "prompt_10k": 900.0}}


@pytest.fixture
def group():
    region = RegionFactory(slug="wl-api-paris")
    now = timezone.now()
    targets = []
    for seed, (name, figures) in enumerate(TTFT.items()):
        target = TargetFactory(name=name)
        targets.append(target)
        for workload, ttft in figures.items():
            probe = ProbeFactory(target=target, regions=[region], workload=workload)
            start, end = now - timedelta(minutes=40), now - timedelta(minutes=1)
            spread_measurements(probe, region, start, end, 10, seed=seed, ttft_ms=ttft, workload=workload)
    return ModelGroupFactory(name="wl model", targets=targets)


@pytest.mark.parametrize("workload", ["short", "prompt_10k"])
def test_the_leaderboard_ranks_the_chosen_workload_and_names_it(client, roles, group, workload):
    response = client.get(
        f"/api/v1/model-groups/{group.id}/leaderboard/", {"workload": workload}, **bearer(roles.viewer.token)
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["workload"] == workload
    ranked = [(row["target_name"], row["p50_ttft_ms"], row["n"]) for row in body["rows"]]
    assert ranked == sorted(((name, TTFT[name][workload], 10) for name in TTFT), key=lambda r: r[1])


def test_without_a_workload_the_leaderboard_ranks_every_call(client, roles, group):
    body = client.get(f"/api/v1/model-groups/{group.id}/leaderboard/", **bearer(roles.viewer.token)).json()

    assert body["workload"] is None
    assert {row["target_name"]: row["n"] for row in body["rows"]} == {"Alpha": 20, "Beta": 20}


def test_the_table_aggregate_reads_the_chosen_workload(client, roles, group):
    response = client.get("/api/v1/aggregates/table/", {"workload": "prompt_10k"}, **bearer(roles.viewer.token))

    assert response.status_code == 200, response.content
    assert {row["target"]: row["p50"] for row in response.json()["rows"]} == {
        name: TTFT[name]["prompt_10k"] for name in TTFT
    }


@pytest.mark.parametrize("path", ["/api/v1/model-groups/{group}/leaderboard/", "/api/v1/aggregates/table/"])
def test_an_unknown_workload_is_a_400_naming_it(client, roles, group, path):
    response = client.get(path.format(group=group.id), {"workload": "huge"}, **bearer(roles.viewer.token))

    assert response.status_code == 400
    assert response.json() == {
        "workload": ["workload must be one of short, prompt_1k, prompt_10k, prompt_100k, cached_pair"]
    }
