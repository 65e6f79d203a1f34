"""regions.csv and the dashboard's JSON give the same numbers for the same
selection: exact nearest rank on a window read from raw rows, the same
merged-histogram value (within 1% of exact) on a window read from rollups;
the CSV writes them to 3 significant digits (probes.significant)."""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from probes.engine.result import REFUSED
from probes.histogram import exact_percentile
from probes.metrics import PERCENTILES, REGION_CSV
from probes.models import Measurement
from probes.rollups import rebuild_range
from probes.significant import significant
from tests.export_support import T0, close_async_thread_connections, download, measurement, rows, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

DAY0 = T0.replace(hour=0)


@pytest.fixture
def client(django_user_model):
    client = AsyncClient()
    client.force_login(viewer(django_user_model))
    return client


@pytest.fixture
def made(make_region, make_target, make_probe):
    """Two days of a measurement every 7 minutes from two regions, log-normal
    latencies, every eleventh a timeout without ttft, every thirteenth a 429 answered in a millisecond (which no
    percentile may count); denser in T0's hour
    (36 rows from each region), so ranks there fall between round numbers."""
    rng = random.Random(11)
    lima = make_region(slug="lima", city="Lima", country="PE")
    kyiv = make_region(slug="kyiv", city="Kyiv", country="UA")
    target = make_target(name="Delta", model="delta-1")
    probe = make_probe(target=target, regions=[lima, kyiv])
    out = []
    for region, base in ((lima, 240.0), (kyiv, 90.0)):
        at = DAY0
        i = 0
        while at < DAY0 + timedelta(days=2):
            failed = i % 11 == 5
            ttft = base * rng.lognormvariate(0, 0.5)
            if i % 13 == 7:
                refused = {"ttfb_ms": 1.0, "connect_ms": 1.0, "total_ms": 1.0, "ttft_ms": None, "ttfat_ms": None}
                out.append(measurement(probe, region, at, outcome="rate_limited", http_status=429, **refused))
                i += 1
                at += timedelta(seconds=97) if T0 <= at < T0 + timedelta(hours=1) else timedelta(minutes=7)
                continue
            out.append(
                measurement(
                    probe, region, at,
                    outcome="timeout" if failed else "ok",
                    ttft_ms=None if failed else ttft, ttfat_ms=None if failed else ttft * rng.uniform(1.0, 1.3),
                    ttfb_ms=ttft * rng.uniform(0.6, 0.9), connect_ms=base / 4 * rng.uniform(0.9, 1.4),
                    total_ms=ttft * rng.uniform(2, 4),
                )
            )  # fmt: skip
            i += 1
            # Denser in T0's hour.
            at += timedelta(seconds=97) if T0 <= at < T0 + timedelta(hours=1) else timedelta(minutes=7)
    Measurement.objects.bulk_create(out)
    return out


async def both(client, since, until) -> tuple[dict, dict]:
    """(CSV rows by region, {(metric, label): API table row by region})."""
    window = {"since": since.isoformat(), "until": until.isoformat()}
    _, text = await download(client, "/export/regions.csv", bucket="all", **window)
    csv_rows = {r["region"]: r for r in rows(text)}
    api = {}
    for metric in REGION_CSV:
        for label in PERCENTILES:
            response = await client.get(
                "/api/table", {"window": "custom", "metric": metric.name, "percentile": label, **window}
            )
            assert response.status_code == 200
            api[(metric.name, label)] = {r["region_slug"]: r for r in json.loads(response.content)["rows"]}
        # The histogram chart's numbers are the table's too.
        response = await client.get("/api/histograms", {"window": "custom", "metric": metric.name, **window})
        for row in json.loads(response.content)["rows"]:
            table_row = api[(metric.name, "p50")][row["region"]]
            assert (row["p50"], row["p95"]) == (table_row["p50"], table_row["p95"]), (metric.name, row["region"])
    return csv_rows, api


def exact(made, region: str, since, until, column: str, q: float):
    values = [
        getattr(m, column)
        for m in made
        if m.region.slug == region
        and since <= m.started_at < until
        and getattr(m, column) is not None
        and m.outcome not in REFUSED
    ]
    return exact_percentile(values, q)


def assert_agree(csv_rows, api, made, since, until, tolerance):
    assert set(csv_rows) == {"lima", "kyiv"}
    for region, line in csv_rows.items():
        for metric in REGION_CSV:
            for label, q in PERCENTILES.items():
                row = api[(metric.name, label)][region]
                assert (int(line["samples"]), int(line["errors"])) == (row["samples"], row["errors"])
                text = line[f"{metric.name}_{label}_ms"]
                cell = float(text)
                # The same number, not merely a close one, as the CSV rounds it.
                assert text == significant(row["value"]), (region, metric.name, label)
                if label in ("p50", "p95"):
                    assert text == significant(row[label])
                want = exact(made, region, since, until, metric.column, q)
                if tolerance:
                    assert cell == pytest.approx(want, rel=tolerance)
                else:
                    assert text == significant(want), (region, metric.name, label)


async def test_on_a_raw_window_the_csv_and_the_chart_both_give_the_exact_nearest_rank(client, made):
    since, until = T0, T0 + timedelta(hours=1)
    csv_rows, api = await both(client, since, until)
    assert int(csv_rows["lima"]["samples"]) == sum(
        m.region.slug == "lima" and since <= m.started_at < until for m in made
    )
    assert_agree(csv_rows, api, made, since, until, tolerance=0)


async def test_on_a_rolled_up_window_the_csv_and_the_chart_read_the_same_histograms(client, made):
    since, until = DAY0, DAY0 + timedelta(days=2)
    await sync_to_async(rebuild_range)(since, until)
    csv_rows, api = await both(client, since, until)
    # Within 1% from the histogram, plus at most 0.5% from the 3 digits.
    assert_agree(csv_rows, api, made, since, until, tolerance=0.015)
