"""GET /api/v1/model-groups/<id>/leaderboard/: one row per target of the group with exactly the issue's fields
(and reason only where an interval is null); region or mix, never both; the admin's permissions; groups are
listed and edited like targets, their targets named by name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import ModelGroup
from tests.api.conftest import bearer
from tests.factories import ModelGroupFactory, ProbeFactory, RegionFactory, TargetFactory
from tests.model_groups.support import store

pytestmark = pytest.mark.django_db
FIELDS = {
    "target",
    "target_name",
    "rank",
    "p50_ttft_ms",
    "p95_ttft_ms",
    "p50_ttft_ci_ms",
    "p95_ttft_ci_ms",
    "tokens_per_s_p50",
    "success_ratio",
    "n",
    "tied_with",
}


@pytest.fixture
def group():
    now = datetime.now(UTC)
    paris, tokyo = RegionFactory(slug="zz-paris"), RegionFactory(slug="zz-tokyo")
    many, few = TargetFactory(name="many calls"), TargetFactory(name="few calls")
    pm, pf = ProbeFactory(target=many, regions=[paris, tokyo]), ProbeFactory(target=few, regions=[paris])
    store(pm, paris, [200.0 + i for i in range(100)], now - timedelta(minutes=50), timedelta(seconds=20))
    store(pm, tokyo, [400.0 + i for i in range(100)], now - timedelta(minutes=50), timedelta(seconds=20))
    store(pf, paris, [150.0 + i for i in range(10)], now - timedelta(minutes=50), timedelta(minutes=1))
    TargetFactory(name="not in the group")
    return ModelGroupFactory(name="llama", targets=[many, few])


def url(group) -> str:
    return f"/api/v1/model-groups/{group.id}/leaderboard/"


def test_each_row_has_exactly_the_issue_fields(client, roles, group):
    response = client.get(url(group), {"window": "1h", "region": "zz-paris"}, **bearer(roles.viewer.token))

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["metric"], body["percentile"], body["region"]) == ("ttft", "p50", "zz-paris")
    rows = {r["target_name"]: r for r in body["rows"]}
    assert set(rows) == {"many calls", "few calls"}
    assert set(rows["many calls"]) == FIELDS
    assert set(rows["few calls"]) == FIELDS | {"reason"}
    assert rows["few calls"]["p95_ttft_ci_ms"] is None
    assert rows["few calls"]["rank"] == 1 and rows["many calls"]["rank"] == 2
    assert rows["many calls"]["n"] == 100
    assert len(rows["many calls"]["p50_ttft_ci_ms"]) == 2


def test_a_mix_weighs_regions_and_carries_a_reason_instead_of_intervals(client, roles, group):
    response = client.get(url(group), {"mix": "zz-paris:50,zz-tokyo:50"}, **bearer(roles.viewer.token))

    assert response.status_code == 200, response.content
    many = next(r for r in response.json()["rows"] if r["target_name"] == "many calls")
    assert many["n"] == 200
    assert many["p50_ttft_ci_ms"] is None and "traffic mix" in many["reason"]
    # Half the users in each region: the median is the last of Paris's values.
    assert many["p50_ttft_ms"] == pytest.approx(299.0)


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"region": "zz-paris", "mix": "zz-paris:1"}, "mix"),
        ({"region": "nowhere"}, "region"),
        ({"mix": "zz-paris"}, "mix"),
        ({"mix": "nowhere:3"}, "mix"),
        ({"metric": "speed"}, "metric"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(client, roles, group, params, param):
    response = client.get(url(group), params, **bearer(roles.viewer.token))

    assert response.status_code == 400
    assert list(response.json()) == [param]


def test_without_the_view_permission_it_is_refused(client, roles, group):
    assert client.get(url(group), **bearer(roles.nobody.token)).status_code == 403


def test_groups_are_created_and_listed_with_their_targets_by_name(client, roles, group):
    created = client.post(
        "/api/v1/model-groups/",
        {"name": "gpt-4o", "targets": ["many calls", "not in the group"]},
        content_type="application/json",
        **bearer(roles.editor.token),
    )
    assert created.status_code == 201, created.content
    assert sorted(created.json()["targets"]) == ["many calls", "not in the group"]
    assert ModelGroup.objects.get(name="gpt-4o").targets.count() == 2
    listed = client.get("/api/v1/model-groups/", **bearer(roles.viewer.token)).json()
    names = [g["name"] for g in (listed["results"] if isinstance(listed, dict) else listed)]
    assert names == ["gpt-4o", "llama"]
    refused = client.post(
        "/api/v1/model-groups/",
        {"name": "x", "targets": []},
        content_type="application/json",
        **bearer(roles.viewer.token),
    )
    assert refused.status_code == 403


def test_the_issues_spelling_without_a_slash_leads_to_the_same_answer(client, roles, group):
    response = client.get(
        f"/api/v1/model-groups/{group.id}/leaderboard",
        {"region": "zz-paris"},
        follow=True,
        **bearer(roles.viewer.token),
    )
    assert response.status_code == 200
    assert response.json()["region"] == "zz-paris"
