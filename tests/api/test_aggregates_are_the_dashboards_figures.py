"""The aggregates are the dashboard's figures: the same selection (the dashboard's form, the same parameters)
read by the same probes.readings calls, so /api/v1/aggregates/* and the dashboard's /api/overview, /api/table,
/api/phases, /api/timeseries and /api/histograms give the same rows."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.api.conftest import bearer
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PAIRS = [("summary", "overview"), ("table", "table"), ("phases", "phases"), ("series", "timeseries"),
         ("distribution", "histograms")]  # fmt: skip


@pytest.fixture
def data(db):
    regions = [RegionFactory(), RegionFactory()]
    probe = ProbeFactory(regions=regions)
    rng = random.Random(5)
    for i in range(40):
        when = NOW - timedelta(minutes=i + 1)
        MeasurementFactory(
            probe=probe,
            region=regions[i % 2],
            scheduled_for=when,
            started_at=when,
            ttft_ms=rng.uniform(100, 900),
            total_ms=rng.uniform(900, 2000),
        )
    return probe, regions


@pytest.mark.parametrize(("aggregate", "dashboard"), PAIRS)
@pytest.mark.parametrize("query", ["window=1h&metric=ttft&percentile=p95", "window=custom&since=30m&metric=total"])
def test_the_same_selection_gives_the_same_rows(client, roles, data, aggregate, dashboard, query):
    client.force_login(roles.viewer.user)
    with time_machine.travel(NOW, tick=False):
        ours = client.get(f"/api/v1/aggregates/{aggregate}/?{query}", **bearer(roles.viewer.token))
        theirs = client.get(f"/api/{dashboard}?{query}")
    assert ours.status_code == 200 and theirs.status_code == 200
    rows, expected = ours.json()["rows"], theirs.json()["rows"]
    assert rows, "the selection reads some rows"
    assert len(rows) == len(expected)
    for row, their in zip(rows, expected):
        for key, value in row.items():
            if isinstance(value, float):
                assert value == pytest.approx(their[key])
            elif key not in ("last_seen", "bucket_start", "at"):
                assert value == their[key], key


def test_a_bad_selection_is_a_400_naming_the_parameter(client, roles, data):
    response = client.get("/api/v1/aggregates/table/?metric=speed", **bearer(roles.viewer.token))
    assert response.status_code == 400
    assert list(response.json()) == ["metric"]
