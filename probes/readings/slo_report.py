"""The SLA report of one objective over a period: the page, /export/slo-report.csv and the API read it here, so
they cannot disagree (probes.readings.slos defines the figures).

    report(id, since, until, now)            -> Report (rows per target x region, total, incidents, silences)
    Report.incident_duration(incident)       an incident's duration, an open one's to min(until, now)
    scope_of(objective)                      the target and region ids an objective covers
    objective_incidents(id, since, until)    its incidents overlapping a window (the objective page's timeline)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from probes.readings.slos import (
    ZERO,
    Budget,
    Counts,
    ObjectiveRow,
    budget_of,
    ceil_hour,
    counts_in,
    floor_hour,
    mix_weights,
    objective_row,
)

if TYPE_CHECKING:
    from probes.models import ServiceLevelObjective
    from probes.readings.incidents import IncidentRow


@dataclass(frozen=True)
class ReportRow:
    target_id: int
    target_name: str
    region_id: int
    region_slug: str
    region_name: str
    budget: Budget

    @property
    def bad_minutes(self) -> int:
        return self.budget.counts.bad_minutes


@dataclass(frozen=True)
class SilenceSpan:
    target_id: int
    target_name: str
    starts_at: datetime
    ends_at: datetime  # clipped to the period
    reason: str

    @property
    def duration(self) -> timedelta:
        return self.ends_at - self.starts_at


@dataclass(frozen=True)
class Report:
    objective: ObjectiveRow  # its figures as of the period's end (cells empty)
    since: datetime
    until: datetime
    rows: list[ReportRow]  # per target x region, by target then region
    total: Budget  # over every row (weighted by the mix when it has one)
    incidents: list  # probes.readings.incidents.IncidentRow overlapping the period, oldest first
    silences: list[SilenceSpan]  # of the objective's targets, overlapping the period (clipped), oldest first
    exact_since: datetime | None  # the counts cover calls from here (later than since: the period is partial)
    as_of: datetime | None = None  # when it was read: an open incident's duration runs to min(until, as_of)

    @property
    def bad_minutes(self) -> int:
        return self.total.counts.bad_minutes

    def incident_duration(self, incident: IncidentRow) -> timedelta:
        """How long an incident lasted: to its resolution, or while open to the period's end or now, whichever
        comes first (the same figure on the page and in the API)."""
        end: datetime = incident.resolved_at or min(self.until, self.as_of or self.until)
        span: timedelta = end - incident.started_at
        return max(span, timedelta(0))


# ----- the SLA report ----------------------------------------------------------------------------------------


def report(objective_id: int, since: datetime, until: datetime, now: datetime | None = None) -> Report | None:
    """The SLA report of [since, until) (a calendar month: month_bounds): per target x region attainment, budget
    and bad minutes (minutes holding a bad call or missed run), the incidents of the objective's targets and
    regions overlapping the period, and the silences of its targets (excluded when the objective excludes them).
    Reads the hour counts only: a report's edges are whole hours (since rounded down, until up). None when the
    objective does not exist."""
    from probes.models import Region, ServiceLevelObjective, Silence, Target
    from probes.readings.incidents import incidents_overlapping

    now = now or datetime.now(UTC)
    o = ServiceLevelObjective.objects.filter(id=objective_id).first()
    if o is None:
        return None
    since, until = floor_hour(since), ceil_hour(until)
    row = objective_row(objective_id, min(now, until), cells=False)
    if row is None:  # deleted meanwhile
        return None
    objective = float(o.objective_percent) / 100.0
    regions = {r["id"]: r for r in Region.objects.values("id", "slug", "name")}
    weights = mix_weights(o.mix, {rid: r["slug"] for rid, r in regions.items()}) if o.mix else None
    counts = counts_in([objective_id], {"period": (since, until)}, minutes=True) if o.counted_condition else {}
    names = dict(Target.objects.values_list("id", "name"))
    cells = sorted(
        ((target_id, region_id, value) for (_, _, target_id, region_id), value in counts.items()),
        key=lambda c: (names.get(c[0], ""), regions.get(c[1], {}).get("slug", "")),
    )
    rows = [
        ReportRow(
            target_id=target_id,
            target_name=names.get(target_id, ""),
            region_id=region_id,
            region_slug=regions.get(region_id, {}).get("slug", ""),
            region_name=regions.get(region_id, {}).get("name", ""),
            budget=budget_of(objective, {region_id: value}),
        )
        for target_id, region_id, value in cells
    ]
    per_region: dict[int, Counts] = defaultdict(lambda: ZERO)
    for _, region_id, value in cells:
        per_region[region_id] = per_region[region_id] + value
    total = budget_of(objective, per_region, weights)
    target_ids, region_ids = scope_of(o, weights)
    incidents = incidents_overlapping(since, until, target_ids=target_ids, region_ids=region_ids) if target_ids else []
    silences = [
        SilenceSpan(
            target_id=s.target_id,
            target_name=names.get(s.target_id, ""),
            starts_at=max(s.starts_at, since),
            ends_at=min(s.ends_at, until),
            reason=s.reason,
        )
        for s in Silence.objects.filter(target_id__in=target_ids, starts_at__lt=until, ends_at__gt=since).order_by(
            "starts_at", "id"
        )
    ]
    exact = o.exact_since if o.counted_condition else None
    return Report(
        objective=row,
        since=since,
        until=until,
        rows=rows,
        total=total,
        incidents=incidents,
        silences=silences,
        exact_since=exact if exact and exact > since else (since if exact else None),
        as_of=now,
    )


def scope_of(o: ServiceLevelObjective, weights: Mapping[int, float] | None = None) -> tuple[list[int], list[int]]:
    """The ids of the targets an objective covers (its own, or its model group's as the group is now) and of its
    regions (its own, or its mix's; empty: every region): whose incidents and silences belong to it."""
    if weights is None and o.mix:
        from probes.models import Region

        weights = mix_weights(o.mix, dict(Region.objects.values_list("id", "slug")))
    target_ids = sorted({*o.targets.values_list("id", flat=True)} | _group_targets(o))
    region_ids = list(o.regions.values_list("id", flat=True)) or (list(weights) if weights else [])
    return target_ids, region_ids


def objective_incidents(objective_id: int, since: datetime, until: datetime) -> list:
    """The incidents of an objective's targets and regions overlapping [since, until), oldest first (its page's
    timeline, shaded as the target page's over-time chart shades them)."""
    from probes.models import ServiceLevelObjective
    from probes.readings.incidents import incidents_overlapping

    o = ServiceLevelObjective.objects.filter(id=objective_id).first()
    if o is None:
        return []
    target_ids, region_ids = scope_of(o)
    return incidents_overlapping(since, until, target_ids=target_ids, region_ids=region_ids) if target_ids else []


def _group_targets(o: ServiceLevelObjective) -> set[int]:
    if o.model_group_id is None:
        return set()
    return set(o.model_group.targets.values_list("id", flat=True))
