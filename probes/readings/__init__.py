"""The one read package: every figure a page, the API or a CSV shows comes
from here, so the CSV and the chart cannot disagree.

Facade (a Selection in, typed rows out; see rows.py):
    summary(sel)            per region: the map        -> [RegionSummaryRow]
    table(sel)              per region x target        -> [TableRow]
    ranking(slug, sel)      per target, from one region -> [RankingRow]
    mix(shares, sel)        per target, for a mix of users across regions
                            (mixture percentiles, coverage, fiber floor) -> [MixRow]
    mix_shares(shares)      the mix's regions, shares normalised -> [MixShare]
    leaderboard(target_ids, sel, region=SLUG | shares=MIX)
                            a model group's targets ranked, with 95 % order-statistic
                            intervals of p50/p95 TTFT and ties -> [LeaderboardRow]
    leaderboard_matrix(target_ids, sel)
                            region x target of sel's percentile, winner and ties -> [MatrixRow]
                            (leaderboard.py)
    phases(sel)             phase medians per region   -> [PhaseRow]
    distribution(sel)       histogram per region       -> {slug: Histogram}
    distribution_rows(sel)  the same, with each region's p50/p95 rows
    distribution_by_target(sel)  per target x region -> ({(target_id, slug): Histogram}, [TargetDistributionRow])
    series(sel)             per time bucket x region   -> [SeriesRow]
    series_by_target(sel)   per target x time bucket x region -> [TargetSeriesRow]
    phases(sel, by_target=True)  phase medians per target x region
    buckets_are_raw / bucket_statement / rollup_bucket_statement / spans / bucket_rows
                            per time bucket x region x target (regions.csv)
    recent(target_id, limit, failures=False)           -> [dict]
    stored_measurements(filters)   measurements as stored, one dict each (stored_fields()), unordered:
                            the API pages through them (stored.py)
    worker_rows(region_ids, now)   region workers heard lately -> [WorkerRow]
    region_health(now) / region_status(now)
                            {region_id: live | stale | dark} (fleet.py)
    missed_counts((since, until), target_ids, region_ids)
                            {(region_id, target_id): runs nobody picked up}
    real_users.rows(since, until, target_ids=..., by_target=True, bucket=None)
                            real users per place [x target] [x hour or day] -> Rows of [RealUserRow]
    real_users.nearby(since, until, region_ids=..., target_ids=...)
                            real users near each region beside its probes and the floor -> Nearby
    real_users.region_shares(since, until)   real users' places as a mix -> {region_id: calls}
                            (realusers.py: hour resolution, k-anonymity; read there)
    slos.objective_rows(now, ids, cells=) / slos.objective_row(id, now)
                            objectives: attainment, error budget, burn rates, exhaustion, status
                            [per target x region and region] -> [ObjectiveRow]
    slo_history.goodput(id, since, until, bucket) / slo_history.burn_down(id, now) / slos.counts_in(ids, windows)
                            an objective over time, and exact counts in any windows (slos.py: read there)
    slo_report.report(id, since, until)      the SLA report (page, CSV, API) -> Report
    status.status_reading(page_id, now)      a status page: each target's status, daily uptime, TTFT by region,
                            incidents with their public updates, maintenance -> StatusReading (status.py)
    open_incidents(target_id=None, region_id=None)   open, newest first -> [IncidentRow]
    open_count()            how many incidents are open
    incidents_overlapping(since, until, target_ids=, region_ids=)   overlapping a window, oldest first
                            -> [IncidentRow] (the over-time chart's shading)
    incident_history(target_id=None, state=...)      newest first, sliced by a Paginator -> IncidentHistory
    incident_detail(id)     one incident               -> IncidentRow | None
    timeline(id)            its events in order        -> [TimelineRow]
    updates(id)             its public updates in order -> [UpdateRow]
    active_silences(target_id, now)                  silences not yet ended -> [SilenceRow]
                            (incidents.py)
    latest_results()        the newest measurement per target x region -> [LatestResult]
    window_quantiles(now)   TTFT quantiles per target x region over trailing windows -> [WindowQuantile]
    tallies()               measurements stored so far per target x region x outcome,
                            with the TTFT histogram (probes.tally) -> [Tally]
    region_rows(now)        regions with place, status, last heartbeat, live workers -> [RegionRow]
                            (latest.py: what /metrics reads)
    workloads(target_ids, since, until, region_ids=, bucket=)
                            per target x region: each workload class's calls and median TTFT and input tokens, the
                            prefill slope (ms per 1k input tokens) and rate, the cache saving and hit ratio, the
                            rate-limited share and headroom over time -> Workloads (workloads.py: raw rows, at
                            most 7 days)

The percentile, one definition. The q-quantile of n values is the value of
rank ceil(q * n) (at least 1) in ascending order: nearest rank, with q * n
computed exactly (probes.histogram._rank in Python, rank.rank_sql in SQL
with q as numeric; not percentile_disc, whose float8 rank can land one
off, except in window_quantiles, for quantiles proven to rank exactly in
float8: rank.float_rank_agrees). It is read
- exactly, from raw rows, when the selection is read from raw rows alone: a
  window of at most RAW_MAX (6 h), an outcome filter, regions.csv buckets
  shorter than an hour, and time-series buckets that are not whole marked
  hours;
- otherwise from merged histograms (probes.histogram: 2% log buckets from
  0.01 to 3.6 million of the metric's unit, i.e. a hundredth of a millisecond to an hour, or 0.01 to
  3.6 million tok/s), where it is the geometric midpoint of the bucket
  holding the rank-th value: within sqrt(1.02) - 1 = 0.995% of the exact
  value (values under 0.01 read as 0). Raw rows at the edges of such a
  window are added to the same histograms, so a figure never mixes the two
  kinds.
Merging histograms is exact (counts add), so a rolled-up reading equals a
reading of the same rows' histograms from raw rows, whichever hours were
rolled up. Every selectable metric, tokens_per_s included, has a histogram
in the rollups, so p50, p95 and the chosen percentile exist at every window.

Planning (plan.py): rollups for marked hours, raw rows for the rest
(window.py merges them; cache.py keeps merged rollup parts). Reads of every
target by region (map, distribution, phases, time series) take the marked
hours from region rollups instead (1 h to 7 d blocks of every probe of a
region, probes.rollups.ladder), tiled by plan.ladder_tiles; other reads
take runs of complete days (all 24 hours marked) from series rollups (2 to
16-day blocks of one probe, region and target, probes.rollups.series_blocks)
where marked, tiled by plan.series_tiles, and runs of their other marked
hours from the series blocks inside a day (3 h and 12 h,
probes.rollups.hour_blocks), tiled by plan.hour_tiles, hourly rollups for
the rest.

Workloads (workload.py): a Selection's workload narrows raw rows by their own
workload and rollups by the probes that now have it; a reading of one never
uses region rollups, which merge every probe of a region.

Slot time (slots.py): raw rows are partitioned by day of scheduled_for, read
by started_at. Every read of raw rows adds to its started_at bounds the
scheduled_for bounds probes.slot_time's rule implies (the same rows, from the
partitions of those days only), through slots.py's helpers and nowhere else;
the reads without a window (latest_results, recent) look in the last day
first.
"""

from probes.readings import realusers as real_users
from probes.readings import slo_history, slo_report, slos, status
from probes.readings.buckets import (
    bucket_rows,
    bucket_statement,
    buckets_are_raw,
    rollup_bucket_statement,
    spans,
)
from probes.readings.fleet import (
    REGION_STATUSES,
    RegionHealth,
    WorkerRow,
    missed_counts,
    region_health,
    region_status,
    worker_rows,
)
from probes.readings.incidents import (
    IncidentHistory,
    IncidentRow,
    SilenceRow,
    TimelineRow,
    active_silences,
    incident_detail,
    incident_history,
    incidents_overlapping,
    open_count,
    open_incidents,
    timeline,
    updates,
)
from probes.readings.latest import (
    TRAILING_QUANTILES,
    TRAILING_WINDOWS,
    LatestResult,
    RegionRow,
    Tally,
    WindowQuantile,
    latest_results,
    region_rows,
    tallies,
    window_quantiles,
)
from probes.readings.leaderboard import leaderboard
from probes.readings.leaderboard import matrix as leaderboard_matrix
from probes.readings.mix import mix, mix_shares
from probes.readings.plan import bucket_start
from probes.readings.recent import recent_failures, recent_measurements
from probes.readings.rolled_buckets import WIDTH as ROLLED_WIDTH
from probes.readings.selection import BadParameter, Selection
from probes.readings.series import bucket_size, series, series_by_target
from probes.readings.stored import stored_fields, stored_measurements
from probes.readings.summaries import (
    PHASE_METRICS,
    SEGMENTS,
    distribution,
    distribution_by_target,
    distribution_rows,
    phases,
    ranking,
    summary,
    table,
)
from probes.readings.workloads import (
    CacheFigures,
    PrefillFit,
    RateBucket,
    RegionWorkloads,
    WorkloadClass,
    Workloads,
    workloads,
)


def recent(target_id: int, limit: int = 100, *, failures: bool = False) -> list[dict]:
    """A target's latest measurements (or those whose outcome is not ok), newest first."""
    return (recent_failures if failures else recent_measurements)(target_id, limit)


__all__ = [
    "PHASE_METRICS",
    "REGION_STATUSES",
    "ROLLED_WIDTH",
    "SEGMENTS",
    "TRAILING_QUANTILES",
    "TRAILING_WINDOWS",
    "BadParameter",
    "CacheFigures",
    "IncidentHistory",
    "IncidentRow",
    "LatestResult",
    "PrefillFit",
    "RateBucket",
    "RegionHealth",
    "RegionRow",
    "RegionWorkloads",
    "Selection",
    "SilenceRow",
    "Tally",
    "TimelineRow",
    "WindowQuantile",
    "WorkerRow",
    "WorkloadClass",
    "Workloads",
    "active_silences",
    "bucket_rows",
    "bucket_size",
    "bucket_start",
    "bucket_statement",
    "buckets_are_raw",
    "distribution",
    "distribution_by_target",
    "distribution_rows",
    "incident_detail",
    "incident_history",
    "incidents_overlapping",
    "latest_results",
    "leaderboard",
    "leaderboard_matrix",
    "missed_counts",
    "mix",
    "mix_shares",
    "open_count",
    "open_incidents",
    "phases",
    "ranking",
    "real_users",
    "recent",
    "region_health",
    "region_rows",
    "region_status",
    "rollup_bucket_statement",
    "series",
    "series_by_target",
    "slo_history",
    "slo_report",
    "slos",
    "spans",
    "status",
    "stored_fields",
    "stored_measurements",
    "summary",
    "table",
    "tallies",
    "timeline",
    "updates",
    "window_quantiles",
    "worker_rows",
    "workloads",
]
