"""The dashboard's JSON endpoints: every bad parameter is a 400 naming it,
anonymous callers get a JSON 403, and a good request returns a figure and
its rows as plain JSON."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from probes.models import Measurement

CHART_ENDPOINTS = [
    "/api/overview",
    "/api/histograms",
    "/api/timeseries",
    "/api/phases",
    "/api/table",
    "/api/real-users",
]
ALL_ENDPOINTS = [*CHART_ENDPOINTS, "/api/meta"]

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(make_region, make_target, make_probe):
    """One target measured from two regions over the last hour."""
    tokyo = make_region(slug="api-tokyo", name="Tokyo", city="Tokyo", country="JP", latitude=35.68, longitude=139.65)
    lima = make_region(slug="api-lima", name="Lima", city="Lima", country="PE", latitude=-12.05, longitude=-77.04)
    target = make_target(name="JSON API target", latitude=39.04, longitude=-77.49, location_name="Ashburn")
    probe = make_probe(target=target, regions=[tokyo, lima])
    now = timezone.now()
    rows = [
        Measurement(
            probe=probe,
            target=target,
            region=region,
            scheduled_for=now - timedelta(minutes=3 * i + 1),
            started_at=now - timedelta(minutes=3 * i + 1),
            worker="w",
            outcome="timeout" if i == 4 else "ok",
            error="deadline exceeded" if i == 4 else None,
            connection="cold",
            dns_ms=5.0,
            connect_ms=None if i == 4 else base / 4,
            tls_ms=None if i == 4 else base / 3,
            ttfb_ms=None if i == 4 else base + i,
            ttft_ms=None if i == 4 else base * 1.5 + i,
            ttfat_ms=None if i == 4 else base * 1.5 + i,
            total_ms=30_000.0 if i == 4 else base * 3,
            output_tokens=None if i == 4 else 20,
            tokens_per_s=None if i == 4 else 55.0 + i,
        )
        for region, base in ((tokyo, 160.0), (lima, 420.0))
        for i in range(15)
    ]
    Measurement.objects.bulk_create(rows)
    return {"tokyo": tokyo, "lima": lima, "target": target}


BAD_PARAMETERS = [
    ("window=2y", "window"),
    ("percentile=p42", "percentile"),
    ("metric=foo", "metric"),
    ("target=abc", "target"),
    ("target=999999", "target"),
    ("region=nowhere", "region"),
    ("window=custom", "since"),
    ("window=custom&since=garbage", "since"),
    ("window=custom&since=24h&until=someday", "until"),
    ("window=1h&since=2026-01-01T00:00", "since"),
]


@pytest.mark.parametrize("endpoint", CHART_ENDPOINTS)
@pytest.mark.parametrize(("query", "param"), BAD_PARAMETERS, ids=[q for q, _ in BAD_PARAMETERS])
def test_each_bad_parameter_is_a_400_naming_it(client, viewer, world, endpoint, query, param):
    response = client.get(f"{endpoint}?{query}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["param"] == param
    assert isinstance(body["error"], str) and body["error"]


@pytest.mark.parametrize("endpoint", ALL_ENDPOINTS)
def test_an_anonymous_caller_gets_a_json_403_not_a_login_page(client, endpoint):
    response = client.get(endpoint)
    assert response.status_code == 403
    assert response.json() == {"error": "login required"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.parametrize("endpoint", ALL_ENDPOINTS)
def test_in_public_mode_an_anonymous_caller_is_answered(client, settings, world, endpoint):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    assert client.get(endpoint).status_code == 200


@pytest.mark.parametrize("endpoint", ALL_ENDPOINTS)
def test_the_endpoints_only_read(client, viewer, endpoint):
    assert client.post(endpoint).status_code == 405


def get_json(client, url: str) -> dict:
    response = client.get(url)
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    # Strict JSON, as a browser's JSON.parse reads it: no NaN or Infinity.
    return json.loads(response.content, parse_constant=lambda name: pytest.fail(f"{url} sent {name}"))


def test_overview_returns_the_map_figure_and_one_row_per_region(client, viewer, world):
    body = get_json(client, f"/api/overview?target={world['target'].id}&percentile=p95&metric=ttft")
    assert set(body) >= {"figure", "rows", "samples", "empty"}
    assert set(body["figure"]) >= {"data", "layout"}
    assert any(trace["type"] == "scattergeo" for trace in body["figure"]["data"])
    rows = {row["slug"]: row for row in body["rows"]}
    assert set(rows) == {"api-tokyo", "api-lima"}
    assert rows["api-tokyo"]["samples"] == 15 and rows["api-tokyo"]["errors"] == 1
    assert rows["api-tokyo"]["p50"] < rows["api-lima"]["p50"]
    assert body["samples"] == 30 and body["empty"] == ""


def test_overview_of_an_empty_window_says_what_to_do(client, viewer, world):
    since = (timezone.now() - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    until = (timezone.now() - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    body = get_json(client, f"/api/overview?window=custom&since={since}&until={until}")
    assert body["samples"] == 0
    assert body["empty"].startswith("No measurements between ")
    assert "check that region workers are running" in body["empty"]


def test_histograms_return_a_figure_and_counts_per_region(client, viewer, world):
    body = get_json(client, "/api/histograms?metric=ttfb")
    assert body["figure"]["data"]
    rows = {row["region"]: row for row in body["rows"]}
    assert rows["api-lima"]["samples"] == 14
    assert rows["api-tokyo"]["p50"] < rows["api-lima"]["p50"]


def test_timeseries_rows_carry_iso_times(client, viewer, world):
    body = get_json(client, "/api/timeseries?window=1h")
    assert body["figure"]["data"] and body["rows"]
    for row in body["rows"]:
        assert datetime.fromisoformat(row["bucket_start"]).tzinfo is not None
    assert sum(row["samples"] for row in body["rows"]) == 30


def test_timeseries_is_a_heatmap_unless_lines_are_asked_for_or_few_regions_chosen(client, viewer, world):
    heat = get_json(client, "/api/timeseries?window=1h&percentile=p95")
    assert not heat["lines"] and [t["type"] for t in heat["figure"]["data"]] == ["heatmap"]
    assert heat["figure"]["data"][0]["y"] == ["Lima", "Tokyo"]
    chosen = get_json(client, "/api/timeseries?window=1h&region=api-lima&region=api-tokyo")
    assert chosen["lines"] and [t["name"] for t in chosen["figure"]["data"]] == ["Lima", "Tokyo"]
    asked = get_json(client, "/api/timeseries?window=1h&over_time=lines")
    assert asked["lines"] and len(asked["figure"]["data"]) == 2
    kept = get_json(client, "/api/timeseries?window=1h&region=api-lima&over_time=heatmap")
    assert not kept["lines"] and kept["figure"]["data"][0]["type"] == "heatmap"


def test_over_time_must_be_heatmap_or_lines(client, viewer, world):
    response = client.get("/api/timeseries", {"over_time": "pie"})
    assert response.status_code == 400
    assert response.json() == {"error": "over_time must be one of heatmap, lines", "param": "over_time"}


def test_histograms_name_their_rows_by_region_name(client, viewer, world):
    body = get_json(client, "/api/histograms?window=1h&percentile=p90")
    box, mark = body["figure"]["data"]
    assert box["y"] == ["Tokyo", "Lima"]  # Tokyo is faster
    assert mark["name"] == "p90 (selected percentile)"


def test_phases_return_the_stacked_segments_per_region(client, viewer, world):
    body = get_json(client, "/api/phases?region=api-tokyo")
    assert [row["region"] for row in body["rows"]] == ["api-tokyo"]
    assert set(body["rows"][0]["segments"]) == {"dns", "connect", "tls", "server_wait", "first_token", "streaming"}
    assert body["figure"]["data"]


def test_table_returns_region_by_target_rows_without_a_figure(client, viewer, world):
    body = get_json(client, "/api/table?metric=tokens_per_s&window=15m")
    assert body["figure"] is None
    assert {(row["region_slug"], row["target_id"]) for row in body["rows"]} == {
        ("api-tokyo", world["target"].id),
        ("api-lima", world["target"].id),
    }
    assert all(row["p50"] >= 55.0 for row in body["rows"])


def test_meta_lists_targets_and_regions_for_the_selectors(client, viewer, world):
    body = get_json(client, "/api/meta")
    target = next(t for t in body["targets"] if t["id"] == world["target"].id)
    assert target["name"] == "JSON API target" and target["location_name"] == "Ashburn"
    slugs = {r["slug"] for r in body["regions"]}
    assert {"api-tokyo", "api-lima"} <= slugs
    assert body["windows"] == ["15m", "1h", "24h", "7d", "30d", "custom"]
    assert body["percentiles"] == ["p50", "p90", "p95", "p99"]
    assert [m["value"] for m in body["metrics"]] == ["ttft", "ttfat", "ttfb", "connect", "tls", "total", "tokens_per_s"]


def test_blank_form_values_count_as_not_given(client, viewer, world):
    # What a GET form sends for untouched inputs.
    body = get_json(client, "/api/overview?target=all&window=1h&since=&until=&metric=&percentile=")
    assert body["samples"] == 30
