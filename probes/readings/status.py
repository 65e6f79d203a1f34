"""A status page's reading (/status/<slug>/): per target, its status now, TTFT p50 and p95 by region over 24 h and
its uptime per day over 90 days; and the incidents and maintenance its readers are told of.

Only what anyone may read: names, figures, times, and the words people wrote for them (incident updates, the
reasons of silences marked public). Never an incident's own summary or events, an error text, a URL, a host, a
worker or a threshold: the rows below have no field that could carry one.

- A target's status, from the page's objectives that cover it: `outage` when a page-level burn-rate alert holds
  for the target's own calls under any of them (probes.readings.slos.BURN_ALERTS: 14.4x over 1 h and 5 m, or 6x
  over 6 h and 30 m), `degraded` when a ticket's does (1x over 3 d and 6 h), else `operational`. A target none of
  them covers takes its status from its open incidents: `outage` for one of every region (global scope),
  `degraded` for a regional one, else `operational`.
- A day's uptime is the target's attainment that day (UTC) under each of those objectives, its calls counted as
  the objective counts them (probes.readings.slo_counts); the day met them when it met every one. Days before an
  objective's counts are exact, and targets no objective covers, have no uptime figure.
- The page's overall status is its worst target's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from probes.readings.incidents import UpdateRow, update_row
from probes.readings.slo_counts import ZERO, Counts, counts_in
from probes.readings.slo_time import floor_day
from probes.readings.slos import BURN_WINDOWS, alert_for, budget_of, mix_weights, reading_start

if TYPE_CHECKING:
    from probes.models import Incident, StatusPage

Status = Literal["operational", "degraded", "outage"]
STATUSES: tuple[Status, ...] = ("operational", "degraded", "outage")
UPTIME_DAYS = 90
LATENCY_WINDOW = timedelta(hours=24)
# Incidents resolved and maintenance ended this long ago still show, as "recent".
RECENT = timedelta(days=14)


@dataclass(frozen=True)
class RegionLatency:
    region_slug: str
    region_name: str
    samples: int
    p50: float | None  # TTFT, ms
    p95: float | None
    latitude: float  # where the region probes from: the page's map
    longitude: float


@dataclass(frozen=True)
class UptimeDay:
    day: date
    attainment: float | None  # the lowest of the objectives' attainments that day; None without eligible calls
    met: bool | None  # every objective met that day; None without a figure


@dataclass(frozen=True)
class TargetStatus:
    target_id: int
    name: str
    status: Status
    from_objectives: bool  # False: from open incidents (no objective of the page covers it)
    latency: list[RegionLatency] = field(default_factory=list)
    uptime: list[UptimeDay] = field(default_factory=list)  # oldest first, UPTIME_DAYS of them
    uptime_ratio: float | None = None  # good / eligible over the days shown, pooled over the objectives' calls


@dataclass(frozen=True)
class PublicIncident:
    id: int
    target_id: int
    target_name: str
    started_at: datetime
    resolved_at: datetime | None
    updates: list[UpdateRow]  # oldest first
    global_scope: bool  # every region measured was affected


@dataclass(frozen=True)
class FeedEntry:
    page_slug: str
    target_name: str
    update: UpdateRow


@dataclass(frozen=True)
class Maintenance:
    id: int
    target_id: int
    target_name: str
    starts_at: datetime
    ends_at: datetime
    reason: str


@dataclass(frozen=True)
class StatusReading:
    page_id: int
    slug: str
    title: str
    description: str
    show_latency: bool
    status: Status
    targets: list[TargetStatus]
    incidents: list[PublicIncident]  # open first, then by start, newest first
    maintenance: list[Maintenance]  # by start
    read_at: datetime


def _worst(statuses: list[Status]) -> Status:
    return max(statuses, key=STATUSES.index, default="operational")


def page_scope(page_id: int) -> tuple[list[int], list[int]]:
    """(target ids, region ids) of a page: its targets and its model groups' targets; its regions, or every
    region when it names none."""
    from probes.models import Region, StatusPage, Target

    page = StatusPage.objects.get(id=page_id)
    targets = set(page.targets.values_list("id", flat=True))
    targets |= set(Target.objects.filter(model_groups__status_pages=page).values_list("id", flat=True))
    regions = list(page.regions.values_list("id", flat=True)) or list(Region.objects.values_list("id", flat=True))
    return sorted(targets), sorted(regions)


def status_reading(page_id: int, now: datetime | None = None) -> StatusReading | None:
    """The page's reading as of now, or None when there is no such page."""
    from probes.models import StatusPage, Target

    page = StatusPage.objects.filter(id=page_id).first()
    if page is None:
        return None
    now = now or datetime.now(UTC)
    target_ids, region_ids = page_scope(page_id)
    names = dict(Target.objects.filter(id__in=target_ids).values_list("id", "name"))
    objectives = _covering_objectives(page, target_ids)
    by_objectives = _objective_figures(objectives, region_ids, now)
    by_incidents = _incident_statuses(target_ids, region_ids)
    latency = _latency(target_ids, region_ids, now) if page.show_latency else {}
    targets = []
    for target_id in sorted(target_ids, key=lambda t: names.get(t, "")):
        figures = by_objectives.get(target_id)
        status = figures[0] if figures else by_incidents.get(target_id, "operational")
        targets.append(
            TargetStatus(
                target_id=target_id,
                name=names.get(target_id, ""),
                status=status,
                from_objectives=figures is not None,
                latency=latency.get(target_id, []),
                uptime=figures[1] if figures else _no_uptime(now),
                uptime_ratio=figures[2] if figures else None,
            )
        )
    return StatusReading(
        page_id=page.id,
        slug=page.slug,
        title=page.title,
        description=page.description,
        show_latency=page.show_latency,
        status=_worst([t.status for t in targets]),
        targets=targets,
        incidents=_incidents(target_ids, region_ids, now, names),
        maintenance=_maintenance(target_ids, now, names),
        read_at=now,
    )


def _covering_objectives(page: StatusPage, target_ids: list[int]) -> dict[int, list]:
    """Each target's objectives among the page's (enabled, counting), by target id."""
    from probes.models import Target

    covering: dict[int, list] = defaultdict(list)
    for objective in page.slos.filter(enabled=True).exclude(counted_condition="").select_related("model_group"):
        covered = set(objective.targets.values_list("id", flat=True))
        if objective.model_group_id:
            covered |= set(Target.objects.filter(model_groups=objective.model_group_id).values_list("id", flat=True))
        for target_id in covered & set(target_ids):
            covering[target_id].append(objective)
    return covering


def _days(now: datetime) -> list[tuple[datetime, datetime]]:
    today = floor_day(now)
    return [(today - timedelta(days=k), today - timedelta(days=k - 1)) for k in range(UPTIME_DAYS - 1, -1, -1)]


def _no_uptime(now: datetime) -> list[UptimeDay]:
    return [UptimeDay(start.date(), None, None) for start, _end in _days(now)]


def _objective_figures(
    covering: dict[int, list], region_ids: list[int], now: datetime
) -> dict[int, tuple[Status, list[UptimeDay], float | None]]:
    """Per target an objective covers: (status, uptime days, uptime ratio), from one read of the counts."""
    from probes.models import Region

    objectives = {o.id: o for listed in covering.values() for o in listed}
    if not objectives:
        return {}
    days = _days(now)
    windows = {label: (reading_start(now - span, span), now) for label, span in BURN_WINDOWS}
    windows.update({f"day{k}": (start, min(end, now)) for k, (start, end) in enumerate(days) if start < now})
    counts = counts_in(list(objectives), windows)
    slugs = dict(Region.objects.values_list("id", "slug"))
    # (objective, label, target) -> region -> counts, the page's regions only.
    cells: dict[tuple[int, str, int], dict[int, Counts]] = defaultdict(dict)
    for (objective_id, label, target_id, region_id), value in counts.items():
        if region_id in region_ids:
            cells[(objective_id, label, target_id)][region_id] = value
    # Each objective's ratio and mix weights, once.
    terms = {
        o.id: (float(o.objective_percent) / 100.0, mix_weights(o.mix, slugs) if o.mix else None)
        for o in objectives.values()
    }
    out = {}
    for target_id, listed in covering.items():
        statuses: list[Status] = []
        uptime = []
        good = eligible = 0
        for o in listed:
            ratio, weights = terms[o.id]
            burn = {
                label: budget_of(ratio, cells.get((o.id, label, target_id), {}), weights).burn_rate
                for label, _span in BURN_WINDOWS
            }
            alert = alert_for(burn)
            statuses.append("operational" if alert is None else "outage" if alert.severity == "page" else "degraded")
        for k, (start, _end) in enumerate(days):
            attainments, met = [], True
            for o in listed:
                if o.exact_since is None or start < floor_day(o.exact_since) or start >= now:
                    continue
                ratio, weights = terms[o.id]
                per_region = cells.get((o.id, f"day{k}", target_id), {})
                budget = budget_of(ratio, per_region, weights)
                if budget.attainment is None:
                    continue
                attainments.append(budget.attainment)
                met = met and budget.attainment >= ratio
                total = sum(per_region.values(), ZERO)
                good, eligible = good + total.good, eligible + total.eligible
            low = min(attainments) if attainments else None
            uptime.append(UptimeDay(start.date(), low, met if attainments else None))
        out[target_id] = (_worst(statuses), uptime, good / eligible if eligible else None)
    return out


def _shown(incident: Incident, region_ids: list[int]) -> bool:
    """Whether an incident (its regions prefetched) is one of the page's: global, or of a region it shows."""
    from probes.alerts.models import GLOBAL

    regions = {r.id for r in incident.regions.all()}
    return incident.scope == GLOBAL or not regions or bool(regions & set(region_ids))


def _incident_statuses(target_ids: list[int], region_ids: list[int]) -> dict[int, Status]:
    from probes.alerts.models import GLOBAL
    from probes.models import Incident

    out: dict[int, Status] = {}
    for incident in Incident.objects.filter(target_id__in=target_ids, resolved_at__isnull=True).prefetch_related(
        "regions"
    ):
        if not _shown(incident, region_ids):
            continue
        status: Status = "outage" if incident.scope == GLOBAL else "degraded"
        out[incident.target_id] = _worst([out.get(incident.target_id, "operational"), status])
    return out


def _latency(target_ids: list[int], region_ids: list[int], now: datetime) -> dict[int, list[RegionLatency]]:
    from probes.readings.selection import Selection
    from probes.readings.summaries import table

    if not target_ids:
        return {}
    selection = Selection(
        target_ids=target_ids, region_ids=region_ids, since=now - LATENCY_WINDOW, until=now, metric="ttft"
    )
    from probes.models import Region

    rows = table(selection)
    places = {
        slug: (lat, lon)
        for slug, lat, lon in Region.objects.filter(slug__in={row["region_slug"] for row in rows}).values_list(
            "slug", "latitude", "longitude"
        )
    }
    out: dict[int, list[RegionLatency]] = defaultdict(list)
    for row in rows:
        lat, lon = places[row["region_slug"]]
        out[row["target_id"]].append(
            RegionLatency(row["region_slug"], row["region"], int(row["samples"] or 0), row["p50"], row["p95"], lat, lon)
        )
    return out


def _incidents(
    target_ids: list[int], region_ids: list[int], now: datetime, names: dict[int, str]
) -> list[PublicIncident]:
    from django.db.models import Q

    from probes.alerts.models import GLOBAL
    from probes.models import Incident

    found = (
        Incident.objects.filter(target_id__in=target_ids)
        .filter(Q(resolved_at__isnull=True) | Q(resolved_at__gte=now - RECENT))
        .prefetch_related("regions", "updates")
        .order_by("-started_at", "-id")
    )
    out = []
    for incident in found:
        if not _shown(incident, region_ids):
            continue
        updates = [update_row(u) for u in sorted(incident.updates.all(), key=lambda u: (u.posted_at, u.id))]
        out.append(
            PublicIncident(
                incident.id,
                incident.target_id,
                names.get(incident.target_id, ""),
                incident.started_at,
                incident.resolved_at,
                updates,
                incident.scope == GLOBAL,
            )
        )
    out.sort(key=lambda i: i.resolved_at is not None)  # open first; stable, so newest first within each
    return out


def _maintenance(target_ids: list[int], now: datetime, names: dict[int, str]) -> list[Maintenance]:
    from probes.models import Silence

    found = Silence.objects.filter(target_id__in=target_ids, public=True, ends_at__gte=now - RECENT)
    return [
        Maintenance(s.id, s.target_id, names.get(s.target_id, ""), s.starts_at, s.ends_at, s.reason)
        for s in found.order_by("starts_at", "id")
    ]


# The feed's length: its newest entries, as feed readers poll for what is new.
FEED_ENTRIES = 50


def feed_entries(page_id: int, limit: int = FEED_ENTRIES) -> list[FeedEntry]:
    """The public updates of the page's targets' incidents (in its regions), newest first: its feed's entries."""
    from django.db.models import Q

    from probes.alerts.models import GLOBAL
    from probes.models import IncidentUpdate, StatusPage

    slug = StatusPage.objects.values_list("slug", flat=True).get(id=page_id)
    target_ids, region_ids = page_scope(page_id)
    found = (
        IncidentUpdate.objects.filter(incident__target_id__in=target_ids)
        .filter(Q(incident__scope=GLOBAL) | Q(incident__regions__isnull=True) | Q(incident__regions__in=region_ids))
        .select_related("incident__target")
        .distinct()
        .order_by("-posted_at", "-id")[:limit]
    )
    return [FeedEntry(slug, u.incident.target.name, update_row(u)) for u in found]


BADGE_METRICS = ("status", "uptime", "ttft_p95")
BADGE_WINDOWS = ("24h", "7d", "30d")


@dataclass(frozen=True)
class BadgeReading:
    metric: str
    status: Status | None  # metric status
    ratio: float | None  # metric uptime: good / eligible over the window, pooled over the objectives' calls
    ms: float | None  # metric ttft_p95: the region's p95, or the slowest region's
    region_name: str  # the region read, "" for all of the page's


def badge_reading(
    page_id: int, target_id: int, metric: str, region_id: int | None, window: str, now: datetime | None = None
) -> BadgeReading:
    """One figure of one of the page's targets over the last `window` (BADGE_WINDOWS), for a badge: its status now
    (from its calls in the region, or in all the page's), its uptime (as the page's bars count it), or its TTFT p95
    from one region (as /api/table reads it for the same target, region and window) or, without a region, the
    highest of the page's regions'."""
    from probes.models import Region
    from probes.readings.selection import WINDOWS, Selection
    from probes.readings.summaries import table

    now = now or datetime.now(UTC)
    _targets, region_ids = page_scope(page_id)
    regions = [region_id] if region_id is not None else region_ids
    region_name = Region.objects.get(id=region_id).name if region_id is not None else ""
    if metric == "status":
        # From the target's calls in these regions alone, by the page's rule (status_reading).
        from probes.models import StatusPage

        covering = _covering_objectives(StatusPage.objects.get(id=page_id), [target_id])
        figures = _objective_figures(covering, regions, now).get(target_id)
        by_incidents = _incident_statuses([target_id], regions)
        found: Status = figures[0] if figures else by_incidents.get(target_id, "operational")
        return BadgeReading(metric, found, None, None, region_name)
    since = now - WINDOWS[window]
    if metric == "uptime":
        from probes.models import StatusPage

        objectives = _covering_objectives(StatusPage.objects.get(id=page_id), [target_id]).get(target_id, [])
        good = eligible = 0
        if objectives:
            counts = counts_in([o.id for o in objectives], {"w": (since, now)})
            for (_objective, _label, cell_target, cell_region), value in counts.items():
                if cell_target == target_id and cell_region in regions:
                    good, eligible = good + value.good, eligible + value.eligible
        return BadgeReading(metric, None, good / eligible if eligible else None, None, region_name)
    rows = table(Selection(target_ids=[target_id], region_ids=regions, since=since, until=now, window=window))
    p95s = [row["p95"] for row in rows if row["p95"] is not None]
    return BadgeReading(metric, None, None, max(p95s) if p95s else None, region_name)
