"""/export/workloads.csv: a row per target x region x workload class with the columns of the issue, the region's
figures repeated on each of its rows, empty cells where a figure does not exist, and names a spreadsheet would
take for a formula neutralised. The parameters are /api/workloads'."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.utils import timezone

from probes.exports.workloads import WORKLOAD_COLUMNS
from tests.export_support import close_async_thread_connections, download, header, rows, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/workloads.csv"
ISSUE_COLUMNS = [
    "target", "region", "workload", "calls", "ok", "rate_limited", "rate_limited_ratio", "ttft_p50_ms",
    "input_tokens_p50", "ttft_ms_per_1k_input", "prefill_tokens_per_s", "cache_saving_p50_ms", "cache_hit_ratio",
    "ratelimit_remaining_requests_min", "ratelimit_remaining_tokens_min",
]  # fmt: skip


@pytest.fixture
def measured(make_probe, make_region, make_target, add_calls):
    region = make_region(slug="wl-csv", name="CSV region")
    probe = make_probe(target=make_target(name="=HYPERLINK(1)"), regions=[region])
    at = timezone.now() - timedelta(minutes=30)
    pair = {"workload": "cached_pair", "input_tokens": 10_000, "ttft_ms": 400.0, "warm_ttft_ms": 5400.0}
    add_calls(probe, region, at, [
        *[{"workload": "short", "input_tokens": 20, "ttft_ms": 210.0}] * 5,
        *[{"workload": "prompt_1k", "input_tokens": 1000, "ttft_ms": 700.0, "ratelimit_remaining_tokens": 9000}] * 5,
        {"workload": "prompt_1k", "outcome": "rate_limited", "ttft_ms": None, "http_status": 429},
        {**pair, "cached_input_tokens": 9000}, {**pair, "cached_input_tokens": 0},
    ])  # fmt: skip
    return probe


@pytest.fixture
def client(django_user_model):
    client = AsyncClient()
    client.force_login(viewer(django_user_model))
    return client


async def test_a_row_per_class_with_the_regions_figures(client, measured):
    response, text = await download(client, URL, target=measured.target_id, window="1h")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="latency-workloads_')
    assert header(text) == ISSUE_COLUMNS == list(WORKLOAD_COLUMNS)
    by_class = {row["workload"]: row for row in rows(text)}
    assert list(by_class) == ["short", "prompt_1k", "cached_pair"]
    one_k = by_class["prompt_1k"]
    assert one_k["target"] == "'=HYPERLINK(1)"  # neutralised: a spreadsheet shows it as text
    assert one_k["region"] == "wl-csv"
    assert (one_k["calls"], one_k["ok"], one_k["rate_limited"]) == ("6", "5", "1")
    assert float(one_k["rate_limited_ratio"]) == pytest.approx(1 / 6)
    assert (one_k["ttft_p50_ms"], one_k["input_tokens_p50"]) == ("700", "1000")
    for row in by_class.values():
        assert row["ttft_ms_per_1k_input"] == "500"
        assert row["prefill_tokens_per_s"] == "2000"
        assert row["cache_saving_p50_ms"] == "5000"
        assert row["cache_hit_ratio"] == "0.5"
        assert row["ratelimit_remaining_requests_min"] == ""  # not reported: empty, never 0
        assert row["ratelimit_remaining_tokens_min"] == "9000"


async def test_a_window_over_seven_days_is_a_400_naming_it(client, measured):
    response, _text = await download(client, URL, target=measured.target_id, window="30d")
    assert response.status_code == 400
    assert response.json()["param"] == "window"


async def test_someone_without_the_view_permission_is_refused(django_user_model, measured):
    other = AsyncClient()
    await sync_to_async(other.force_login)(await sync_to_async(viewer)(django_user_model, "no-perm", permitted=False))
    response = await other.get(URL, {"target": measured.target_id})
    assert response.status_code == 403
