"""A model group's leaderboard: the group's targets ranked against each other from one region, from every
region, or for a traffic mix, each figure with a 95 % distribution-free confidence interval.

The interval of the q-quantile of n values is [x(l), x(u)], the values of ranks l and u in ascending order,
where B ~ Binomial(n, q) counts the values below the true quantile: P(l <= B < u) >= 0.95. The ranks take
equal tails: l is the largest rank with P(B < l) <= 0.025 and u the smallest with P(B >= u) <= 0.025. No
assumption about the distribution is made, which is why small samples get none: with n values, u = n needs
q**n <= 0.025 (a p95 needs 72 values, a p50 6). Without an interval the CI is None and the row's reason
says so. Values at l and u are read where the point estimate is read: the raw values on a raw window, else
the bucket holding that rank in the same merged histogram (probes.histogram's midpoint rule).

A traffic mix weighs each region's values by its share, so its quantile is no order statistic of equally
weighted values and has no interval of this kind: its rows carry a reason instead.

Ranking: by the point estimate of f.metric at f.percentile (lower first, higher first for tokens_per_s),
targets without one last, then by name; ranks are 1, 2, 3... without gaps. tied_with lists the targets whose
interval on that metric overlaps this one's (both intervals needed): their order is not established by the
data, and the page shows them as tied.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import accumulate

import numpy as np
from django.utils.translation import gettext as _

from probes.histogram import bucket_value
from probes.metrics import BY_NAME
from probes.models import Region, Target
from probes.readings.mix import _points, mix_shares, mixture_percentiles
from probes.readings.rows import LeaderboardRow, MatrixCell, MatrixRow, Reading
from probes.readings.selection import BadParameter, Selection
from probes.readings.summaries import _read

CONFIDENCE = 0.95
TTFT = "ttft"
TPS = "tokens_per_s"


def binomial_cdf(n: int, q: float) -> np.ndarray:
    """P(B <= k) for k = 0..n, B ~ Binomial(n, q), summed in log space so large n neither under- nor
    overflows: each term from the previous by the ratio (n - k) / (k + 1) * q / (1 - q)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be within (0, 1), got {q!r}")
    k = np.arange(n, dtype=np.float64)
    steps = np.log(n - k) - np.log(k + 1) + (math.log(q) - math.log1p(-q))
    logs = n * math.log1p(-q) + np.concatenate(([0.0], np.cumsum(steps)))
    terms = np.exp(logs - logs.max())
    cdf: np.ndarray = np.minimum(np.cumsum(terms) / terms.sum(), 1.0)
    return cdf


def interval_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (l, u) with P(l <= B < u) >= confidence and equal tails (see the module), or None when n
    values are too few for them."""
    if n < 1:
        return None
    tail = (1.0 - confidence) / 2
    cdf = binomial_cdf(n, q)
    # P(B < l) = cdf[l - 1]: the largest l >= 1 with it at most the tail is the count of such entries.
    low = int(np.searchsorted(cdf, tail, side="right"))
    # P(B >= u) = 1 - cdf[u - 1]: the smallest u <= n with it at most the tail.
    high = int(np.searchsorted(cdf, 1.0 - tail, side="left")) + 1
    if low < 1 or high > n:
        return None
    return low, high


@lru_cache(maxsize=64)
def minimum_values(q: float, confidence: float = CONFIDENCE) -> int:
    """The fewest values a q-quantile's interval can be formed from."""
    n = 1
    while interval_ranks(n, q, confidence) is None:
        n += 1
    return int(n)


def _at_ranks(reading: Reading, metric: str, ranks: Sequence[int]) -> list[float]:
    """The metric's values of the given 1-based ranks, read as the point estimate is (module docstring)."""
    values = reading.values.get(BY_NAME[metric].column)
    if values:
        ordered = sorted(values)
        return [ordered[r - 1] for r in ranks]
    hist = reading.hists[metric]
    pairs = sorted((int(i), c) for i, c in hist.to_sparse().items())
    running = list(accumulate(c for _, c in pairs))
    return [bucket_value(pairs[bisect_left(running, r)][0]) for r in ranks]


def _count(reading: Reading | None, metric: str) -> int:
    if reading is None:
        return 0
    values = reading.values.get(BY_NAME[metric].column)
    if values:
        return len(values)
    hist = reading.hists.get(metric)
    return hist.count if hist is not None else 0


def _label(q: float) -> str:
    return f"p{round(q * 100):g}"


def interval(reading: Reading | None, metric: str, q: float) -> tuple[list[float] | None, str | None]:
    """([low, high], None), or (None, the reason there is none)."""
    n = _count(reading, metric)
    ranks = interval_ranks(n, q)
    if reading is None or ranks is None:
        return None, _(
            "%(p)s needs at least %(need)s values of %(metric)s for a 95 %% interval; this target has %(n)s"
        ) % {"p": _label(q), "need": minimum_values(q), "metric": metric, "n": n}
    return _at_ranks(reading, metric, ranks), None


def overlaps(a: list[float] | None, b: list[float] | None) -> bool:
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


def _sign(metric: str) -> int:
    return -1 if BY_NAME[metric].higher_is_better else 1


def _group_targets(target_ids: Sequence[int]) -> list[dict]:
    return list(Target.objects.filter(id__in=list(target_ids)).order_by("name").values("id", "name"))


def _region_id(slug: str) -> int:
    region_id = Region.objects.filter(slug=slug).values_list("id", flat=True).first()
    if region_id is None:
        raise BadParameter("region", _("unknown region %(slug)s") % {"slug": repr(slug)})
    return int(region_id)


def _mixed(parts: list[tuple[float, Reading | None]], f: Selection, metric: str, *qs: float) -> list[float | None]:
    """The metric's qs-quantiles of a mix's mixture (probes.readings.mix), regions at their shares."""
    of = Selection(since=f.since, until=f.until, metric=metric)
    return mixture_percentiles([(w, _points(r, of)) for w, r in parts], qs)


def _rank(rows: list[LeaderboardRow], cis: dict[int, list[float] | None]) -> None:
    for rank, row in enumerate(rows, 1):
        me = row["target"]
        row["rank"] = rank
        row["tied_with"] = [o["target"] for o in rows if o["target"] != me and overlaps(cis[me], cis[o["target"]])]


def leaderboard(
    target_ids: Sequence[int],
    f: Selection,
    *,
    region: str | None = None,
    shares: Mapping[int, float] | None = None,
) -> list[LeaderboardRow]:
    """The group's targets (target_ids), best first (module docstring), over f's window, from one region
    (its slug), from every region pooled (neither given), or for a mix (region id to share). f.metric and
    f.percentile choose the ranking; f.target_ids and f.region_ids are ignored."""
    targets = _group_targets(target_ids)
    ids = [t["id"] for t in targets]
    if not ids:
        return []
    metrics = (TTFT, TPS)
    if shares:
        people = mix_shares(shares)
        region_ids = [s["region_id"] for s in people]
        by_pair = _read(f, ("region_id", "target_id"), *metrics, target_ids=ids, region_ids=region_ids)
        readings = None
    else:
        region_ids = [_region_id(region)] if region else list(Region.objects.values_list("id", flat=True))
        readings = _read(f, ("target_id",), *metrics, target_ids=ids, region_ids=region_ids)
    rows: list[LeaderboardRow] = []
    values: dict[int, float | None] = {}
    cis: dict[int, list[float] | None] = {}
    for target in targets:
        tid = target["id"]
        if readings is not None:
            reading = readings.get((tid,))
            samples = reading.samples if reading else 0
            errors = reading.errors if reading else 0
            p50, p95 = reading.percentiles(TTFT, 0.5, 0.95) if reading else (None, None)
            (tps,) = reading.percentiles(TPS, 0.5) if reading else (None,)
            value = reading.percentile(f.metric, f.percentile) if reading else None
            ci50, why50 = interval(reading, TTFT, 0.5)
            ci95, why95 = interval(reading, TTFT, 0.95)
            ci, why = interval(reading, f.metric, f.percentile)
            reasons = [r for r in dict.fromkeys((why50, why95, why)) if r]
        else:
            parts = [(s["share"], by_pair.get((s["region_id"], tid))) for s in people]
            samples = sum(r.samples for _w, r in parts if r is not None)
            errors = sum(r.errors for _w, r in parts if r is not None)

            p50, p95 = _mixed(parts, f, TTFT, 0.5, 0.95)
            (tps,) = _mixed(parts, f, TPS, 0.5)
            (value,) = _mixed(parts, f, f.metric, f.percentile)
            ci50 = ci95 = ci = None
            reasons = [
                _("a traffic mix weighs regions by their shares: its percentiles have no order-statistic interval")
            ]
        row = LeaderboardRow(
            target=tid,
            target_name=target["name"],
            p50_ttft_ms=p50,
            p95_ttft_ms=p95,
            p50_ttft_ci_ms=ci50,
            p95_ttft_ci_ms=ci95,
            tokens_per_s_p50=tps,
            success_ratio=(samples - errors) / samples if samples else None,
            n=samples,
        )
        if reasons:
            row["reason"] = "; ".join(reasons)
        values[tid] = value
        cis[tid] = ci
        rows.append(row)
    sign = _sign(f.metric)
    rows.sort(key=lambda r: (values[r["target"]] is None, sign * (values[r["target"]] or 0), r["target_name"]))
    _rank(rows, cis)
    return rows


def matrix(target_ids: Sequence[int], f: Selection) -> list[MatrixRow]:
    """Region x target of f.metric at f.percentile over f's window, one row per region where any of the
    targets has values (by region name), cells in target_ids' order. The winner is the best point estimate;
    a cell is tied when its interval overlaps the winner's."""
    ids = list(target_ids)
    if not ids:
        return []
    regions = list(Region.objects.order_by("name", "slug").values("id", "slug", "name"))
    readings = _read(f, ("region_id", "target_id"), target_ids=ids, region_ids=[r["id"] for r in regions])
    sign = _sign(f.metric)
    out: list[MatrixRow] = []
    for region in regions:
        cells: list[MatrixCell] = []
        for tid in ids:
            reading = readings.get((region["id"], tid))
            n = _count(reading, f.metric)
            value = reading.percentile(f.metric, f.percentile) if reading is not None and n else None
            ci = interval(reading, f.metric, f.percentile)[0] if n else None
            cells.append(MatrixCell(target=tid, value=value, ci=ci, n=n, winner=False, tied=False))
        valued = [c for c in cells if c["value"] is not None]
        if not valued:
            continue
        best = min(valued, key=lambda c: sign * (c["value"] or 0))
        best["winner"] = True
        for cell in valued:
            cell["tied"] = cell is not best and overlaps(cell["ci"], best["ci"])
        out.append(MatrixRow(region=region["slug"], region_name=region["name"], cells=cells))
    return out
