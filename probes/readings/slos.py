"""Objectives as every page, the API, the CSV, /metrics, `slo_check` and the burn-rate alerts read them.

Facade (an objective, a time; typed rows out):
    objective_rows(now, ids=None, cells=False)  each objective: attainment and budget over its window, burn
                            over BURN_WINDOWS, projected exhaustion, status [, per target x region and per region]
                            -> [ObjectiveRow]
    objective_row(id, now, cells=True)           one of them, or None
    counts_in(objective_ids, windows, by=...)    exact counts per objective x window [x target x region]
    slo_history.goodput(id, since, until, bucket)   calls per hour or day [x region] -> [GoodputRow]
    slo_history.burn_down(id, now)               the budget left after each hour of the window -> [BurnDownPoint]
    report(id, since, until)                     the SLA report's numbers (the page, the CSV and the API)
                            -> Report (slo_report.py)

Counting is exact at any edge: a window's whole days are read from the day counts (SLODayCount), its other whole
hours from the hour counts (SLOHourCount), the whole five minutes of its partial hours in the last hours from the
five-minute counts (SLOFiveMinuteCount), what is left at either end (under five minutes, or older partial hours)
from raw rows and missed runs, classified by the same SQL (probes.slos.classify); and the measurements the counter
has not counted yet (probes.slos.counting) are classified in the same snapshot. So a 5-minute burn and a 30-day
attainment are counted alike, and neither waits for the counter.

The figures, one definition:
- eligible = good + bad (excluded calls, in silences the objective excludes, are outside); missed runs are bad;
- attainment = good / eligible; the budget allowed = (1 - objective) x eligible calls, used = bad, remaining =
  allowed - used, and remaining as a share of allowed (negative once overspent);
- burn rate over a window = (bad / eligible) / (1 - objective): 1 spends the budget in exactly the objective's
  window, 14.4 spends 2 % of 30 days' budget in an hour;
- with a mix, each region's share weighs its own bad share: bad_share = sum(w_r x bad_r / eligible_r) over the
  regions with calls (shares renormalised over them), attainment = 1 - bad_share; the budget in calls is
  bad_share x eligible;
- projected exhaustion: the remaining share lasts remaining x window / burn at the last 24 hours' burn rate;
- windows of a day or more (24 h, 3 d and the objective's own) start at the first whole hour inside them
  (reading_start); a window ending now reads its current day (or hour, or five minutes, when it starts inside
  them) from that count, which holds the calls so far; so the raw rows read are the few minutes before the first
  whole five minutes of the windows under a day;
- status: disabled, rebuilding (counts not yet exact), no_data, exhausted (nothing remaining), page or ticket (a
  burn-rate alert's condition holds: BURN_ALERTS), else ok.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

# The facade's names that live in its parts: callers import them from here.
from probes.readings.slo_counts import ZERO, Counts, Key, counts_in, tables
from probes.readings.slo_time import (
    HOUR,
    ceil_day,
    ceil_hour,
    floor_day,
    floor_hour,
    month_bounds,
    reading_start,
    window_length,
    window_of,
)

if TYPE_CHECKING:
    from probes.models import ServiceLevelObjective

__all__ = [
    "BURN_ALERTS",
    "BURN_WINDOW",
    "BURN_WINDOWS",
    "HOUR",
    "PROJECTION_WINDOW",
    "STATUSES",
    "ZERO",
    "Budget",
    "BurnAlert",
    "BurnDownPoint",
    "CellRow",
    "Counts",
    "GoodputRow",
    "Key",
    "ObjectiveRow",
    "alert_for",
    "budget_of",
    "ceil_day",
    "ceil_hour",
    "counts_in",
    "floor_day",
    "floor_hour",
    "mix_weights",
    "month_bounds",
    "objective_row",
    "objective_rows",
    "reading_start",
    "tables",
    "window_length",
    "window_of",
]

# The burn-rate windows, shortest first: read for every objective by its pages, /metrics and slo_check.
BURN_WINDOWS: tuple[tuple[str, timedelta], ...] = (
    ("5m", timedelta(minutes=5)),
    ("30m", timedelta(minutes=30)),
    ("1h", timedelta(hours=1)),
    ("6h", timedelta(hours=6)),
    ("24h", timedelta(hours=24)),
    ("3d", timedelta(days=3)),
)
BURN_WINDOW = dict(BURN_WINDOWS)
# The burn rate a projection of exhaustion assumes.
PROJECTION_WINDOW = "24h"

Severity = Literal["page", "ticket"]


@dataclass(frozen=True)
class BurnAlert:
    """The Google SRE workbook's multiwindow, multi-burn-rate alert: it holds when the burn rate over both the
    long and the short window is above factor (the short window makes it stop soon after the burning stops)."""

    severity: Severity
    factor: float
    long: str
    short: str

    def holds(self, burn: Mapping[str, float | None]) -> bool:
        long, short = burn.get(self.long), burn.get(self.short)
        return long is not None and short is not None and long > self.factor and short > self.factor


# Strongest first: the first that holds is the objective's alert.
BURN_ALERTS: tuple[BurnAlert, ...] = (
    BurnAlert("page", 14.4, "1h", "5m"),
    BurnAlert("page", 6.0, "6h", "30m"),
    BurnAlert("ticket", 1.0, "3d", "6h"),
)

STATUSES = ("disabled", "rebuilding", "no_data", "exhausted", "page", "ticket", "ok")
Status = Literal["disabled", "rebuilding", "no_data", "exhausted", "page", "ticket", "ok"]


def alert_for(burn: Mapping[str, float | None]) -> BurnAlert | None:
    """The strongest burn-rate alert whose condition holds for these burn rates, or None."""
    return next((alert for alert in BURN_ALERTS if alert.holds(burn)), None)


@dataclass(frozen=True)
class Budget:
    """Attainment and error budget of some calls against an objective (a ratio, e.g. 0.99)."""

    objective: float
    counts: Counts
    bad_share: float | None  # bad / eligible, or the mix's weighted bad share; None without eligible calls

    @property
    def attainment(self) -> float | None:
        return None if self.bad_share is None else 1.0 - self.bad_share

    @property
    def allowed(self) -> float:
        """Bad calls the objective allows among these eligible calls."""
        return (1.0 - self.objective) * self.counts.eligible

    @property
    def used(self) -> float:
        """Bad calls spent: the count itself, or with a mix the weighted share of the eligible calls."""
        return 0.0 if self.bad_share is None else self.bad_share * self.counts.eligible

    @property
    def remaining(self) -> float:
        return self.allowed - self.used

    @property
    def remaining_ratio(self) -> float | None:
        """The budget left as a share of the budget allowed: 1 untouched, 0 spent, negative overspent."""
        if self.bad_share is None:
            return None
        return 1.0 - self.bad_share / (1.0 - self.objective)

    @property
    def used_ratio(self) -> float | None:
        """The budget spent as a share of the budget allowed (1 - remaining_ratio): above 1 once overspent.
        What the SLA report, its CSV and the API call budget_used_ratio."""
        if self.bad_share is None:
            return None
        return self.bad_share / (1.0 - self.objective)

    @property
    def burn_rate(self) -> float | None:
        """How fast these calls spend the budget: 1 spends it in exactly the objective's window."""
        return None if self.bad_share is None else self.bad_share / (1.0 - self.objective)


@dataclass(frozen=True)
class CellRow:
    """One target x region (or, with target_id None, one region over every target) of an objective."""

    target_id: int | None
    target_name: str
    region_id: int
    region_slug: str
    region_name: str
    share: float | None  # the region's share of the mix (normalised), None without a mix
    budget: Budget  # over the objective's window
    burn: dict[str, float | None]  # per BURN_WINDOWS label


@dataclass(frozen=True)
class ObjectiveRow:
    id: int
    name: str
    enabled: bool
    objective: float  # a ratio: 0.99 for 99 %
    objective_percent: float
    window: str  # rolling_28d, rolling_30d or calendar_month
    window_label: str
    since: datetime
    until: datetime
    exact_since: datetime | None  # the counts are exact from this hour; None while rebuilding
    has_mix: bool
    thresholds: dict[str, float | None]  # ttft, tpot, total, degraded_ttft (ms)
    exclude_silences: bool
    exclude_rate_limited: bool  # calls refused for rate limits or overload leave the denominator
    budget: Budget  # pooled, or weighted by the mix
    burn: dict[str, float | None]
    exhaustion: datetime | None  # projected at the PROJECTION_WINDOW burn; None when not burning or spent
    status: Status
    alert: BurnAlert | None
    cells: list[CellRow] = field(default_factory=list)  # per target x region (cells=True)
    regions: list[CellRow] = field(default_factory=list)  # per region over its targets (cells=True)

    @property
    def counting(self) -> bool:
        return self.exact_since is not None


@dataclass(frozen=True)
class GoodputRow:
    bucket: datetime  # the hour or day (UTC) the calls' slots fall in
    region_id: int | None  # None: every region
    region_slug: str
    counts: Counts
    hours: float  # the bucket's length in hours, for goodput as good calls per hour

    @property
    def attainment(self) -> float | None:
        return self.counts.good / self.counts.eligible if self.counts.eligible else None

    @property
    def goodput_per_hour(self) -> float:
        return self.counts.good / self.hours


@dataclass(frozen=True)
class BurnDownPoint:
    hour: datetime  # the end of the hour: the budget left once its calls were counted
    remaining_ratio: float | None


# ----- figures -----------------------------------------------------------------------------------------------


def mix_weights(mix: Mapping[str, float], slugs: Mapping[int, str]) -> dict[int, float]:
    """The mix's shares by region id (regions of the mix that exist), normalised to add up to 1."""
    by_slug = {slug: rid for rid, slug in slugs.items()}
    shares = {by_slug[slug]: float(share) for slug, share in mix.items() if slug in by_slug and float(share) > 0}
    total = sum(shares.values())
    return {rid: share / total for rid, share in shares.items()} if total else {}


def budget_of(objective: float, per_region: Mapping[int, Counts], weights: Mapping[int, float] | None = None) -> Budget:
    """The budget of these calls: pooled, or with weights (region id -> share) each region's bad share weighed
    by its share, renormalised over the regions with eligible calls."""
    total = sum(per_region.values(), ZERO)
    if not total.eligible:
        return Budget(objective, total, None)
    if not weights:
        return Budget(objective, total, total.bad / total.eligible)
    present = {rid: w for rid, w in weights.items() if per_region.get(rid, ZERO).eligible}
    weight = sum(present.values())
    if not weight:
        return Budget(objective, total, None)
    bad_share = sum(w / weight * per_region[rid].bad / per_region[rid].eligible for rid, w in present.items())
    return Budget(objective, total, bad_share)


def _burn(objective: float, per_region: Mapping[int, Counts], weights: Mapping[int, float] | None) -> float | None:
    return budget_of(objective, per_region, weights).burn_rate


def _status(o: ServiceLevelObjective, budget: Budget, alert: BurnAlert | None) -> Status:
    if not o.enabled:
        return "disabled"
    if not o.counted_condition:
        return "rebuilding"
    if budget.remaining_ratio is None:
        return "no_data"
    if budget.remaining_ratio <= 0:
        return "exhausted"
    if alert is not None:
        return alert.severity
    return "ok"


def _objectives(ids: Iterable[int] | None) -> list[ServiceLevelObjective]:
    from probes.models import ServiceLevelObjective

    objectives = ServiceLevelObjective.objects.order_by("name")
    if ids is not None:
        objectives = objectives.filter(id__in=list(ids))
    return list(objectives)


def objective_rows(
    now: datetime | None = None, ids: Iterable[int] | None = None, *, cells: bool = False
) -> list[ObjectiveRow]:
    """Every objective (or those of ids), by name, with its figures as of now (see the module)."""
    from probes.models import Region, Target

    now = now or datetime.now(UTC)
    objectives = _objectives(ids)
    if not objectives:
        return []
    counting = [o.id for o in objectives if o.enabled and o.counted_condition]
    windows: dict[str, tuple[datetime, datetime]] = {
        label: (reading_start(now - span, span), now) for label, span in BURN_WINDOWS
    }
    for kind in {o.window for o in objectives}:
        since, until = window_of(kind, now)
        windows[kind] = (reading_start(since, until - since), until)
    counts = counts_in(counting, windows, by_region=not cells)
    regions = {r["id"]: r for r in Region.objects.values("id", "slug", "name")}
    slugs = {rid: r["slug"] for rid, r in regions.items()}
    target_names = dict(Target.objects.values_list("id", "name")) if cells else {}
    by_objective: dict[int, dict[str, dict[tuple[int, int], Counts]]] = defaultdict(lambda: defaultdict(dict))
    for (objective_id, label, target_id, region_id), value in counts.items():
        by_objective[objective_id][label][(target_id, region_id)] = value
    rows = []
    for o in objectives:
        rows.append(_row(o, now, by_objective.get(o.id, {}), slugs, regions, target_names, cells))
    return rows


def objective_row(objective_id: int, now: datetime | None = None, *, cells: bool = True) -> ObjectiveRow | None:
    """One objective's figures (with its cells), or None when there is no such objective."""
    rows = objective_rows(now, [objective_id], cells=cells)
    return rows[0] if rows else None


def _by_region(cell_counts: Mapping[tuple[int, int], Counts]) -> dict[int, Counts]:
    regions: dict[int, Counts] = defaultdict(lambda: ZERO)
    for (_, region_id), value in cell_counts.items():
        regions[region_id] = regions[region_id] + value
    return dict(regions)


def _row(
    o: ServiceLevelObjective,
    now: datetime,
    counts: Mapping[str, Mapping[tuple[int, int], Counts]],
    slugs: Mapping[int, str],
    regions: Mapping[int, Mapping[str, Any]],
    target_names: Mapping[int, str],
    cells: bool,
) -> ObjectiveRow:
    objective = float(o.objective_percent) / 100.0
    weights = mix_weights(o.mix, slugs) if o.mix else None
    in_window = counts.get(o.window, {})
    budget = budget_of(objective, _by_region(in_window), weights)
    burn = {label: _burn(objective, _by_region(counts.get(label, {})), weights) for label, _ in BURN_WINDOWS}
    current = o.enabled and bool(o.counted_condition)
    alert = alert_for(burn) if current else None
    exhaustion = None
    rate = burn.get(PROJECTION_WINDOW)
    if current and budget.remaining_ratio is not None and budget.remaining_ratio > 0 and rate:
        exhaustion = now + window_length(o.window, now) * (budget.remaining_ratio / rate)
    cell_rows: list[CellRow] = []
    region_rows: list[CellRow] = []
    if cells:
        keys: set[tuple[int, int]] = set()
        for label_counts in counts.values():
            keys.update(label_counts)
        for target_id, region_id in sorted(keys, key=lambda k: (target_names.get(k[0], ""), slugs.get(k[1], ""))):
            cell_rows.append(
                _cell(
                    objective, o.window, target_id, target_names.get(target_id, ""), region_id, regions, weights, counts
                )
            )
        for region_id in sorted({k[1] for k in keys}, key=lambda rid: slugs.get(rid, "")):
            regional = {
                label: {(0, region_id): sum((v for k, v in lc.items() if k[1] == region_id), ZERO)}
                for label, lc in counts.items()
            }
            region_rows.append(_cell(objective, o.window, None, "", region_id, regions, weights, regional))
    return ObjectiveRow(
        id=o.id,
        name=o.name,
        enabled=o.enabled,
        objective=objective,
        objective_percent=float(o.objective_percent),
        window=o.window,
        window_label=str(o.get_window_display()),
        since=reading_start(window_of(o.window, now)[0], now - window_of(o.window, now)[0]),
        until=now,
        exact_since=o.exact_since if current else None,
        has_mix=bool(weights),
        thresholds={
            "ttft": o.ttft_threshold_ms,
            "tpot": o.tpot_threshold_ms,
            "total": o.total_threshold_ms,
            "degraded_ttft": o.degraded_ttft_threshold_ms,
        },
        exclude_silences=o.exclude_silences,
        exclude_rate_limited=o.exclude_rate_limited,
        budget=budget,
        burn=burn,
        exhaustion=exhaustion,
        status=_status(o, budget, alert),
        alert=alert,
        cells=cell_rows,
        regions=region_rows,
    )


def _cell(
    objective: float,
    window: str,
    target_id: int | None,
    target_name: str,
    region_id: int,
    regions: Mapping[int, Mapping[str, Any]],
    weights: Mapping[int, float] | None,
    counts: Mapping[str, Mapping[tuple[int, int], Counts]],
) -> CellRow:
    key = (target_id if target_id is not None else 0, region_id)
    region = regions.get(region_id, {"slug": "", "name": ""})
    in_window = counts.get(window, {}).get(key, ZERO)
    return CellRow(
        target_id=target_id,
        target_name=target_name,
        region_id=region_id,
        region_slug=region["slug"],
        region_name=region["name"],
        share=(weights or {}).get(region_id) if weights else None,
        budget=budget_of(objective, {region_id: in_window}),
        burn={
            label: budget_of(objective, {region_id: counts.get(label, {}).get(key, ZERO)}).burn_rate
            for label, _ in BURN_WINDOWS
        },
    )
