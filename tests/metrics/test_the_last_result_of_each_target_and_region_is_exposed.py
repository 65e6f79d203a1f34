"""/metrics shows the newest stored measurement of every target x region, named and labelled as blackbox_exporter
users expect, in seconds, with the phases it had and none it did not have."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.metrics.conftest import families, samples

BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)


@pytest.fixture
def pair(make_probe, make_region):
    region = make_region(slug="test-dublin", name="Dublin")
    probe = make_probe(regions=[region])
    return probe, region


def test_the_newest_result_is_shown_with_its_phases_in_seconds(pair, stored, admin_client):
    probe, region = pair
    stored(probe, region, BASE, ttft_ms=999.0)
    cold = dict(connection="cold", dns_ms=5.0, connect_ms=20.0, tls_ms=40.0, ttfb_ms=165.0, ttft_ms=265.0)
    row = stored(probe, region, BASE + timedelta(minutes=1), ttfat_ms=300.0, total_ms=1065.0, **cold)
    parsed = families(admin_client.get("/metrics").content.decode())
    labels = {"target": probe.target.name, "region": "test-dublin"}

    assert samples(parsed, "latency_atlas_probe_success") == [(labels, 1.0)]
    assert samples(parsed, "latency_atlas_probe_outcome") == [({**labels, "outcome": "ok"}, 1.0)]
    assert samples(parsed, "latency_atlas_probe_ttft_seconds") == [(labels, pytest.approx(0.265))]
    assert samples(parsed, "latency_atlas_probe_ttfat_seconds") == [(labels, pytest.approx(0.3))]
    assert samples(parsed, "latency_atlas_probe_tokens_per_second") == [(labels, pytest.approx(row.tokens_per_s))]
    assert samples(parsed, "latency_atlas_probe_http_status") == [(labels, 200.0)]
    assert samples(parsed, "latency_atlas_probe_started_timestamp_seconds") == [
        (labels, pytest.approx(row.started_at.timestamp()))
    ]
    phases = {s["phase"]: v for s, v in samples(parsed, "latency_atlas_probe_duration_seconds")}
    # processing = TTFB - (DNS + connect + TLS); first_token = TTFT - TTFB; transfer = total - TTFT.
    assert phases == pytest.approx(
        {"dns": 0.005, "connect": 0.02, "tls": 0.04, "processing": 0.1, "first_token": 0.1, "transfer": 0.8}
    )


def test_a_warm_call_has_no_connection_phases_rather_than_zeros(pair, stored, admin_client):
    probe, region = pair
    stored(probe, region, BASE, ttfb_ms=120.0, ttft_ms=250.0, total_ms=900.0)  # warm: no DNS, connect, TLS
    parsed = families(admin_client.get("/metrics").content.decode())
    phases = {s["phase"]: v for s, v in samples(parsed, "latency_atlas_probe_duration_seconds")}
    assert phases == pytest.approx({"processing": 0.12, "first_token": 0.13, "transfer": 0.65})


def test_a_failed_last_result_keeps_its_series_names_its_outcome_and_has_no_timings(pair, stored, admin_client):
    probe, region = pair
    stored(probe, region, BASE)
    stored(
        probe,
        region,
        BASE + timedelta(minutes=1),
        outcome="timeout",
        http_status=None,
        ttfb_ms=None,
        first_event_ms=None,
        ttft_ms=None,
        total_ms=None,
        tokens_per_s=None,
    )
    parsed = families(admin_client.get("/metrics").content.decode())
    labels = {"target": probe.target.name, "region": "test-dublin"}
    assert samples(parsed, "latency_atlas_probe_success") == [(labels, 0.0)]
    # One outcome series per pair: the one it has now, so a table joins it on (target, region).
    assert samples(parsed, "latency_atlas_probe_outcome") == [({**labels, "outcome": "timeout"}, 1.0)]
    assert samples(parsed, "latency_atlas_probe_ttft_seconds") == []
    assert samples(parsed, "latency_atlas_probe_http_status") == []
    assert samples(parsed, "latency_atlas_probe_duration_seconds") == []


def test_every_target_and_region_pair_has_its_own_series(make_probe, make_region, stored, admin_client):
    lagos, tokyo = make_region(slug="test-lagos"), make_region(slug="test-tokyo")
    first = make_probe(regions=[lagos, tokyo])
    second = make_probe(regions=[tokyo])
    stored(first, lagos, BASE, ttft_ms=100.0)
    stored(first, tokyo, BASE, ttft_ms=200.0)
    stored(second, tokyo, BASE, ttft_ms=300.0)
    parsed = families(admin_client.get("/metrics").content.decode())
    seen = {(s["target"], s["region"]): v for s, v in samples(parsed, "latency_atlas_probe_ttft_seconds")}
    assert seen == pytest.approx(
        {
            (first.target.name, "test-lagos"): 0.1,
            (first.target.name, "test-tokyo"): 0.2,
            (second.target.name, "test-tokyo"): 0.3,
        }
    )
