"""The regions x targets table shows the percentile chosen in the filter,
named with its unit in the heading, with p50 beside it when another one is
chosen; the page and /api/table give the same columns."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from probes.histogram import exact_percentile
from tests.factories import MeasurementFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-63"))
    return client


@pytest.fixture
def measured(make_region, make_target, make_probe):
    region = make_region(slug="tb-accra", name="Accra")
    target = make_target(name="Table target")
    probe = make_probe(target=target, regions=[region])
    now = timezone.now()
    ttfts = [100.0 + 10 * i for i in range(20)]
    for i, ttft in enumerate(ttfts):
        MeasurementFactory(
            probe=probe,
            region=region,
            scheduled_for=now - timedelta(minutes=1 + i),
            ttft_ms=ttft,
            tokens_per_s=30.0 + i,
        )
    return ttfts


def table(client, **params) -> dict:
    response = client.get("/api/table", params)
    assert response.status_code == 200
    return json.loads(response.content)


def headings(body) -> list[tuple[str, str]]:
    return [(c["key"], c["label"]) for c in body["columns"]]


def test_the_chosen_percentile_has_its_own_column_with_p50_beside_it(signed_in, measured):
    body = table(signed_in, percentile="p90")
    assert headings(body)[-2:] == [("p50", "p50 (ms)"), ("value", "p90 (ms)")]
    [row] = body["rows"]
    assert row["value"] == exact_percentile(measured, 0.9) and row["p50"] == exact_percentile(measured, 0.5)


def test_with_p50_chosen_the_table_has_one_percentile_column(signed_in, measured):
    body = table(signed_in, percentile="p50")
    keys = ["region", "target", "model", "samples", "error_rate", "missed", "value"]
    assert [key for key, _ in headings(body)] == keys
    assert headings(body)[-1] == ("value", "p50 (ms)")
    assert ("error_rate", "Errors (%)") in headings(body)


def test_tokens_per_second_headings_carry_its_unit(signed_in, measured):
    assert headings(table(signed_in, percentile="p99", metric="tokens_per_s"))[-1] == ("value", "p99 (tok/s)")


def test_the_page_renders_the_same_headings_as_the_api(signed_in, measured):
    html = signed_in.get("/", {"percentile": "p95", "metric": "ttfb"}).content.decode()
    thead = re.search(r"<thead>.*?</thead>", html, re.S).group(0)
    rendered = re.findall(r'<th data-key="([^"]+)"[^>]*>([^<]*)</th>', thead)
    assert rendered == headings(table(signed_in, percentile="p95", metric="ttfb"))
    assert rendered[-2:] == [("p50", "p50 (ms)"), ("value", "p95 (ms)")]
