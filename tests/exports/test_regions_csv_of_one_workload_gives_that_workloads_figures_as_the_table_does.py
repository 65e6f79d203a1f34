"""regions.csv read per workload: a target probed with a short prompt (fast) and with one of 100k tokens (slow),
and a second target probed only with the short one. With workload=prompt_100k the export holds the slow probe's
calls alone, with workload=short the fast ones (rows stored before workloads existed, NULL, counted as short),
and each gives /api/table's figures for the same workload: on a raw window (under an hour, exact nearest rank)
and on two days of rollups, in one bucket and in hourly buckets (whose bytes are the per-bucket writer's, which
reads each bucket through read_window)."""

from __future__ import annotations

import json
import random
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async

from devtools.regions_csv_reference import reference_csv
from probes.exports import ExportFilters
from probes.exports.regions import REGION_COLUMNS, uses_raw_rows
from probes.histogram import exact_percentile
from probes.metrics import PERCENTILES, REGION_CSV
from probes.models import Measurement
from probes.rollups import rebuild_range
from probes.significant import significant
from tests.export_support import T0, close_async_thread_connections, download, measurement, rows  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/regions.csv"
DAY0 = T0.replace(hour=0)
# Median TTFT (ms) of each probe: the long prompt's calls take ten times the short one's.
BASE = {"short": 120.0, "prompt_100k": 3000.0}


@pytest.fixture
def made(make_region, make_target, make_probe):
    """Two days of a call every 7 minutes (every 97 seconds in T0's hour) from each probe in each of its
    regions; every eleventh a timeout without TTFT; every third of the short probes' rows without a workload."""
    rng = random.Random(50)
    lima = make_region(slug="lima", city="Lima", country="PE")
    kyiv = make_region(slug="kyiv", city="Kyiv", country="UA")
    delta = make_target(name="Delta", model="delta-1")
    probes = [
        make_probe(target=delta, regions=[lima, kyiv], workload="short"),
        make_probe(target=delta, regions=[lima, kyiv], workload="prompt_100k"),
        make_probe(target=make_target(name="Echo", model="echo-1"), regions=[lima], workload="short"),
    ]
    out = []
    for probe in probes:
        for region in probe.regions.all():
            at = DAY0 + timedelta(seconds=rng.randrange(400))
            i = 0
            while at < DAY0 + timedelta(days=2):
                failed = i % 11 == 5
                ttft = BASE[probe.workload] * rng.lognormvariate(0, 0.4)
                workload = None if probe.workload == "short" and i % 3 == 0 else probe.workload
                out.append(
                    measurement(
                        probe, region, at, workload=workload,
                        outcome="timeout" if failed else "ok",
                        ttft_ms=None if failed else ttft, ttfat_ms=None if failed else ttft * rng.uniform(1.0, 1.3),
                        ttfb_ms=ttft * rng.uniform(0.6, 0.9), connect_ms=rng.uniform(20, 60),
                        total_ms=ttft * rng.uniform(2, 4),
                    )
                )  # fmt: skip
                i += 1
                at += timedelta(seconds=97) if T0 <= at < T0 + timedelta(hours=1) else timedelta(minutes=7)
    Measurement.objects.bulk_create(out)
    return out


def calls(made, workload: str, since, until) -> dict[tuple[str, str], list[Measurement]]:
    """The window's calls of the workload (NULL read as short), by (region slug, target name)."""
    out: dict[tuple[str, str], list[Measurement]] = {}
    for m in made:
        if (m.workload or "short") == workload and since <= m.started_at < until:
            out.setdefault((m.region.slug, m.target.name), []).append(m)
    return out


async def table(client, workload: str, since, until) -> dict[tuple[str, str, str], dict]:
    """/api/table's rows with data for the workload: (metric, percentile, (region, target)) -> row."""
    window = {"window": "custom", "since": since.isoformat(), "until": until.isoformat(), "workload": workload}
    api = {}
    for metric in REGION_CSV:
        for label in PERCENTILES:
            response = await client.get("/api/table", {"metric": metric.name, "percentile": label, **window})
            assert response.status_code == 200
            for row in json.loads(response.content)["rows"]:
                if row["samples"]:
                    api[(metric.name, label, (row["region_slug"], row["target"]))] = row
    return api


async def export(client, workload: str, since, until, bucket: str) -> str:
    response, text = await download(
        client, URL, bucket=bucket, since=since.isoformat(), until=until.isoformat(), workload=workload
    )
    assert response.status_code == 200
    return text


def assert_as_the_table(text, api, expected, tolerance):
    """One line per (region, target) of the workload, with its calls alone, and /api/table's figures."""
    by_pair = {(line["region"], line["target"]): line for line in rows(text)}
    assert set(by_pair) == set(expected)
    for pair, line in by_pair.items():
        mine = expected[pair]
        assert int(line["samples"]) == len(mine)
        assert int(line["errors"]) == sum(m.outcome != "ok" for m in mine)
        for metric in REGION_CSV:
            for label, q in PERCENTILES.items():
                row = api[(metric.name, label, pair)]
                assert (int(line["samples"]), int(line["errors"])) == (row["samples"], row["errors"])
                text_cell = line[f"{metric.name}_{label}_ms"]
                # The same number, not merely a close one, as the CSV rounds it.
                assert text_cell == significant(row["value"]), (pair, metric.name, label)
                want = exact_percentile([v for m in mine if (v := getattr(m, metric.column)) is not None], q)
                if tolerance:
                    assert float(text_cell) == pytest.approx(want, rel=tolerance)
                else:
                    assert text_cell == significant(want), (pair, metric.name, label)


async def test_on_a_raw_window_each_workload_gives_its_own_calls_exact_as_the_table(client, made):
    since, until = T0 + timedelta(minutes=3), T0 + timedelta(minutes=55)
    assert uses_raw_rows(ExportFilters(since=since, until=until, bucket="all", workload="prompt_100k"))
    medians = {}
    for workload in ("prompt_100k", "short"):
        expected = calls(made, workload, since, until)
        text = await export(client, workload, since, until, "all")
        assert_as_the_table(text, await table(client, workload, since, until), expected, tolerance=0)
        medians[workload] = float(next(r for r in rows(text) if r["target"] == "Delta")["ttft_p50_ms"])
    # Only Delta has the long prompt; a NULL row counts as short.
    assert {target for _, target in calls(made, "prompt_100k", since, until)} == {"Delta"}
    assert any(m.workload is None for ms in calls(made, "short", since, until).values() for m in ms)
    assert medians["prompt_100k"] > 5 * medians["short"]


@pytest.mark.parametrize("workload", ["prompt_100k", "short"])
async def test_on_rolled_up_days_each_workload_gives_its_own_calls_as_the_table(client, made, workload):
    since, until = DAY0, DAY0 + timedelta(days=2)
    await sync_to_async(rebuild_range)(since, until)
    assert not uses_raw_rows(ExportFilters(since=since, until=until, bucket="all", workload=workload))
    expected = calls(made, workload, since, until)

    text = await export(client, workload, since, until, "all")
    # Within 1% from the histogram, plus at most 0.5% from the 3 digits.
    assert_as_the_table(text, await table(client, workload, since, until), expected, tolerance=0.015)

    # Hourly buckets: every call of the workload once, none of another, and the per-bucket writer's bytes.
    hourly = await export(client, workload, since, until, "1h")
    lines = rows(hourly)
    assert len({line["bucket_start"] for line in lines}) == 48
    samples: dict[tuple[str, str], int] = {}
    for line in lines:
        pair = (line["region"], line["target"])
        samples[pair] = samples.get(pair, 0) + int(line["samples"])
    assert samples == {pair: len(mine) for pair, mine in expected.items()}
    filters = ExportFilters(since=since, until=until, bucket="1h", workload=workload)
    assert hourly == ",".join(REGION_COLUMNS) + "\n" + await sync_to_async(reference_csv)(filters)
