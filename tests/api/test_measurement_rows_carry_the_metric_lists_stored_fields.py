"""A measurement row holds every stored field of the metric list (probes.metrics), what names it (probe,
target by name, region by slug), UTC ISO 8601 times and null for a phase that was not measured; the filters are
the exports' form, so a bad one is a 400 naming the parameter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from probes import metrics
from tests.api.conftest import bearer
from tests.factories import MeasurementFactory, ProbeFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def rows(db):
    probe = ProbeFactory(target__name="Claude", name="hello")
    region = probe.regions.get()
    other = ProbeFactory()
    when = NOW - timedelta(minutes=5)
    MeasurementFactory(probe=probe, region=region, scheduled_for=when, started_at=when, dns_ms=None, ttfat_ms=None)
    MeasurementFactory(probe=other, region=other.regions.get(), scheduled_for=when, started_at=when)
    old = NOW - timedelta(days=2)
    MeasurementFactory(probe=probe, region=region, scheduled_for=old, started_at=old)
    return probe, region


def get(client, role, query: str):
    with time_machine.travel(NOW, tick=False):
        return client.get(f"/api/v1/measurements/?{query}", **bearer(role.token))


def test_a_row_holds_every_stored_field_named_and_typed(client, roles, rows):
    probe, region = rows
    response = get(client, roles.viewer, f"target={probe.target_id}")
    assert response.status_code == 200
    [row] = response.json()["results"]  # the other target's row and the one older than 24 h are left out
    assert set(metrics.stored_engine_fields()) <= set(row)
    assert {m.column for m in metrics.METRICS} <= set(row)
    assert row["probe"] == "hello" and row["target"] == "Claude" and row["region"] == region.slug
    assert row["started_at"] == "2026-11-30T11:55:00Z"
    assert row["dns_ms"] is None and row["ttfat_ms"] is None and row["ttft_ms"] == 150.0


def test_region_and_time_filter_the_rows(client, roles, rows):
    probe, region = rows
    assert len(get(client, roles.viewer, f"region={region.slug}").json()["results"]) == 1
    assert len(get(client, roles.viewer, f"region={region.slug}&since=3d").json()["results"]) == 2
    window = "since=2026-11-28T00:00:00Z&until=2026-11-29T00:00:00Z"
    assert len(get(client, roles.viewer, f"target={probe.target_id}&{window}").json()["results"]) == 1


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("region=nowhere", "region"),
        ("target=x", "target"),
        ("since=yesterday-ish", "since"),
        ("outcome=fine", "outcome"),
    ],
)
def test_a_bad_filter_is_a_400_naming_the_parameter(client, roles, rows, query, param):
    response = get(client, roles.viewer, query)
    assert response.status_code == 400
    assert list(response.json()) == [param]
