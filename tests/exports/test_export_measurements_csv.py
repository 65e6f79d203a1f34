"""/export/measurements.csv: one row per measurement, in the issue's column
order, NULL as an empty cell, every filter, formula cells neutralised, no
credential, a descriptive filename, and login plus the view permission."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import AsyncClient
from django.utils import timezone

from probes.models import Measurement
from tests.export_support import T0, close_async_thread_connections, download, header, measurement, rows, series, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/measurements.csv"
RANGE = {"since": "2026-03-02T00:00:00Z", "until": "2026-03-03T00:00:00Z"}
ISSUE_COLUMNS = [
    "measured_at", "probe", "target", "api_style", "model", "region", "region_city", "region_country",
    "connection", "outcome", "http_status", "dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "ttft_ms", "ttfat_ms",
    "total_ms", "output_tokens", "tokens_per_s", "itl_p50_ms", "error",
    # Issue 50's, appended after the earlier layout's last column.
    "request_sent_ms", "warm_ttft_ms", "workload", "input_tokens", "cached_input_tokens", "cache_write_tokens",
    "reasoning_tokens",
    "ratelimit_remaining_requests", "ratelimit_remaining_tokens",
]  # fmt: skip


@pytest.fixture
def world(make_region, make_target, make_probe):
    lagos = make_region(slug="lagos", name="Lagos", city="Lagos", country="NG")
    paris = make_region(slug="paris", name="Paris", city="Paris", country="FR")
    alpha = make_target(name="Alpha", model="alpha-1", api_style="openai")
    beta = make_target(name="Beta", model="beta-2", api_style="anthropic")
    pa = make_probe(target=alpha, regions=[lagos, paris], name="alpha-probe")
    pb = make_probe(target=beta, regions=[lagos], name="beta-probe")
    Measurement.objects.bulk_create(
        series(pa, lagos, T0, 3)
        + series(pa, paris, T0, 2)
        + series(pb, lagos, T0, 4, outcome="timeout", error="deadline exceeded", http_status=None, ttft_ms=None)
    )
    return {"lagos": lagos, "paris": paris, "alpha": alpha, "beta": beta, "pa": pa, "pb": pb}


async def test_the_header_lists_the_issue_columns_in_order(client, world):
    response, text = await download(client, URL, **RANGE)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert header(text) == ISSUE_COLUMNS


async def test_each_measurement_is_one_row_with_names_and_utc_times(client, world):
    _, text = await download(client, URL, **RANGE)
    got = rows(text)
    assert len(got) == 9
    first = got[0]
    assert first["measured_at"] == "2026-03-02T10:00:00.000000Z"
    assert (first["probe"], first["target"], first["api_style"], first["model"]) in {
        ("alpha-probe", "Alpha", "openai", "alpha-1"),
        ("beta-probe", "Beta", "anthropic", "beta-2"),
    }
    alpha_lagos = next(r for r in got if r["target"] == "Alpha" and r["region"] == "lagos")
    assert alpha_lagos["region_city"] == "Lagos" and alpha_lagos["region_country"] == "NG"
    assert alpha_lagos["ttft_ms"] == "150" and alpha_lagos["itl_p50_ms"] == "12.5"
    assert alpha_lagos["output_tokens"] == "20" and alpha_lagos["http_status"] == "200"
    assert [r["measured_at"] for r in got] == sorted(r["measured_at"] for r in got)


async def test_null_is_an_empty_cell(client, world):
    _, text = await download(client, URL, outcome="timeout", **RANGE)
    got = rows(text)
    assert got and all(r["ttft_ms"] == "" and r["http_status"] == "" for r in got)
    assert all(r["error"] == "deadline exceeded" for r in got)
    ok = rows((await download(client, URL, outcome="ok", **RANGE))[1])
    assert ok and all(r["error"] == "" for r in ok)
    # Empty, not a quoted empty string or a NULL marker.
    assert ",,," not in text.splitlines()[0] and ",," in text.splitlines()[1]


async def test_target_filter_is_repeatable(client, world):
    alpha, beta = world["alpha"].id, world["beta"].id
    only = rows((await download(client, URL, target=alpha, **RANGE))[1])
    assert {r["target"] for r in only} == {"Alpha"} and len(only) == 5
    both = rows((await download(client, URL, target=[alpha, beta], **RANGE))[1])
    assert len(both) == 9


async def test_probe_filter(client, world):
    got = rows((await download(client, URL, probe=world["pb"].id, **RANGE))[1])
    assert {r["probe"] for r in got} == {"beta-probe"} and len(got) == 4


async def test_region_filter_is_repeatable(client, world):
    paris = rows((await download(client, URL, region="paris", **RANGE))[1])
    assert {r["region"] for r in paris} == {"paris"} and len(paris) == 2
    both = rows((await download(client, URL, region=["paris", "lagos"], **RANGE))[1])
    assert len(both) == 9


async def test_outcome_filter_is_repeatable(client, world):
    assert len(rows((await download(client, URL, outcome="ok", **RANGE))[1])) == 5
    assert len(rows((await download(client, URL, outcome=["ok", "timeout"], **RANGE))[1])) == 9


async def test_since_and_until_bound_a_half_open_range(client, world):
    got = rows((await download(client, URL, since="2026-03-02T10:01:00Z", until="2026-03-02T10:03:00Z"))[1])
    assert sorted({r["measured_at"] for r in got}) == ["2026-03-02T10:01:00.000000Z", "2026-03-02T10:02:00.000000Z"]


@pytest.fixture
def recent(make_region, make_probe):
    """Rows 1, 30 and 100 hours old."""
    region = make_region()
    probe = make_probe(regions=[region])
    now = timezone.now()
    Measurement.objects.bulk_create([measurement(probe, region, now - timedelta(hours=h)) for h in (1, 30, 100)])


async def test_relative_since_and_the_default_last_24_hours(client, recent):
    assert len(rows((await download(client, URL))[1])) == 1
    assert len(rows((await download(client, URL, since="2d"))[1])) == 2
    assert len(rows((await download(client, URL, since="7d", until="48h"))[1])) == 1


@pytest.fixture
def formulas(make_region, make_target, make_probe):
    region = make_region(slug="-evil", city="=cmd|' /C calc'!A0", country="ZZ")
    target = make_target(name="+SUM(1,2)", model='@HYPERLINK("http://x")')
    probe = make_probe(target=target, regions=[region], name="-2+3")
    Measurement.objects.bulk_create(
        [
            measurement(probe, region, T0, outcome="upstream_error", error="=1+1"),
            measurement(probe, region, T0 + timedelta(minutes=1), outcome="upstream_error", error="\tTAB"),
            measurement(probe, region, T0 + timedelta(minutes=2), outcome="upstream_error", error="\rCR"),
            measurement(probe, region, T0 + timedelta(minutes=3), outcome="upstream_error", error="fine = ok"),
        ]
    )


async def test_cells_that_look_like_formulas_are_neutralised(client, formulas):
    got = rows((await download(client, URL, **RANGE))[1])
    assert got[0]["probe"] == "'-2+3"
    assert got[0]["target"] == "'+SUM(1,2)"
    assert got[0]["model"] == '\'@HYPERLINK("http://x")'
    assert got[0]["region"] == "'-evil"
    assert got[0]["region_city"] == "'=cmd|' /C calc'!A0"
    assert [r["error"] for r in got] == ["'=1+1", "'\tTAB", "'\rCR", "fine = ok"]


SECRET = "sk-live-export-secret-4f9a1c"


@pytest.fixture
def keyed_target(make_region, make_target, make_probe, monkeypatch):
    monkeypatch.setenv("EXPORT_TEST_KEY", SECRET)
    region = make_region()
    target = make_target(api_key_env="EXPORT_TEST_KEY", headers={"x-api-key": "${EXPORT_TEST_KEY}"})
    probe = make_probe(target=target, regions=[region])
    Measurement.objects.bulk_create(series(probe, region, T0, 3))
    return target


async def test_no_credential_appears(client, keyed_target):
    secret, target = SECRET, keyed_target
    _, text = await download(client, URL, **RANGE)
    assert len(rows(text)) == 3
    assert secret not in text and "EXPORT_TEST_KEY" not in text and target.url not in text


async def test_the_filename_says_what_and_when(client, world):
    response, _ = await download(client, URL, since="2026-03-02T04:00Z", until="2026-03-02T16:30Z")
    assert response["Content-Disposition"] == (
        'attachment; filename="latency-measurements_20260302T0400Z_20260302T1630Z.csv"'
    )


async def test_anonymous_is_sent_to_login(world):
    response = await AsyncClient().get(URL, RANGE)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.fixture
def unpermitted(django_user_model):
    client = AsyncClient()
    client.force_login(viewer(django_user_model, "nobody", permitted=False))
    return client


async def test_a_user_without_the_view_permission_gets_403(world, unpermitted):
    response = await unpermitted.get(URL, RANGE)
    assert response.status_code == 403


async def test_a_user_with_the_view_permission_gets_the_csv(client, world):
    response, text = await download(client, URL, **RANGE)
    assert response.status_code == 200 and len(rows(text)) == 9


async def test_the_dashboard_download_links_carry_its_filters(client, world):
    alpha = world["alpha"].id
    response = await client.get("/", {"target": alpha, "region": "paris", "window": "7d"})
    page = response.content.decode()
    assert f'href="/export/measurements.csv?target={alpha}&amp;region=paris&amp;since=7d"' in page
    assert f'href="/export/regions.csv?target={alpha}&amp;region=paris&amp;since=7d"' in page
