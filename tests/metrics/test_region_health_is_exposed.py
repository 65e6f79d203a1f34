"""Each region shows on /metrics with its place (for Grafana's geomap), its status by fleet's one rule, its live
workers and when one was last heard."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.prometheus import render
from tests.factories import WorkerFactory
from tests.metrics.conftest import families, samples


@pytest.mark.django_db
def test_regions_carry_their_place_status_and_workers(make_region):
    now = datetime.now(UTC).replace(microsecond=0)
    lagos = make_region(slug="test-lagos", name="Lagos", latitude=6.45, longitude=3.39)
    quiet = make_region(slug="test-quiet", name="Quiet", latitude=-33.9, longitude=151.2)
    WorkerFactory(region=lagos, last_seen=now - timedelta(seconds=5))
    WorkerFactory(region=lagos, last_seen=now - timedelta(seconds=20))
    WorkerFactory(region=lagos, last_seen=now - timedelta(seconds=200))  # stale: not live
    parsed = families(render("", now=lambda: now)[0].decode())

    info = {labels["region"]: labels for labels, _ in samples(parsed, "latency_atlas_region_info")}
    assert info["test-lagos"] == {"region": "test-lagos", "name": "Lagos", "latitude": "6.45", "longitude": "3.39"}
    assert float(info["test-quiet"]["latitude"]) == quiet.latitude
    status = {(labels["region"], labels["status"]): v for labels, v in samples(parsed, "latency_atlas_region_status")}
    assert (status[("test-lagos", "live")], status[("test-lagos", "dark")]) == (1.0, 0.0)
    assert (status[("test-quiet", "live")], status[("test-quiet", "dark")]) == (0.0, 1.0)
    live = {labels["region"]: v for labels, v in samples(parsed, "latency_atlas_region_workers_live")}
    assert (live["test-lagos"], live["test-quiet"]) == (2.0, 0.0)
    seen = {labels["region"]: v for labels, v in samples(parsed, "latency_atlas_region_last_seen_timestamp_seconds")}
    assert seen["test-lagos"] == (now - timedelta(seconds=5)).timestamp()
    assert "test-quiet" not in seen
