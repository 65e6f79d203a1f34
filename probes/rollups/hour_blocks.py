"""Series rollups inside a day: one probe's hourly rollups from one region merged over EPOCH-aligned blocks of 3 and 12
hours (periods.SERIES_HOUR_GRAINS), kept in SeriesRollup beside the blocks of days (series_blocks).

Why: a window read per series (the table of every target: 900 series at bench/dashboard.py's size) takes its runs
of complete days from blocks of days (series_blocks), but the hours at its two ends, before its first block of days
and after its last, from hourly rows: up to 46 of them per series, 20,000 to 41,000 for the table of every target,
and more with a complete day beside them no block of days covers. With these blocks an end is at most 2 hours, 3
blocks of 3 h and one of 12 h (a loose complete day two of 12 h). The 12 h blocks are also what the 2-day blocks
are merged from (series_blocks). The time series of named targets over 7 and
30 days (3 h and 12 h buckets) reads one block per series and bucket instead of 3 or 12 hourly rows (10,800 for one
target over 30 days at 100 M rows); a block's sample_seconds gives its point the `at` its hours would.

Built in the transaction that rebuilds hours (build._build), under the day's lock (the blocks lie inside the day,
since 3 and 12 divide 24): every block holding a rebuilt hour loses its rows and its SeriesBlockMark; those whose
hours will all be marked when the transaction commits are merged again from the hourly rows, and marked after the
hours' own marks if every hour of theirs is marked then (series_blocks.mark_complete, as the blocks of days). A
reader takes a block only with its mark and all its hours marked (plan.hour_tiles), so never a stale one: a late row
unmarks its hour, and the rebuild that marks the hour again rebuilds the block. An installation whose hours were
marked before these blocks existed has no mark for them, and reads the hours until they are rebuilt.

A block counts a probe re-pointed at another target during it under the target of its latest hour, as an hourly
row counts its hour under its latest row's (build._hourly_sql).

Merged in Python with numpy (probes.rollups.block_merge.merged), as readers merge (probes.readings.rollup), not in
SQL: expanding a day's hourly histograms entry by entry with get_byte took several times as long as both grains take
here. They still make a full rollup dearer (docs/benchmarks.md, "Rollup builds").
Unlike block_merge.merge_blocks, which merges one grain from the grain below it, the hourly rows are read once for
both grains: each 3 h group counts into its 3 h block and its 12 h block.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection

from probes.rollups.block_merge import HIST_COLUMNS, merged
from probes.rollups.periods import EPOCH, HOUR, SERIES_HOUR_GRAINS, block_start, hour_runs, sample_seconds_sql
from probes.rollups.series_blocks import mark_complete

if TYPE_CHECKING:
    from probes.rollups.build import HourBuild

FINEST = SERIES_HOUR_GRAINS[0]
UNIX_EPOCH_SECONDS = int(EPOCH.timestamp())


def _holding(since: datetime, until: datetime, grain: int) -> list[datetime]:
    """The starts of the blocks of `grain` hours holding an hour of [since, until)."""
    span = HOUR * grain
    first, last = block_start(since, span), block_start(until - HOUR, span)
    return [first + span * i for i in range((last - first) // span + 1)]


def build(job: HourBuild) -> Callable[[], None]:
    """The series_hours kind's builder (catalogue.SERIES_HOURS): rebuild the blocks holding the rebuilt hours
    (rebuild, with the hours the day ends with marked); returns the step marking them once the hours' marks are
    written."""
    built = rebuild(job.since, job.until, job.now, job.ends_marked)
    return functools.partial(mark_complete, built, job.now)


def rebuild(
    since: datetime, until: datetime, now: datetime, marked: set[datetime]
) -> dict[int, tuple[datetime, datetime]]:
    """Delete the blocks holding an hour of [since, until) (whole hours of one UTC day) with their marks, and merge
    again from the hourly rows those whose every hour is in `marked` (the hours that will be marked when the
    caller's transaction commits). Call it in the transaction that rebuilt those hours' rollups, holding the day's
    lock (build._build), after its hourly statement. Returns, per grain, the range of the blocks written, for
    series_blocks.mark_complete: the blocks between them were not written because an hour of theirs will not be
    marked (marks only go away meanwhile), so it leaves them unmarked too."""
    from probes.models import SeriesBlockMark, SeriesRollup

    wanted: list[tuple[int, datetime]] = []
    with connection.cursor() as cur:
        for grain in SERIES_HOUR_GRAINS:
            starts = _holding(since, until, grain)
            span = HOUR * grain
            for table in (SeriesBlockMark._meta.db_table, SeriesRollup._meta.db_table):
                cur.execute(
                    f"DELETE FROM {table} WHERE span_hours = %s AND start >= %s AND start < %s",
                    [grain, starts[0], starts[-1] + span],
                )
            wanted += [(grain, s) for s in starts if all(s + HOUR * i in marked for i in range(grain))]
    if wanted:
        _write(wanted, now)
    spans = {grain: [s for g, s in wanted if g == grain] for grain in SERIES_HOUR_GRAINS}
    return {grain: (starts[0], starts[-1] + HOUR * grain) for grain, starts in spans.items() if starts}


def _write(blocks: list[tuple[int, datetime]], now: datetime) -> None:
    """Merge and insert the SeriesRollup rows of the blocks: the hourly rows of their hours read once, grouped per
    probe, region and finest block in SQL (their histograms one after another, as readers read them), the finest
    blocks merged by numpy and the coarser ones summed from them."""
    from probes.models import HourlyRollup, SeriesRollup

    hours = {start + HOUR * i for grain, start in blocks for i in range(grain)}
    runs = hour_runs(hours)
    where = " OR ".join(["(hour >= %s AND hour < %s)"] * len(runs))
    params: list = [timedelta(hours=FINEST), EPOCH]
    for a, b in runs:
        params += [a, b]
    histograms = ", ".join(f"string_agg({c}, ''::bytea)" for c in HIST_COLUMNS)
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT probe_id, region_id, extract(epoch FROM b)::int8, max(extract(epoch FROM hour))::int8,
                   (array_agg(target_id ORDER BY hour DESC))[1], sum(samples), sum(errors),
                   -- Whole numbers below 2 ** 53, so their sums in Python below are exact too.
                   sum({sample_seconds_sql("h")})::float8,
                   {histograms}
            FROM (SELECT *, date_bin(%s, hour, %s) AS b FROM {HourlyRollup._meta.db_table} WHERE {where}) h
            GROUP BY probe_id, region_id, b
            """,
            params,
        )
        fine = cur.fetchall()
        if not fine:
            return
        # The outcomes summed per finest group in SQL: parsing every hourly row's jsonb in Python cost more.
        cur.execute(
            f"""
            SELECT probe_id, region_id, extract(epoch FROM date_bin(%s, hour, %s))::int8, o.key, sum(o.value::int8)
            FROM {HourlyRollup._meta.db_table} CROSS JOIN LATERAL jsonb_each_text(outcomes) o WHERE {where}
            GROUP BY 1, 2, 3, 4
            """,
            params,
        )
        counted = cur.fetchall()
    # Every output row: (grain, start seconds, probe, region) -> its position; the finest groups map to one row of
    # theirs (if that block is wanted) and one of each coarser block wanted.
    wanted = {(grain, int(start.timestamp())) for grain, start in blocks}
    rows: dict[tuple[int, int, int, int], int] = {}
    latest: dict[int, tuple[int, int]] = {}  # row -> (latest hour, its target)
    totals: list[list[int]] = []
    seconds: list[float] = []
    outcomes: list[Counter] = []
    into: list[list[int]] = []  # per finest group, the rows it counts in
    for probe, region, start, last_hour, target, samples, errors, sample_seconds, *_ in fine:
        counts_in = []
        for grain in SERIES_HOUR_GRAINS:
            block = start - (start - UNIX_EPOCH_SECONDS) % (grain * 3600)
            if (grain, block) not in wanted:
                continue
            row = rows.setdefault((grain, block, probe, region), len(rows))
            if row == len(totals):
                totals.append([0, 0])
                seconds.append(0.0)
                outcomes.append(Counter())
            totals[row][0] += samples
            totals[row][1] += errors
            seconds[row] += sample_seconds
            if row not in latest or latest[row][0] < last_hour:
                latest[row] = (last_hour, target)
            counts_in.append(row)
        into.append(counts_in)
    for probe, region, start, name, n in counted:
        for grain in SERIES_HOUR_GRAINS:
            row = rows.get((grain, start - (start - UNIX_EPOCH_SECONDS) % (grain * 3600), probe, region))
            if row is not None:
                outcomes[row][name] += int(n)
    packed = {c: merged([rec[8 + k] for rec in fine], into, len(rows)) for k, c in enumerate(HIST_COLUMNS)}
    columns = ", ".join(
        ["probe_id", "region_id", "target_id", "span_hours", "start", "samples", "errors", "sample_seconds", "outcomes",
         "updated_at", *HIST_COLUMNS]
    )  # fmt: skip
    copying = f"COPY {SeriesRollup._meta.db_table} ({columns}) FROM STDIN"
    # Stored a block's rows together (by grain and start), as readers of every series ask for them, and in it a
    # probe's regions together, as a time series of one target reads them (one run per bucket).
    order = sorted(rows.items())
    with connection.cursor() as cur, cur.cursor.copy(copying) as copy:
        for (grain, start, probe, region), row in order:
            copy.write_row(
                [
                    probe,
                    region,
                    latest[row][1],
                    grain,
                    EPOCH + timedelta(seconds=start - UNIX_EPOCH_SECONDS),
                    totals[row][0],
                    totals[row][1],
                    seconds[row],
                    json.dumps({k: n for k, n in sorted(outcomes[row].items()) if n}),
                    now,
                    *(packed[c][row] for c in HIST_COLUMNS),
                ]
            )
