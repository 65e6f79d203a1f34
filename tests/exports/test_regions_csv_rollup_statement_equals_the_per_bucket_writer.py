"""regions.csv through the rollups is one statement streamed with COPY; its bytes are those of the per-bucket
Python writer it replaced (devtools/regions_csv_reference.py: read_window per bucket, csv.writer), on random rows
read from hourly rollups with and without stored percentile cells, and raw rows at once: whole
marked days, a day with unmarked hours (read from their rollups up to their cut), an hour written into after its
rollup (its rollups plus the row above the cut), a day never rolled up, partial buckets at both
edges, several probes of one target in a region, values on bucket edges and out of the layout's range, missing
phases, names a spreadsheet would evaluate, names with a comma, a double quote, CR or LF (quoted as COPY's CSV
does); 1 h, 1 d and one bucket."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async

from devtools.regions_csv_reference import reference_csv
from probes.exports import ExportFilters, regions
from probes.exports.regions import REGION_COLUMNS
from probes.histogram import _EDGES
from probes.models import HourCut, HourlyRollup, Measurement, RollupHour
from probes.partitions import MEASUREMENTS, days_between, ensure_days
from probes.readings.buckets import spans
from probes.readings.rolled_buckets import cuts, marks, plan_buckets
from probes.readings.selection import Selection
from probes.rollups import HOUR, rebuild_hour, rebuild_range
from tests.export_support import T0, close_async_thread_connections, download, measurement, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/regions.csv"
DAY0 = T0.replace(hour=0)
SINCE = DAY0 - timedelta(minutes=37)
UNTIL = DAY0 + timedelta(days=2, hours=5, minutes=13)


def value(rng: random.Random, base: float) -> float | None:
    pick = rng.random()
    if pick < 0.08:
        return None
    if pick < 0.16:
        return _EDGES[rng.randrange(len(_EDGES) - 1)]  # exactly on a bucket's lower edge
    if pick < 0.18:
        return rng.choice([0.0, 0.004, 5_000_000.0])  # under the first edge, past the last
    return base * rng.lognormvariate(0, 0.6)


@pytest.fixture
def world(make_region, make_target, make_probe):
    rng = random.Random(17)
    regions = [
        make_region(slug="lagos", city='Lagos, "Eko"\nState', country="NG"),  # CSV quoting: comma, quote, LF
        make_region(slug="Zurich", city="", country="CH"),  # upper case sorts first in code-point order
        make_region(slug="oslo", city="=Oslo", country="NO"),
    ]
    alpha = make_target(name="Alpha", model='alpha-1,\r"x"')  # and CR
    formula = make_target(name="=SUM(A1)", model="+m")
    probes = [
        make_probe(target=alpha, regions=regions),
        make_probe(target=alpha, regions=regions[:1]),  # a second probe of Alpha in Lagos
        make_probe(target=formula, regions=regions[1:]),
    ]
    made = []
    start = DAY0 - timedelta(hours=2)
    for probe in probes:
        for region in probe.regions.all():
            base = rng.uniform(50, 900)
            at = start + timedelta(seconds=rng.randrange(600))
            while at < DAY0 + timedelta(days=3):
                failed = rng.random() < 0.1
                made.append(
                    measurement(
                        probe, region, at, outcome=rng.choice(["timeout", "http_error"]) if failed else "ok",
                        ttft_ms=value(rng, base), ttfat_ms=value(rng, base * 1.2), ttfb_ms=value(rng, base * 0.7),
                        connect_ms=value(rng, base / 9), total_ms=value(rng, base * 3),
                    )
                )  # fmt: skip
                at += timedelta(seconds=rng.randrange(300, 1500))
    Measurement.objects.bulk_create(made)
    # Day 0 and day 1 rolled up (day 0 complete: every hour marked), then day 1 loses three marks
    # and gets a late row in another hour (unmarked by it, read raw); day 2 never rolled up.
    rebuild_range(DAY0, DAY0 + timedelta(days=2))
    RollupHour.objects.filter(hour__in=[DAY0 + timedelta(days=1, hours=h) for h in (5, 6, 9)]).delete()
    late = DAY0 + timedelta(days=1, hours=14, minutes=3)
    Measurement.objects.bulk_create([measurement(probes[0], regions[0], late, ttft_ms=12345.0)])
    RollupHour.objects.filter(hour=late.replace(minute=0)).delete()
    # Rollups built before their cells were stored: merged from their histograms instead.
    HourlyRollup.objects.filter(hour__gte=DAY0 + timedelta(days=1, hours=16)).update(percentile_cells=None)
    # A row built with cells in a marked hour of day 1, after the update above left it without.
    rebuild_hour(DAY0 + timedelta(days=1, hours=20))
    return probes


def test_unmarked_hours_with_a_cut_are_planned_as_their_rollups_and_the_rows_above_the_cut(world):
    f = Selection(since=SINCE, until=UNTIL)
    plan = plan_buckets(f, list(spans(f, HOUR)), marks(f), cuts(f))
    unmarked = [DAY0 + timedelta(days=1, hours=h) for h in (5, 6, 9, 14)]
    assert sorted(plan.partial) == unmarked
    late_hour = unmarked[-1]
    # The late row came after the hour's rebuild: the only raw row of its hour read.
    tail = (late_hour, late_hour + HOUR, HourCut.objects.get(hour=late_hour).cut)
    assert tail in plan.raw
    in_hour = Measurement.objects.filter(started_at__gte=late_hour, started_at__lt=late_hour + HOUR)
    assert in_hour.filter(id__gt=tail[2]).count() == 1 < in_hour.count()
    assert not any(a < h + HOUR and h < b for h in unmarked for a, b, *cut in plan.raw if not cut)


@pytest.mark.parametrize("bucket", ["1h", "1d", "all"])
async def test_the_rollup_statement_writes_the_per_bucket_writers_bytes(client, world, bucket):
    assert await HourlyRollup.objects.filter(percentile_cells__isnull=False).aexists()
    assert await HourlyRollup.objects.filter(percentile_cells__isnull=True).aexists()
    response, text = await download(client, URL, bucket=bucket, since=SINCE.isoformat(), until=UNTIL.isoformat())
    assert response.status_code == 200
    expected = (
        ",".join(REGION_COLUMNS)
        + "\n"
        + await sync_to_async(reference_csv)(ExportFilters(since=SINCE, until=UNTIL, bucket=bucket))
    )
    assert text.count("\n") > {"1h": 200, "1d": 8, "all": 4}[bucket]
    assert text == expected


async def test_a_narrowed_selection_writes_the_same_bytes_too(client, world):
    probe = world[0]
    params = {"since": SINCE.isoformat(), "until": UNTIL.isoformat(), "bucket": "1h"}
    region = await probe.regions.aget(slug="lagos")
    filters = ExportFilters(since=SINCE, until=UNTIL, bucket="1h", target_ids=[probe.target_id], region_ids=[region.id])
    _, text = await download(client, URL, target=probe.target_id, region="lagos", **params)
    assert text.count("\n") > 50
    expected = ",".join(REGION_COLUMNS) + "\n" + await sync_to_async(reference_csv)(filters)
    assert text == expected


@pytest.mark.parametrize(("bucket", "part_buckets", "readers"), [("1h", 5, 3), ("1h", 48, 1), ("1d", 1, 2)])
async def test_read_in_parts_on_several_connections_it_writes_the_same_bytes(
    client, world, settings, monkeypatch, bucket, part_buckets, readers
):
    # 1 h: 55 buckets in 11 parts on three connections, or one statement; 1 d: a part per day.
    settings.LATENCY_EXPORT_READERS = readers
    monkeypatch.setattr(regions, "PART_BUCKETS", part_buckets)
    filters = ExportFilters(since=SINCE, until=UNTIL, bucket=bucket)
    assert len(regions.parts(filters, readers)) == {("1h", 3): 11, ("1h", 1): 1, ("1d", 2): 4}[bucket, readers]
    _, text = await download(client, URL, bucket=bucket, since=SINCE.isoformat(), until=UNTIL.isoformat())
    expected = ",".join(REGION_COLUMNS) + "\n" + await sync_to_async(reference_csv)(filters)
    assert text == expected


@pytest.mark.parametrize("bucket", ["1h", "all"])
async def test_a_selection_starting_early_in_a_marked_hour_reads_it_less_its_rows_before_and_writes_the_same_bytes(
    client, world, bucket
):
    first = DAY0 + timedelta(days=1, hours=2)
    since, until = first + timedelta(minutes=11), first + timedelta(hours=6, minutes=40)
    # Every raw row of that hour is still there: its days have partitions of their own (retention drops them
    # only whole), so its rollups less its rows before the selection are its rows inside it.
    await sync_to_async(ensure_days)(MEASUREMENTS, days_between(DAY0 - timedelta(days=1), DAY0 + timedelta(days=4)))
    f = Selection(since=since, until=until)
    plan = await sync_to_async(plan_buckets)(f, list(spans(f, HOUR)), await sync_to_async(marks)(f))
    assert plan.head[0] == first and plan.minus == [(first, since)]
    assert not any(a < since for a, *_ in plan.raw)

    _, text = await download(client, URL, bucket=bucket, since=since.isoformat(), until=until.isoformat())
    filters = ExportFilters(since=since, until=until, bucket=bucket)
    expected = ",".join(REGION_COLUMNS) + "\n" + await sync_to_async(reference_csv)(filters)
    assert text.count("\n") > {"1h": 20, "all": 4}[bucket]
    assert text == expected
