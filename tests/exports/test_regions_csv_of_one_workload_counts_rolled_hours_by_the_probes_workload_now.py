"""regions.csv of one workload over rolled-up hours reads the rollups of the probes that have the workload now, as
the dashboard does (probes.readings.workload): a probe sent short prompts for a day, was rolled up, then changed to
prompts of 100k tokens. Read with workload=prompt_100k, its rolled-up hours count as prompt_100k, and the hour the
export starts early in is its rollups less the rows before the export, taken away by probe (the rows the rollups
counted, short as they were), so each call inside the export counts once; its raw rows after the change count by
their own workload. Read with a workload no probe has now, no rollup is read at all (an empty list of probes is
none, not every one)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async

from devtools.regions_csv_reference import reference_csv
from probes.exports import ExportFilters
from probes.exports.regions import REGION_COLUMNS, uses_raw_rows
from probes.models import Measurement, Probe
from probes.partitions import MEASUREMENTS, days_between, ensure_days
from probes.readings.buckets import spans
from probes.readings.rolled_buckets import marks, plan_buckets
from probes.readings.selection import Selection
from probes.rollups import HOUR, rebuild_range
from tests.export_support import T0, close_async_thread_connections, download, measurement, rows  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/regions.csv"
DAY0 = T0.replace(hour=0)
CHANGED = DAY0 + timedelta(days=1)
SINCE = DAY0 + timedelta(hours=2, minutes=11)
UNTIL = CHANGED + timedelta(hours=3, minutes=20)


@pytest.fixture
def made(make_region, make_target, make_probe):
    """A short-prompt call every 5 minutes through day 0, rolled up; then the probe's workload changed to
    prompt_100k and three and a half hours of raw rows, alternately short (a worker of the old release) and
    prompt_100k."""
    # The head hour's raw rows are kept (a partition per day), so an export starting early in it reads its rollups.
    ensure_days(MEASUREMENTS, days_between(DAY0 - timedelta(days=1), DAY0 + timedelta(days=3)))
    region = make_region(slug="oslo", city="Oslo", country="NO")
    probe = make_probe(target=make_target(name="Delta", model="delta-1"), regions=[region], workload="short")
    day0 = [
        measurement(probe, region, DAY0 + timedelta(minutes=5 * i), workload="short", ttft_ms=200.0 + i)
        for i in range(24 * 12)
    ]
    Measurement.objects.bulk_create(day0)
    rebuild_range(DAY0, CHANGED)
    Probe.objects.filter(id=probe.id).update(workload="prompt_100k")
    later = [
        measurement(probe, region, CHANGED + timedelta(minutes=5 * i), workload=kind, ttft_ms=3000.0 + i)
        for i, kind in enumerate(["prompt_100k", "short"] * 21)
    ]
    Measurement.objects.bulk_create(later)
    return day0, later


async def export(client, workload: str, bucket: str) -> str:
    response, text = await download(
        client, URL, bucket=bucket, since=SINCE.isoformat(), until=UNTIL.isoformat(), workload=workload
    )
    assert response.status_code == 200
    expected = await sync_to_async(reference_csv)(
        ExportFilters(since=SINCE, until=UNTIL, bucket=bucket, workload=workload)
    )
    # The statement writes the per-bucket writer's bytes (read_window bucket by bucket).
    assert text == ",".join(REGION_COLUMNS) + "\n" + expected
    return text


async def table_samples(client, workload: str) -> int:
    window = {"window": "custom", "since": SINCE.isoformat(), "until": UNTIL.isoformat(), "workload": workload}
    response = await client.get("/api/table", window)
    assert response.status_code == 200
    return sum(row["samples"] for row in json.loads(response.content)["rows"])


async def test_the_export_starts_early_in_a_rolled_up_hour(made):
    f = Selection(since=SINCE, until=UNTIL, workload="prompt_100k")
    plan = await sync_to_async(plan_buckets)(f, list(spans(f, HOUR)), await sync_to_async(marks)(f))
    assert plan.head[0] == SINCE.replace(minute=0) and plan.minus == [(SINCE.replace(minute=0), SINCE)]
    assert not uses_raw_rows(ExportFilters(since=SINCE, until=UNTIL, bucket="all", workload="prompt_100k"))


@pytest.mark.parametrize("bucket", ["all", "1h"])
async def test_rolled_hours_count_under_the_probes_workload_now_and_raw_rows_under_their_own(client, made, bucket):
    day0, later = made
    rolled = sum(m.started_at >= SINCE for m in day0)
    new = sum(m.started_at < UNTIL and m.workload == "prompt_100k" for m in later)
    old = sum(m.started_at < UNTIL and m.workload == "short" for m in later)
    assert rolled and new and old

    long = sum(int(line["samples"]) for line in rows(await export(client, "prompt_100k", bucket)))
    # Every short call before the change counted once: the head hour's rows before the export were taken away.
    assert long == rolled + new == await table_samples(client, "prompt_100k")

    # Short now names no probe: the rolled-up hours are not read, the raw rows sent short are.
    short = sum(int(line["samples"]) for line in rows(await export(client, "short", bucket)))
    assert short == old == await table_samples(client, "short")


async def test_a_workload_no_probe_has_reads_no_rollup(client, made):
    text = await export(client, "cached_pair", "all")
    assert rows(text) == []
    assert await table_samples(client, "cached_pair") == 0
