"""Workload readings per target x region (issue 50): how time to first token grows with the prompt's length
(the prefill slope), what a provider's prompt cache saves, and how often and how close to its rate limits a
target is.

Read from raw measurements only, over a window of at most MAX_WINDOW: the columns they need (input_tokens,
cached_input_tokens, warm_ttft_ms, the rate-limit headroom) have no rollups. PostgreSQL aggregates them, per
(target, region) through the (target_id, region_id, started_at) index, every region named as
probes.readings.alerts.window_calls does, so it is never a scan across other targets' rows.

Medians are nearest rank (probes.readings): percentile_disc(0.5), whose float8 rank is exact for a median at
any count a window can hold (MEDIAN_VALUES_MAX; a test holds it to rank.float_rank_agrees). Medians are never
averaged: the fit goes through each workload class's median, one point a class.

- per region x workload class: calls, ok calls, rate-limited calls (probes.engine.result.REFUSED), the median
  TTFT and median input tokens of the ok calls (WorkloadClass);
- per region: a least-squares line of those medians, TTFT (ms) against input tokens, over the classes with at
  least MIN_FIT_CALLS ok calls and an input count, cached pairs left out (their TTFT is the cache's, not
  prefill's); its slope in ms per 1k input tokens and the prefill rate it implies, 1e6 / slope tokens/s
  (PrefillFit; None with a reason when it cannot be drawn or does not rise);
- per region: the cache saving, the median of warm_ttft_ms - ttft_ms over ok cached pairs with both, and the
  cache hit ratio, the share of ok cached pairs whose provider reported cached input tokens above 0 among
  those where it reported a count at all (NULL is "not said", not a miss): CacheFigures;
- per region: the rate-limited share of the window and over time buckets, with the least headroom
  (ratelimit_remaining_requests / _tokens) the provider reported in each (RateBucket).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.utils.translation import gettext as _

from probes.engine.result import OK, REFUSED
from probes.engine.workloads import CACHED_PAIR, WORKLOADS
from probes.models import Measurement, Region, Target
from probes.readings.plan import EPOCH
from probes.readings.selection import BadParameter
from probes.readings.slots import started_in_params
from probes.readings.workload import row_sql

# Raw rows only (nothing here is rolled up): a week of one target from every region is what a read may hold.
MAX_WINDOW = timedelta(days=7)
# A workload class joins the fit with at least this many ok calls: a median of fewer is one call's luck.
MIN_FIT_CALLS = 5
# About this many time buckets of rate limits over the window, each a whole number of minutes.
RATE_BUCKETS = 60
# The most values one median is taken over that percentile_disc must rank exactly (a call a second for a week).
MEDIAN_VALUES_MAX = 7 * 24 * 3600
# Classes in the order a page lists them; a class the engine no longer names after them.
_ORDER = {name: i for i, name in enumerate(WORKLOADS)}


@dataclass(frozen=True)
class WorkloadClass:
    """One workload class of one target from one region."""

    # A row stored without one (before workloads were recorded) counts as short, as in every other reading
    # (probes.readings.workload).
    workload: str
    calls: int
    ok: int
    rate_limited: int  # outcomes in probes.engine.result.REFUSED (429, 529 / 503 overloaded)
    rate_limited_ratio: float | None
    ttft_p50_ms: float | None  # of the ok calls
    input_tokens_p50: float | None  # of the ok calls whose provider reported it


@dataclass(frozen=True)
class PrefillFit:
    """TTFT against input tokens, a least-squares line through the classes' medians. The figures are None, and
    reason says why, when fewer than two classes qualify, their inputs are all one size, or the line does not
    rise (the slope too: a line that does not rise is no prefill cost)."""

    points: int  # the classes the line is drawn through
    slope_ms_per_1k: float | None
    intercept_ms: float | None
    prefill_tokens_per_s: float | None
    reason: str = ""


@dataclass(frozen=True)
class CacheFigures:
    """The cached pairs of one target from one region (ok calls)."""

    calls: int  # ok cached pairs
    saving_n: int  # of them, those with both warm_ttft_ms and ttft_ms
    saving_p50_ms: float | None  # median of warm_ttft_ms - ttft_ms
    reported: int  # ok cached pairs whose provider reported a cached input count (0 included)
    hits: int  # of them, those with more than 0 cached input tokens
    hit_ratio: float | None  # hits / reported; None when none reported one


@dataclass(frozen=True)
class RateBucket:
    """One time bucket of one target from one region."""

    bucket_start: datetime
    calls: int
    rate_limited: int
    rate_limited_ratio: float
    remaining_requests_min: int | None  # None: no call in the bucket reported the header
    remaining_tokens_min: int | None


@dataclass(frozen=True)
class RegionWorkloads:
    """Everything read of one target from one region."""

    target_id: int
    target: str
    region: str  # slug
    region_name: str
    calls: int
    rate_limited: int
    rate_limited_ratio: float | None
    remaining_requests_min: int | None
    remaining_tokens_min: int | None
    classes: tuple[WorkloadClass, ...]
    fit: PrefillFit
    cache: CacheFigures
    rate_limits: tuple[RateBucket, ...]


@dataclass(frozen=True)
class Workloads:
    since: datetime
    until: datetime
    bucket: timedelta
    regions: tuple[RegionWorkloads, ...]  # by target name, then region name


def rate_bucket(since: datetime, until: datetime) -> timedelta:
    """About RATE_BUCKETS buckets over the window, whole minutes (whole hours from an hour up), aligned to EPOCH
    as every time series is."""
    step = (until - since) / RATE_BUCKETS
    if step >= timedelta(hours=1):
        return timedelta(hours=max(1, round(step / timedelta(hours=1))))
    return timedelta(minutes=max(1, round(step / timedelta(minutes=1))))


def fit(classes: list[WorkloadClass]) -> PrefillFit:
    """The least-squares line of the classes' median TTFT (ms) against their median input tokens (see PrefillFit)."""
    points = [
        (c.input_tokens_p50, c.ttft_p50_ms)
        for c in classes
        if c.workload != CACHED_PAIR
        and c.ok >= MIN_FIT_CALLS
        and c.input_tokens_p50 is not None
        and c.ttft_p50_ms is not None
    ]
    n = len(points)
    if n < 2:
        return PrefillFit(
            n,
            None,
            None,
            None,
            _("fewer than two workload classes with %(n)d ok calls and a reported input count") % {"n": MIN_FIT_CALLS},
        )
    mean_x = sum(x for x, _y in points) / n
    mean_y = sum(y for _x, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _y in points)
    if sxx == 0:
        return PrefillFit(n, None, None, None, _("every workload class has the same input length"))
    per_token = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx  # ms per input token
    intercept = mean_y - per_token * mean_x
    if per_token <= 0:
        # A line that does not rise implies no prefill rate, and its slope would read as a (negative) cost.
        return PrefillFit(n, None, None, None, _("time to first token does not grow with the input length"))
    # Units: per_token is in ms a token, i.e. a thousandth of that in seconds a token; its inverse is the rate.
    return PrefillFit(n, per_token * 1000, intercept, 1000 / per_token)


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _where(target_ids: list[int], region_ids: list[int], since: datetime, until: datetime) -> tuple[str, dict]:
    regions = Region._meta.db_table
    params: dict = {"targets": list(target_ids), "refused": list(REFUSED), "ok": OK, "cached_pair": CACHED_PAIR}
    window = started_in_params([(since, until)], params, "w")
    # Every region (or the chosen ones) named, so the (target, region, started_at) index answers: on target and
    # time alone the planner may take the BRIN index on started_at (probes.readings.alerts.window_calls).
    if region_ids:
        params["regions"] = list(region_ids)
        region_sql = "region_id = ANY(%(regions)s)"
    else:
        region_sql = f"region_id = ANY(ARRAY(SELECT id FROM {regions}))"
    return f"target_id = ANY(%(targets)s) AND {region_sql} AND {window}", params


@dataclass(frozen=True)
class _Read:
    """A (target, region)'s classes, read with its cached pairs' counts (only the cached_pair class has any)."""

    classes: list[WorkloadClass]
    cache: CacheFigures


def _classes(where: str, params: dict) -> dict[tuple[int, int], _Read]:
    """Per (target, region): its workload classes and its cached pairs' figures, in one pass over its rows. The
    region's own totals are the classes' sums, and its least headroom the buckets' least (workloads), so the rows
    are read twice in all (here and _buckets), not once per figure."""
    table = Measurement._meta.db_table
    ok = "outcome = %(ok)s"
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT target_id, region_id, {row_sql()}, count(*),
                   count(*) FILTER (WHERE {ok}),
                   count(*) FILTER (WHERE outcome = ANY(%(refused)s)),
                   percentile_disc(0.5) WITHIN GROUP (ORDER BY ttft_ms) FILTER (WHERE {ok}),
                   percentile_disc(0.5) WITHIN GROUP (ORDER BY input_tokens) FILTER (WHERE {ok}),
                   count(*) FILTER (WHERE {ok} AND warm_ttft_ms IS NOT NULL AND ttft_ms IS NOT NULL),
                   percentile_disc(0.5) WITHIN GROUP (ORDER BY warm_ttft_ms - ttft_ms) FILTER (WHERE {ok}),
                   count(*) FILTER (WHERE {ok} AND cached_input_tokens IS NOT NULL),
                   count(*) FILTER (WHERE {ok} AND cached_input_tokens > 0)
            FROM {table}
            WHERE {where}
            GROUP BY 1, 2, 3
            """,
            params,
        )
        found: dict[tuple[int, int], list[WorkloadClass]] = defaultdict(list)
        caches: dict[tuple[int, int], CacheFigures] = {}
        for target_id, region_id, workload, calls, oks, refused, ttft, tokens, *cache in cur.fetchall():
            found[(target_id, region_id)].append(
                WorkloadClass(
                    workload=workload,
                    calls=calls,
                    ok=oks,
                    rate_limited=refused,
                    rate_limited_ratio=_ratio(refused, calls),
                    ttft_p50_ms=ttft,
                    input_tokens_p50=None if tokens is None else float(tokens),
                )
            )
            if workload == CACHED_PAIR:
                saving_n, saving, reported, hits = cache
                caches[(target_id, region_id)] = CacheFigures(
                    calls=oks,
                    saving_n=saving_n,
                    saving_p50_ms=saving,
                    reported=reported,
                    hits=hits,
                    hit_ratio=_ratio(hits, reported),
                )
    out = {}
    for key, rows in found.items():
        rows.sort(key=lambda c: (_ORDER.get(c.workload, len(_ORDER)), c.workload))
        out[key] = _Read(rows, caches.get(key, NO_CACHED_PAIRS))
    return out


NO_CACHED_PAIRS = CacheFigures(calls=0, saving_n=0, saving_p50_ms=None, reported=0, hits=0, hit_ratio=None)


def _least(values: list[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _buckets(where: str, params: dict, size: timedelta) -> dict[tuple[int, int], list[RateBucket]]:
    table = Measurement._meta.db_table
    out: dict[tuple[int, int], list[RateBucket]] = defaultdict(list)
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT target_id, region_id, date_bin(%(size)s, started_at, %(epoch)s) AS bucket, count(*),
                   count(*) FILTER (WHERE outcome = ANY(%(refused)s)),
                   min(ratelimit_remaining_requests), min(ratelimit_remaining_tokens)
            FROM {table}
            WHERE {where}
            GROUP BY target_id, region_id, bucket
            ORDER BY bucket
            """,
            {**params, "size": size, "epoch": EPOCH},
        )
        for target_id, region_id, start, calls, refused, requests, tokens in cur.fetchall():
            out[(target_id, region_id)].append(RateBucket(start, calls, refused, refused / calls, requests, tokens))
    return out


def workloads(
    target_ids: list[int],
    since: datetime,
    until: datetime,
    *,
    region_ids: list[int] | None = None,
    bucket: timedelta | None = None,
) -> Workloads:
    """The workload readings of the targets (from the regions, or every region) over [since, until), at most
    MAX_WINDOW long (BadParameter naming since otherwise). bucket: the rate limits' time step (rate_bucket's by
    default). A (target, region) without a call in the window is left out."""
    if until - since > MAX_WINDOW:
        raise BadParameter(
            "since",
            _("workload readings are read from raw measurements: the window must be at most %(days)d days")
            % {"days": MAX_WINDOW.days},
        )
    size = bucket or rate_bucket(since, until)
    if not target_ids:
        return Workloads(since, until, size, ())
    where, params = _where(target_ids, region_ids or [], since, until)
    classes = _classes(where, params)
    buckets = _buckets(where, params, size)
    targets = dict(Target.objects.filter(id__in=target_ids).values_list("id", "name"))
    regions = {r.id: r for r in Region.objects.filter(id__in={key[1] for key in classes})}
    out = []
    for (target_id, region_id), read in classes.items():
        calls = sum(c.calls for c in read.classes)
        refused = sum(c.rate_limited for c in read.classes)
        steps = buckets.get((target_id, region_id), [])
        region = regions[region_id]
        out.append(
            RegionWorkloads(
                target_id=target_id,
                target=targets.get(target_id, ""),
                region=region.slug,
                region_name=region.name,
                calls=calls,
                rate_limited=refused,
                rate_limited_ratio=_ratio(refused, calls),
                remaining_requests_min=_least([b.remaining_requests_min for b in steps]),
                remaining_tokens_min=_least([b.remaining_tokens_min for b in steps]),
                classes=tuple(read.classes),
                fit=fit(read.classes),
                cache=read.cache,
                rate_limits=tuple(steps),
            )
        )
    out.sort(key=lambda r: (r.target, r.target_id, r.region_name, r.region))
    return Workloads(since, until, size, tuple(out))
