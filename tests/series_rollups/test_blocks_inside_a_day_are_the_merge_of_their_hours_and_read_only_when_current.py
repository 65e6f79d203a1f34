"""The series blocks inside a day (3 h and 12 h, probes.rollups.hour_blocks): each is the merge of its hourly
rollups (with the samples-weighted sum of their midpoints), a probe re-pointed during one counted under its latest
hour's target; a window read per target and region takes them at its ends and reads exactly what the hourly rollups
give; a late row keeps the blocks holding its hour unread until the rebuild of that hour, which builds them again."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from probes.histogram import Histogram
from probes.models import HourlyRollup, Measurement, SeriesBlockMark, SeriesRollup
from probes.readings.plan import coverage, hour_tiles
from probes.rollups import DAY, HOUR, floor_day, floor_hour, rebuild_hour, rebuild_range
from probes.rollups.block_merge import JSON_COLUMNS
from probes.rollups.periods import SERIES_HOUR_GRAINS, block_start
from tests.region_rollups.rows import fill
from tests.series_rollups.blocks import assert_same, read, read_without_blocks, store_late_row


def hour_blocks() -> dict[tuple, dict]:
    fields = ["probe", "region", "target", "span_hours", "start", "samples", "errors", "sample_seconds", *JSON_COLUMNS]
    rows = SeriesRollup.objects.filter(span_hours__in=SERIES_HOUR_GRAINS).values(*fields)
    return {(r["probe"], r["region"], r["span_hours"], r["start"]): r for r in rows}


def hour_marks() -> set[tuple[int, datetime]]:
    return set(SeriesBlockMark.objects.filter(span_hours__in=SERIES_HOUR_GRAINS).values_list("span_hours", "start"))


def merge_of_hours(probe: int, region: int, start: datetime, span: int) -> dict:
    hours = HourlyRollup.objects.filter(probe=probe, region=region, hour__gte=start, hour__lt=start + HOUR * span)
    merged: dict = {"samples": 0, "errors": 0, "sample_seconds": 0, "outcomes": Counter(), "target": None}
    hists = {column: Histogram() for column in JSON_COLUMNS[1:]}
    for row in hours.order_by("hour"):
        merged["samples"] += row.samples
        merged["sample_seconds"] += row.samples * (int(row.hour.timestamp()) + 1800)
        merged["errors"] += row.errors
        merged["outcomes"].update(row.outcomes)
        merged["target"] = row.target_id
        for column in hists:
            hists[column].merge(Histogram.from_sparse(getattr(row, column)))
    return merged | hists


def test_every_block_inside_a_day_is_the_merge_of_its_hours_under_its_latest_target(probes, regions):
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, day, 48, per_hour=2)
    # The first probe is re-pointed at the second probe's target 5 hours into the day: its 3 h block from 03:00
    # and its 12 h block from 00:00 hold hours of both targets.
    moved, other = probes[0], next(p for p in probes if p.target_id != probes[0].target_id)
    Measurement.objects.filter(probe=moved, started_at__gte=day + 5 * HOUR).update(target=other.target_id)
    rebuild_range(day, day + 2 * DAY)

    found = hour_blocks()
    assert {(span, start) for _, _, span, start in found} == {
        (grain, day + HOUR * grain * i) for grain in SERIES_HOUR_GRAINS for i in range(48 // grain)
    }
    assert hour_marks() == {(span, start) for _, _, span, start in found}
    for (probe, region, span, start), row in found.items():
        want = merge_of_hours(probe, region, start, span)
        assert row["samples"] == want["samples"] > 0
        assert row["errors"] == want["errors"]
        assert row["sample_seconds"] == want["sample_seconds"]
        assert row["target"] == want["target"]
        assert row["outcomes"] == dict(want["outcomes"])
        for column in JSON_COLUMNS[1:]:
            assert Histogram.from_sparse(row[column]) == want[column], (span, start, column)
    region = moved.regions.first().id
    assert found[(moved.id, region, 3, day + 3 * HOUR)]["target"] == other.target_id
    assert found[(moved.id, region, 12, day)]["target"] == other.target_id
    assert found[(moved.id, region, 3, day)]["target"] == moved.target_id


def test_a_window_takes_blocks_at_both_ends_and_reads_what_the_hours_give(probes, regions):
    day = floor_day(datetime.now(UTC)) - 4 * DAY
    fill(probes, day, 3 * 24, per_hour=1)
    rebuild_range(day, day + 3 * DAY)
    # From 01:17 on the first day to 23:00 on the third: the first day's hours from 02:00 and the third's are
    # blocks and loose hours, the second day is whole.
    since, until = day + timedelta(hours=1, minutes=17), day + 2 * DAY + 23 * HOUR
    plan = coverage(since, until)
    blocks, loose = hour_tiles(plan.hours)
    assert (12, day + 12 * HOUR) in blocks and (12, day + 2 * DAY) in blocks and (3, day + 3 * HOUR) in blocks
    assert loose == [day + 2 * HOUR, day + 2 * DAY + 21 * HOUR, day + 2 * DAY + 22 * HOUR]

    got, used = read(since, until, probes)
    assert used
    assert_same(got, read_without_blocks(since, until, probes))


def test_a_late_row_keeps_the_blocks_of_its_hour_unread_until_its_hour_is_rebuilt(probes, regions):
    day = floor_day(datetime.now(UTC)) - 3 * DAY
    fill(probes, day, 24, per_hour=1)
    rebuild_range(day, day + DAY)
    since, until = day + timedelta(minutes=40), day + 23 * HOUR
    before, _ = read(since, until, probes)

    late_hour = day + 7 * HOUR
    key = store_late_row(probes[0], late_hour)
    holding = {(grain, block_start(late_hour, HOUR * grain)) for grain in SERIES_HOUR_GRAINS}
    blocks, _ = hour_tiles(coverage(since, until).hours)
    assert not holding & set(blocks)
    during, used = read(since, until, probes)
    assert used
    assert during[key].samples == before[key].samples + 1
    assert_same(during, read_without_blocks(since, until, probes))

    rebuild_hour(late_hour)
    assert holding <= hour_marks()
    # The window starts 40 minutes into the day, so of the blocks holding the hour only the 3 h one lies in it.
    assert (3, day + 6 * HOUR) in hour_tiles(coverage(since, until).hours)[0]
    after, used = read(since, until, probes)
    assert used
    assert after[key].samples == before[key].samples + 1
    assert_same(after, during)


def test_a_block_is_built_by_the_rebuild_that_ends_its_last_hour_and_never_holding_the_current_hour(probes, regions):
    now = datetime.now(UTC)
    current = floor_hour(now)
    # The latest 3 h block that has ended, and the hours since it up to the current one.
    start = block_start(current, 3 * HOUR) - 3 * HOUR
    fill(probes, start, (current - start) // HOUR + 1, per_hour=1)
    for hour in (start, start + HOUR):
        rebuild_hour(hour)
    assert (3, start) not in hour_marks()
    assert not any(s == start for _, _, _, s in hour_blocks())
    rebuild_hour(start + 2 * HOUR)
    assert (3, start) in hour_marks()
    rebuild_hour(current)
    assert not any(s <= current < s + HOUR * span for span, s in hour_marks())
    assert not any(s <= current < s + HOUR * span for _, _, span, s in hour_blocks())
