"""Incidents as the pages read them: open ones, history, one incident and its timeline.

Rows are plain frozen dataclasses: the pages (and the markers on the
dashboard's pages) never touch the models, so what an incident row holds is
decided here once. Labels of coded values (scope, phase, event kind) are the
models' lazy choices, read in the request's language when rendered.

A channel is named on the timeline by its name only: its Apprise URL holds
secrets and never leaves the admin's encrypted field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, overload

from django.db.models import QuerySet

from probes.alerts import wording
from probes.alerts.models import (
    PHASE_CHOICES,
    RATE_METRICS,
    SCOPE_CHOICES,
    SEVERITY_CHOICES,
    Incident,
    IncidentEvent,
    IncidentUpdate,
    Silence,
)

SCOPE_LABELS = dict(SCOPE_CHOICES)
PHASE_LABELS = dict(PHASE_CHOICES)
KIND_LABELS = dict(IncidentEvent.KIND_CHOICES)
SEVERITY_LABELS = dict(SEVERITY_CHOICES)
UPDATE_LABELS = dict(IncidentUpdate.STATUS_CHOICES)

STATES = ("open", "resolved", "all")
State = Literal["open", "resolved", "all"]


@dataclass(frozen=True)
class RegionRef:
    id: int
    slug: str
    name: str


@dataclass(frozen=True)
class IncidentRow:
    """A rule's incident, or an objective's burn-rate alert (objective_id set, rule_id None): rule_name is then
    the objective's name, metric and percentile are "", window_minutes the alert's long window, and peak_value
    the burn rate over it (unit "x")."""

    id: int
    rule_id: int | None
    rule_name: str  # the rule's name, or the objective's
    metric: str
    percentile: str  # "" for the rate metrics
    window_minutes: int
    target_id: int
    target_name: str
    scope: str
    scope_label: Any  # lazy: the request's language
    regions: tuple[RegionRef, ...]
    measured_regions: int
    phase: str
    phase_label: Any
    summary: str
    peak_value: float | None
    baseline_value: float | None
    started_at: datetime
    opened_at: datetime
    resolved_at: datetime | None
    acknowledged_at: datetime | None
    acknowledged_by: str  # the user name, "" when nobody has (or the user is gone)
    silenced: bool
    objective_id: int | None = None
    severity: str = ""  # page or ticket: an objective's alert
    severity_label: Any = ""

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None

    @property
    def kind(self) -> str:
        """What fired: "rule" or "objective"."""
        return "objective" if self.objective_id is not None else "rule"

    @property
    def duration(self) -> timedelta | None:
        """How long it lasted; None while open."""
        return None if self.resolved_at is None else self.resolved_at - self.started_at

    @property
    def unit(self) -> str:
        """The unit of peak and baseline: percent for the rates, milliseconds for latencies."""
        if self.objective_id is not None:
            return "x"
        return "%" if self.metric in RATE_METRICS else "ms"

    @property
    def region_names(self) -> str:
        return ", ".join(r.name for r in self.regions)


@dataclass(frozen=True)
class TimelineRow:
    at: datetime
    kind: str
    kind_label: Any
    region_name: str
    channel_name: str
    attempt: int | None
    detail: str
    user: str


@dataclass(frozen=True)
class UpdateRow:
    """An incident's public update: the words people wrote for status pages' readers."""

    id: int
    incident_id: int
    status: str  # investigating, identified, monitoring or resolved
    status_label: Any  # lazy: the request's language
    text: str
    posted_at: datetime


@dataclass(frozen=True)
class SilenceRow:
    id: int
    target_id: int
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str


def _incidents() -> QuerySet[Incident]:
    return Incident.objects.select_related("rule", "objective", "target", "acknowledged_by").prefetch_related("regions")


def _source(incident: Incident) -> dict[str, Any]:
    """What fired, as the row's fields: the rule, or the objective and its alert."""
    rule = incident.rule
    if rule is not None:
        return {
            "rule_id": rule.id,
            "rule_name": rule.name,
            "metric": rule.metric,
            "percentile": rule.percentile,
            "window_minutes": rule.window_minutes,
        }
    from probes.readings.slos import BURN_WINDOW

    long = BURN_WINDOW.get((incident.summary_data or {}).get("long", ""))
    return {
        "rule_id": None,
        "rule_name": incident.objective.name if incident.objective else "",
        "metric": "",
        "percentile": "",
        "window_minutes": int(long.total_seconds() // 60) if long else 0,
        "objective_id": incident.objective_id,
        "severity": incident.severity,
        "severity_label": SEVERITY_LABELS.get(incident.severity, incident.severity),
    }


def _row(incident: Incident) -> IncidentRow:
    regions = sorted(incident.regions.all(), key=lambda r: (r.name, r.slug))
    return IncidentRow(
        id=incident.id,
        **_source(incident),
        target_id=incident.target_id,
        target_name=incident.target.name,
        scope=incident.scope,
        scope_label=SCOPE_LABELS.get(incident.scope, incident.scope),
        regions=tuple(RegionRef(r.id, r.slug, r.name) for r in regions),
        measured_regions=incident.measured_regions,
        phase=incident.phase,
        phase_label=PHASE_LABELS.get(incident.phase, incident.phase),
        # Rendered in the reader's language from what it says (probes.alerts.wording).
        summary=wording.readable(incident.summary_data, incident.summary),
        peak_value=incident.peak_value,
        baseline_value=incident.baseline_value,
        started_at=incident.started_at,
        opened_at=incident.opened_at,
        resolved_at=incident.resolved_at,
        acknowledged_at=incident.acknowledged_at,
        acknowledged_by=incident.acknowledged_by.get_username() if incident.acknowledged_by else "",
        silenced=incident.silenced,
    )


def open_incidents(target_id: int | None = None, region_id: int | None = None) -> list[IncidentRow]:
    """Open incidents, newest first: all, or those of a target, or those whose regions include a region."""
    incidents = _incidents().filter(resolved_at__isnull=True)
    if target_id is not None:
        incidents = incidents.filter(target_id=target_id)
    if region_id is not None:
        incidents = incidents.filter(regions__id=region_id).distinct()
    return [_row(i) for i in incidents.order_by("-started_at", "-id")]


def open_count() -> int:
    """How many incidents are open (the header's count)."""
    return int(Incident.objects.filter(resolved_at__isnull=True).count())


class IncidentHistory(Sequence[IncidentRow]):
    """Incidents newest first, read a slice at a time: what Django's
    Paginator needs (a length, and slices), without loading the whole history."""

    def __init__(self, incidents: QuerySet[Incident]) -> None:
        self._incidents = incidents

    def __len__(self) -> int:
        return int(self._incidents.count())

    def count(self, value: Any = None) -> int:
        # Paginator asks count() first when there is one: the SQL count, not Sequence.count(value).
        return len(self)

    @overload
    def __getitem__(self, index: int) -> IncidentRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[IncidentRow]: ...

    def __getitem__(self, index: int | slice) -> IncidentRow | list[IncidentRow]:
        if isinstance(index, slice):
            return [_row(i) for i in self._incidents[index]]
        return _row(self._incidents[index])


def incident_history(*, target_id: int | None = None, state: State = "resolved") -> IncidentHistory:
    """Incidents newest first, to page through: resolved ones (the history
    under the open list), open ones, or all."""
    incidents = _incidents().order_by("-started_at", "-id")
    if target_id is not None:
        incidents = incidents.filter(target_id=target_id)
    if state == "resolved":
        incidents = incidents.filter(resolved_at__isnull=False)
    elif state == "open":
        incidents = incidents.filter(resolved_at__isnull=True)
    return IncidentHistory(incidents)


# The over-time chart marks at most this many incidents of its window, the latest: more spans than that
# cover the plot and name nothing.
OVERLAPPING_LIMIT = 12


def incidents_overlapping(
    since: datetime,
    until: datetime,
    *,
    target_ids: Sequence[int] = (),
    region_ids: Sequence[int] = (),
    objective_id: int | None = None,
) -> list[IncidentRow]:
    """Incidents whose span [started_at, resolved_at or now) overlaps [since, until), of these targets and
    with at least one of these regions (empty: any), oldest first: the over-time chart's shading. With
    objective_id, only that objective's burn-rate alerts (an objective's page's timeline)."""
    incidents = _incidents().filter(started_at__lt=until).exclude(resolved_at__lte=since)
    if objective_id is not None:
        incidents = incidents.filter(objective_id=objective_id)
    if target_ids:
        incidents = incidents.filter(target_id__in=list(target_ids))
    if region_ids:
        incidents = incidents.filter(regions__id__in=list(region_ids)).distinct()
    latest = list(incidents.order_by("-started_at", "-id")[:OVERLAPPING_LIMIT])
    return [_row(i) for i in reversed(latest)]


def incident_detail(incident_id: int) -> IncidentRow | None:
    incident = _incidents().filter(pk=incident_id).first()
    return None if incident is None else _row(incident)


def timeline(incident_id: int) -> list[TimelineRow]:
    """The incident's events, in the order they happened."""
    events = (
        IncidentEvent.objects.filter(incident_id=incident_id)
        .select_related("region", "channel", "user")
        .order_by("at", "id")
    )
    return [
        TimelineRow(
            at=e.at,
            kind=e.kind,
            kind_label=KIND_LABELS.get(e.kind, e.kind),
            region_name=e.region.name if e.region else "",
            channel_name=e.channel.name if e.channel else "",
            attempt=e.attempt,
            detail=wording.event_text(e.detail_data, e.detail),
            user=e.user.get_username() if e.user else "",
        )
        for e in events
    ]


def update_row(update: IncidentUpdate) -> UpdateRow:
    return UpdateRow(
        update.id,
        update.incident_id,
        update.status,
        UPDATE_LABELS.get(update.status, update.status),
        update.text,
        update.posted_at,
    )


def updates(incident_id: int) -> list[UpdateRow]:
    """The incident's public updates, oldest first."""
    return [update_row(u) for u in IncidentUpdate.objects.filter(incident_id=incident_id).order_by("posted_at", "id")]


def active_silences(target_id: int, now: datetime) -> list[SilenceRow]:
    """A target's silences that have not ended (current ones, and ones that start later), soonest end first."""
    silences = Silence.objects.filter(target_id=target_id, ends_at__gt=now).select_related("created_by")
    return [
        SilenceRow(
            id=s.id,
            target_id=s.target_id,
            starts_at=s.starts_at,
            ends_at=s.ends_at,
            reason=s.reason,
            created_by=s.created_by.get_username() if s.created_by else "",
        )
        for s in silences.order_by("ends_at", "id")
    ]
