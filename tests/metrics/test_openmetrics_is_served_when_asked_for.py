"""Prometheus asks for OpenMetrics in its Accept header; /metrics then answers in it (parsed here by
prometheus_client's OpenMetrics parser, which refuses anything malformed), and in the classic text format
otherwise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.metrics.conftest import families, openmetrics_families, samples

PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,"
    "text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
)


@pytest.fixture
def measured(make_probe, stored):
    probe = make_probe()
    stored(probe, probe.regions.get(), datetime.now(UTC) - timedelta(minutes=2))
    return probe


def test_prometheus_accept_header_gets_openmetrics(measured, scrape_client, metrics_token):
    response = scrape_client(token=metrics_token, accept=PROMETHEUS_ACCEPT)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/openmetrics-text")
    text = response.content.decode()
    assert text.endswith("# EOF\n")
    parsed = openmetrics_families(text)
    assert parsed["latency_atlas_measurements"].type == "counter"
    assert parsed["latency_atlas_ttft_seconds"].type == "histogram"
    assert [v for _, v in samples(parsed, "latency_atlas_measurements_total")] == [1.0]


def test_no_accept_header_gets_the_text_format(measured, scrape_client, metrics_token):
    response = scrape_client(token=metrics_token)
    assert response["Content-Type"].startswith("text/plain")
    assert "# EOF" not in response.content.decode()
    parsed = families(response.content.decode())
    assert [v for _, v in samples(parsed, "latency_atlas_measurements_total")] == [1.0]
    assert response["Cache-Control"] == "no-store"
