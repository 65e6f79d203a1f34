"""/metrics' tests: measurements stored through ingest's own code (probes.ingest.store, so the tally counts them as
it does in production), scrapes over a real uvicorn or Django's test client, parsed by prometheus_client's own
parsers.

- `stored(probe, region, when, **result)`: store one measurement as a region worker sends it; the stored row.
- `scrape_client(client, token=None, accept=None)`: GET /metrics through Django's test client -> the response.
- `families(text)`: {name: Metric} of a Prometheus text exposition; `openmetrics_families` of an OpenMetrics one.
- `samples(families, name)`: [(labels, value)] of the samples named `name` (a family's _bucket, _total, ...).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_parse
from prometheus_client.parser import text_string_to_metric_families

from devtools.harness import UvicornServer

TOKEN = "metrics-token-for-tests-0123456789"


def families(text: str) -> dict:
    return {family.name: family for family in text_string_to_metric_families(text)}


def openmetrics_families(text: str) -> dict:
    return {family.name: family for family in openmetrics_parse(text)}


def samples(parsed: dict, name: str) -> list[tuple[dict, float]]:
    return [(s.labels, s.value) for family in parsed.values() for s in family.samples if s.name == name]


@pytest.fixture
def metrics_token(settings) -> str:
    """LATENCY_METRICS_TOKEN set (in the settings' form: its SHA-256) for the test client."""
    settings.LATENCY_METRICS_TOKEN_SHA256 = hashlib.sha256(TOKEN.encode()).hexdigest()
    return TOKEN


@pytest.fixture
def scrape_client(client):
    def scrape(token: str | None = None, accept: str | None = None):
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if accept is not None:
            headers["Accept"] = accept
        return client.get("/metrics", headers=headers)

    return scrape


@pytest.fixture
def stored():
    from probes.ingest import store
    from probes.models import Measurement
    from tests.factories import measurement_payload

    def store_one(probe, region, when, **result):
        items = store([measurement_payload(probe, region, when, **result)])
        assert len(items) == 1, "the measurement was not stored"
        return Measurement.objects.get(id=items[0]["id"])

    return store_one


@pytest.fixture
def site(transactional_db, test_redis_url, settings, tmp_path, request) -> Iterator[UvicornServer]:
    """The site on a real uvicorn with LATENCY_METRICS_TOKEN set."""
    from tests.conftest import running_site

    request.applymarker(pytest.mark.asgi_env(LATENCY_METRICS_TOKEN=TOKEN))
    yield from running_site(request, settings, test_redis_url, tmp_path, channel="metrics", collect_static=False)
