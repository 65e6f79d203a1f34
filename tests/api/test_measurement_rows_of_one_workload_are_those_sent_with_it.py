"""/api/v1/measurements/ takes the exports' `workload`: the rows sent with that workload, by each row's own (a row
without one, NULL, counts as short); an unknown one is a 400 naming it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.api.conftest import bearer
from tests.factories import MeasurementFactory, ProbeFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def rows(db):
    short = ProbeFactory(name="short", workload="short")
    long = ProbeFactory(name="long", workload="prompt_100k")
    for i, (probe, workload) in enumerate([(short, "short"), (short, None), (long, "prompt_100k"), (long, "short")]):
        when = NOW - timedelta(minutes=5 + i)
        MeasurementFactory(probe=probe, region=probe.regions.get(), scheduled_for=when, workload=workload)


def get(client, role, query: str):
    with time_machine.travel(NOW, tick=False):
        return client.get(f"/api/v1/measurements/?{query}", **bearer(role.token))


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        ("short", [("short", "short"), ("short", None), ("long", "short")]),
        ("prompt_100k", [("long", "prompt_100k")]),
        ("cached_pair", []),
        ("", [("short", "short"), ("short", None), ("long", "prompt_100k"), ("long", "short")]),
    ],
)
def test_only_the_rows_of_the_workload_are_listed(client, roles, rows, workload, expected):
    response = get(client, roles.viewer, f"workload={workload}")
    assert response.status_code == 200
    assert [(row["probe"], row["workload"]) for row in response.json()["results"]] == expected


def test_an_unknown_workload_is_a_400_naming_it(client, roles, rows):
    response = get(client, roles.viewer, "workload=prompt_1m")
    assert response.status_code == 400
    assert response.json() == {
        "workload": ["workload must be one of short, prompt_1k, prompt_10k, prompt_100k, cached_pair"]
    }
