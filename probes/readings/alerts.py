"""What an alert pass reads: a window's calls per (target, region), the
missed runs in it, and each (target, region)'s 7-day baseline.

Windows are read from raw rows (a rule's window is at most 6 h, RAW_MAX),
so a window's percentile is exact (nearest rank, as everywhere). Baselines
are read through read_window like every long range: rollups plus raw rows
for what is not rolled up, merged histograms, and
merge_cache keeps the merged parts between passes (the days part changes
once a day, the hours part once an hour), so a pass every minute does not
re-merge a week of rollups."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.db import connection

from probes.engine.result import REFUSED
from probes.models import Measurement, Region
from probes.readings.fleet import missed_counts
from probes.readings.rows import Reading
from probes.readings.slots import started_in_params
from probes.readings.window import read_window
from probes.rollups.periods import floor_hour

# The metrics a baseline keeps: every latency metric a rule can watch, and
# the milestones the phase attribution compares (dns, connect, tls, ttfb,
# ttft, total).
BASELINE_METRICS = ("dns", "connect", "tls", "ttfb", "ttft", "ttfat", "total")
BASELINE_DAYS = 7
# A same-hour baseline (the hour of day of the pass, on each of the 7 days
# before) is used when it has at least this many calls; otherwise the whole
# 7 days; with fewer calls than this in the whole 7 days there is no baseline.
BASELINE_MIN_SAMPLES = 30


class Call(NamedTuple):
    """One measurement as an alert pass sees it (times in ms, None when missing)."""

    started_at: datetime
    probe_id: int
    ok: bool
    # Refused by the provider for capacity (probes.engine.result.REFUSED): a failed call (not ok) all the same.
    refused: bool
    dns: float | None
    connect: float | None
    tls: float | None
    ttfb: float | None
    ttft: float | None
    ttfat: float | None
    total: float | None


CALL_COLUMNS = ("dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "ttft_ms", "ttfat_ms", "total_ms")


def window_calls(since: datetime, until: datetime, target_ids: list[int]) -> dict[tuple[int, int], list[Call]]:
    """{(target_id, region_id): [Call, ...]} of calls started in [since,
    until), oldest first. The (target, region, started_at) index answers it
    per pair; the target list is explicit so it is never a scan across
    every target's history."""
    if not target_ids:
        return {}
    table = Measurement._meta.db_table
    regions = Region._meta.db_table
    columns = ", ".join(CALL_COLUMNS)
    out: dict[tuple[int, int], list[Call]] = defaultdict(list)
    with connection.cursor() as cur:
        # Every region (the foreign key holds every row's) is named so the (target, region, started_at) index
        # can answer: on target and time alone the planner takes the BRIN index on started_at, which rows
        # written into old pages' free space after a vacuum widen until it reads most of the table
        # (docs/benchmarks.md, "Dashboard reads").
        params: dict = {"targets": list(target_ids), "refused": list(REFUSED)}
        window = started_in_params([(since, until)], params, "w")
        cur.execute(
            f"""
            SELECT target_id, region_id, started_at, probe_id, outcome = 'ok', outcome = ANY(%(refused)s), {columns}
            FROM {table}
            WHERE target_id = ANY(%(targets)s) AND region_id = ANY(ARRAY(SELECT id FROM {regions}))
              AND {window}
            ORDER BY started_at
            """,
            params,
        )
        for target_id, region_id, *rest in cur.fetchall():
            out[(target_id, region_id)].append(Call(*rest))
    return out


def missed_in_window(
    since: datetime, until: datetime, target_ids: list[int], region_ids: list[int]
) -> dict[tuple[int, int], int]:
    """{(target_id, region_id): runs scheduled in [since, until) nobody picked up} (probes.readings.fleet)."""
    return {(t, r): n for (r, t), n in missed_counts((since, until), target_ids, region_ids).items()}


@dataclass
class Baseline:
    """A (target, region)'s reading over its baseline period."""

    reading: Reading
    same_hour: bool  # the hour of day of the pass on each of the 7 days before; else the whole 7 days

    def percentile(self, metric: str, q: float) -> float | None:
        return self.reading.percentile(metric, q)

    def medians(self) -> dict[str, float | None]:
        return {m: self.reading.percentile(m, 0.5) for m in BASELINE_METRICS}


def baselines(target_ids: list[int], now: datetime) -> dict[tuple[int, int], Baseline]:
    """{(target_id, region_id): Baseline} over the 7 days before the hour of
    `now`: the same hour of day where those 7 hours hold at least
    BASELINE_MIN_SAMPLES calls, else the whole 7 days where they do. Pairs
    with fewer calls have no baseline (a factor condition cannot breach)."""
    if not target_ids:
        return {}
    hour = floor_hour(now)
    group = ("target_id", "region_id")
    week = read_window(
        hour - timedelta(days=BASELINE_DAYS), hour, group_by=group, target_ids=target_ids,
        metrics=BASELINE_METRICS, cache=True,
    )  # fmt: skip
    same: dict[tuple, Reading] = defaultdict(Reading)
    for day in range(1, BASELINE_DAYS + 1):
        start = hour - timedelta(days=day)
        part = read_window(
            start, start + timedelta(hours=1), group_by=group, target_ids=target_ids,
            metrics=BASELINE_METRICS, cache=True,
        )  # fmt: skip
        for key, reading in part.items():
            same[key].merge(reading)
    out: dict[tuple[int, int], Baseline] = {}
    for key, reading in week.items():
        pair = (int(key[0]), int(key[1]))
        hourly = same.get(key)
        if hourly is not None and hourly.samples >= BASELINE_MIN_SAMPLES:
            out[pair] = Baseline(hourly, same_hour=True)
        elif reading.samples >= BASELINE_MIN_SAMPLES:
            out[pair] = Baseline(reading, same_hour=False)
    return out
