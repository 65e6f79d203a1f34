"""Objectives' burn-rate alerts: the Google SRE workbook's multiwindow, multi-burn-rate alerts, through the
incidents, channels, silences and timeline the alert rules use. Part of every evaluation pass
(probes.alerts.evaluate.run_pass calls evaluate_objectives).

Per enabled objective whose counts are exact, its figures come from the read facade (probes.readings.slos:
objective_rows, with its regions and cells), and its alert is the facade's alert_for(burn): the strongest of
BURN_ALERTS whose long and short windows both burn above the factor. Its ObjectiveAlertState moves:
- ok -> firing when an alert holds: an incident opens at once (the long window already asks the burn to have
  lasted; no pending delay on top), a page or a ticket;
- firing -> firing at another severity: a line on the timeline, and a notification when a ticket becomes a page;
- firing -> ok when no alert holds (the short window fell below the factor): the incident resolves.
An objective disabled, or changed and being counted again (its counts emptied), resolves what it had open.

The incident names the regions spending the budget (their own burn over the alert's long window above its
factor), the targets spending it there, and the phase that moved (probes.alerts.attribution, as a rule's
incident does: the phase medians of those calls now against their 7-day baselines). It is filed under the target
burning fastest, so that target's pages, charts and silences find it. A transition notifies nobody (recorded as
withheld) when every target the incident names is inside a silence.

Every move is a compare-and-swap on ObjectiveAlertState.version in the transaction that writes the incident, its
timeline and its deliveries; the unique open incident per objective backs it. Deliveries are queued after
commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import translation

from probes.alerts import wording
from probes.alerts.attribution import Attribution, compare, pooled, window_medians
from probes.alerts.models import (
    GLOBAL,
    PAGE,
    REGIONAL,
    Delivery,
    Incident,
    IncidentEvent,
    NotificationChannel,
    Silence,
)
from probes.alerts.transitions import deliveries, queue, record_opened, region_events, swap, withheld_event
from probes.readings.alerts import baselines, window_calls
from probes.readings.slos import BURN_WINDOW, BurnAlert, ObjectiveRow, objective_rows
from probes.slos.models import ObjectiveAlertState, ServiceLevelObjective

# The calls whose phases name what moved: the alert's long window, at most this much (a 3-day read of raw rows
# every pass would cost more than the phase it names; an hour of calls says what moved as well as a rule's window).
ATTRIBUTION_SPAN = timedelta(hours=1)


@dataclass(frozen=True)
class Burning:
    """What an objective's alert names: the regions and targets spending the budget, and the target it is
    filed under (the one burning fastest)."""

    region_ids: tuple[int, ...]
    target_ids: tuple[int, ...]
    target_id: int
    measured: int  # regions with calls in the long window


def burning(row: ObjectiveRow, alert: BurnAlert) -> Burning | None:
    """The regions whose own burn over the alert's long window is above its factor, and the targets above it in
    those regions. A mix can burn above the factor with no region alone above it only when regions lack calls; then
    the fastest region is named. None when the objective has no cell with calls."""

    def over(cell) -> float:
        return cell.burn.get(alert.long) or 0.0

    measured = [r for r in row.regions if r.burn.get(alert.long) is not None]
    regions = [r for r in measured if over(r) > alert.factor] or sorted(measured, key=over, reverse=True)[:1]
    if not regions:
        return None
    region_ids = {r.region_id for r in regions}
    cells = [c for c in row.cells if c.region_id in region_ids and c.target_id is not None]
    if not cells:
        return None
    fastest = max(cells, key=lambda c: (over(c), -(c.target_id or 0)))
    targets = sorted({c.target_id for c in cells if over(c) > alert.factor} | {fastest.target_id})  # type: ignore
    return Burning(tuple(sorted(region_ids)), tuple(targets), fastest.target_id, len(measured))  # type: ignore


def summarise(
    row: ObjectiveRow, alert: BurnAlert, b: Burning, names: dict[int, str], targets: dict[int, str], why: Attribution
) -> tuple[str, dict]:
    """The incident's summary as data (probes.alerts.wording) and its English text."""
    data: dict = {
        "v": wording.VERSION,
        "kind": "objective",
        "objective": row.name,
        "objective_percent": row.objective_percent,
        "severity": alert.severity,
        "factor": alert.factor,
        "long": alert.long,
        "short": alert.short,
        "burn_long": row.burn.get(alert.long) or 0.0,
        "burn_short": row.burn.get(alert.short) or 0.0,
        "places": sorted(names.get(r, str(r)) for r in b.region_ids),
        "targets": sorted(targets.get(t, str(t)) for t in b.target_ids),
        "target_ids": list(b.target_ids),
        "breaching": len(b.region_ids),
        "measured": b.measured,
        "scope": scope_of(b),
        "why": why.why,
    }
    with translation.override("en"):
        text = wording.summary_text(data)
    return text, data


def scope_of(b: Burning) -> str:
    share = len(b.region_ids) / b.measured if b.measured else 0.0
    return GLOBAL if share >= settings.LATENCY_ALERT_GLOBAL_SHARE else REGIONAL


class ObjectiveEvaluator:
    """One pass over the objectives; `report` is the pass's PassReport (probes.alerts.evaluate)."""

    def __init__(self, now: datetime, report) -> None:
        self.now = now
        self.report = report
        self._names: dict[int, str] | None = None
        self._targets: dict[int, str] | None = None
        self._silences: dict[int, Silence] | None = None

    # --- reading -----------------------------------------------------------------------------------------

    def names(self) -> dict[int, str]:
        if self._names is None:
            from probes.models import Region

            self._names = dict(Region.objects.values_list("id", "city"))
        return self._names

    def targets(self) -> dict[int, str]:
        if self._targets is None:
            from probes.models import Target

            self._targets = dict(Target.objects.values_list("id", "name"))
        return self._targets

    def silence_over(self, target_ids: Sequence[int]) -> Silence | None:
        """The silence that ends first among those covering every one of these targets now; None when one of
        them is not silenced (someone must hear of it)."""
        if self._silences is None:
            self._silences = {}
            for silence in Silence.objects.filter(starts_at__lte=self.now, ends_at__gt=self.now).order_by("-ends_at"):
                self._silences.setdefault(silence.target_id, silence)
        found = [self._silences.get(t) for t in target_ids]
        if not found or any(s is None for s in found):
            return None
        return min(found, key=lambda s: s.ends_at)  # type: ignore[union-attr]

    def channels(self, objective_id: int) -> list[NotificationChannel]:
        return list(
            NotificationChannel.objects.filter(objectives__id=objective_id, enabled=True).order_by("name").distinct()
        )

    def why(self, alert: BurnAlert, b: Burning) -> Attribution:
        """The phase that moved in the burning regions' calls to the burning targets, against their baselines."""
        span = min(BURN_WINDOW[alert.long], ATTRIBUTION_SPAN)
        calls = window_calls(self.now - span, self.now, list(b.target_ids))
        window = [c for (t, r), cs in calls.items() if r in b.region_ids for c in cs]
        bases = [base for (t, r), base in baselines(list(b.target_ids), self.now).items() if r in b.region_ids]
        if not window or not bases:
            return compare(None, None)
        return compare(window_medians(window), pooled(bases).medians())

    # --- moving ------------------------------------------------------------------------------------------

    def state_for(self, objective_id: int, states: dict[int, ObjectiveAlertState]) -> ObjectiveAlertState:
        state = states.get(objective_id)
        if state is None:
            ObjectiveAlertState.objects.bulk_create(
                [ObjectiveAlertState(objective_id=objective_id)], ignore_conflicts=True
            )
            state = ObjectiveAlertState.objects.get(objective_id=objective_id)
        return state

    def step(self, row: ObjectiveRow, state: ObjectiveAlertState | None, states: dict) -> None:
        alert = row.alert
        firing = state is not None and state.status == ObjectiveAlertState.FIRING
        if alert is None:
            if firing:
                assert state is not None
                # The short window, as a rule, is what falls first; say the long one when it fell instead.
                short = (row.burn.get(state.short_window) or 0.0) <= (state.factor or 0.0)
                fell = state.short_window if short else state.long_window
                self.resolve(row.id, state, {"say": "burn_below", "short": fell, "factor": state.factor})
            return
        b = burning(row, alert)
        if b is None:
            return
        if not firing:
            self.fire(row, alert, b, self.state_for(row.id, states))
            return
        assert state is not None
        moved = (alert.severity, alert.long, list(b.region_ids))
        if moved != (state.severity, state.long_window, sorted(state.burning)):
            self.changed(row, alert, b, state)

    def fire(self, row: ObjectiveRow, alert: BurnAlert, b: Burning, state: ObjectiveAlertState) -> None:
        if state.status != ObjectiveAlertState.OK:
            self.report.lost_races += 1
            return
        why = self.why(alert, b)
        summary, data = summarise(row, alert, b, self.names(), self.targets(), why)
        queued: list[int] = []
        try:
            with transaction.atomic():
                if not swap(state, **self._fields(alert, b, since=self.now)):
                    self.report.lost_races += 1
                    return
                silence = self.silence_over(b.target_ids)
                incident = Incident.objects.create(
                    objective_id=row.id,
                    target_id=b.target_id,
                    severity=alert.severity,
                    started_at=self.now,
                    opened_at=self.now,
                    scope=data["scope"],
                    measured_regions=b.measured,
                    summary=summary,
                    summary_data=data,
                    phase=why.phase,
                    peak_value=data["burn_long"],
                    silenced=silence is not None,
                )
                incident.regions.add(*b.region_ids)
                record_opened(incident, self.now, summary, data, silence)
                queued = self._deliveries(incident, Delivery.OPENED, row.id, withheld=silence is not None)
                transaction.on_commit(lambda: queue(queued))
        except IntegrityError:
            # Another pass opened this objective's incident between our read and our write.
            self.report.lost_races += 1
            return
        self.report.opened += 1
        self.report.queued.extend(queued)

    def changed(self, row: ObjectiveRow, alert: BurnAlert, b: Burning, state: ObjectiveAlertState) -> None:
        """The alert holds still, at another severity or window, or other regions spend the budget: the summary
        says what burns now, the timeline says what changed, and a ticket that becomes a page is told."""
        why = self.why(alert, b)
        summary, data = summarise(row, alert, b, self.names(), self.targets(), why)
        before, now_burning = set(state.burning), set(b.region_ids)
        escalated = alert.severity == PAGE and state.severity != PAGE
        queued: list[int] = []
        with transaction.atomic():
            if not swap(state, **self._fields(alert, b)):
                self.report.lost_races += 1
                return
            incident = Incident.objects.filter(objective_id=row.id, resolved_at__isnull=True).first()
            if incident is None:
                return
            names = self.names()
            events = region_events(incident, self.now, before, now_burning, names)
            if alert.severity != state.severity:
                said = {
                    "say": "severity",
                    "from": state.severity,
                    "to": alert.severity,
                    "factor": alert.factor,
                    "long": alert.long,
                    "short": alert.short,
                }
                events.append(
                    IncidentEvent(
                        incident=incident,
                        at=self.now,
                        kind=IncidentEvent.SEVERITY_CHANGED,
                        detail=wording.english_event(said),
                        detail_data=said,
                    )
                )
            silence = self.silence_over(b.target_ids) if escalated else None
            if silence is not None:
                events.append(withheld_event(incident, self.now, silence))
            IncidentEvent.objects.bulk_create(events)
            incident.regions.add(*(now_burning - before))
            changes: dict = {"summary": summary, "summary_data": data, "severity": alert.severity}
            if incident.scope == GLOBAL:
                changes["scope"] = GLOBAL
            else:
                changes["scope"] = data["scope"]
            if incident.peak_value is None or data["burn_long"] > incident.peak_value:
                changes["peak_value"] = data["burn_long"]
            if why.phase:
                changes["phase"] = why.phase
            Incident.objects.filter(pk=incident.pk).update(**changes)
            if escalated:
                withheld = incident.silenced or silence is not None
                queued = self._deliveries(incident, Delivery.ESCALATED, row.id, withheld=withheld)
                transaction.on_commit(lambda: queue(queued))
        self.report.moved += 1
        self.report.queued.extend(queued)

    def resolve(self, objective_id: int, state: ObjectiveAlertState, why: dict) -> None:
        queued: list[int] = []
        with transaction.atomic():
            if not swap(
                state,
                status=ObjectiveAlertState.OK,
                severity="",
                long_window="",
                short_window="",
                factor=None,
                since=None,
                burning=[],
                evaluated_at=self.now,
            ):
                self.report.lost_races += 1
                return
            incident = (
                Incident.objects.select_for_update().filter(objective_id=objective_id, resolved_at__isnull=True).first()
            )
            if incident is None:
                return
            Incident.objects.filter(pk=incident.pk).update(resolved_at=self.now)
            IncidentEvent.objects.create(
                incident=incident,
                at=self.now,
                kind=IncidentEvent.RESOLVED,
                detail=wording.english_event(why),
                detail_data=why,
            )
            targets = list(incident.summary_data.get("target_ids") or [incident.target_id])
            # Whoever was not told of the opening (silenced) is not told of the end either.
            withheld = incident.silenced or self.silence_over(targets) is not None
            channels = self.channels(objective_id)
            queued = self._deliveries(incident, Delivery.RESOLVED, objective_id, withheld=withheld, channels=channels)
            if withheld and channels:
                IncidentEvent.objects.create(
                    incident=incident,
                    at=self.now,
                    kind=IncidentEvent.WITHHELD,
                    detail="resolved inside a silence",
                    detail_data={"say": "resolved_in_silence"},
                )
            transaction.on_commit(lambda: queue(queued))
        self.report.resolved += 1
        self.report.queued.extend(queued)

    # --- helpers -----------------------------------------------------------------------------------------

    def _fields(self, alert: BurnAlert, b: Burning, **extra) -> dict:
        return {
            "status": ObjectiveAlertState.FIRING,
            "severity": alert.severity,
            "long_window": alert.long,
            "short_window": alert.short,
            "factor": alert.factor,
            "burning": list(b.region_ids),
            "evaluated_at": self.now,
            **extra,
        }

    def _deliveries(
        self,
        incident: Incident,
        transition: str,
        objective_id: int,
        *,
        withheld: bool,
        channels: list[NotificationChannel] | None = None,
    ) -> list[int]:
        """One Delivery per enabled channel of the objective; the ids to send (none when withheld)."""
        channels = self.channels(objective_id) if channels is None else channels
        return deliveries(incident, transition, self.now, withheld, channels)


def evaluate_objectives(now: datetime, report) -> None:
    """Judge every enabled objective whose counts are exact as of `now`, and end what disabled or rebuilding
    objectives had open. Adds to `report` (probes.alerts.evaluate.PassReport)."""
    evaluator = ObjectiveEvaluator(now, report)
    states = {s.objective_id: s for s in ObjectiveAlertState.objects.all()}
    judged = list(
        ServiceLevelObjective.objects.filter(enabled=True).exclude(counted_condition="").values_list("id", flat=True)
    )
    for row in objective_rows(now, judged, cells=True) if judged else []:
        report.objectives += 1
        evaluator.step(row, states.get(row.id), states)
    # An objective switched off, or changed and being counted again, is no longer judged: what it had open ends now,
    # said so, rather than staying open.
    for objective_id, state in states.items():
        if state.status == ObjectiveAlertState.FIRING and objective_id not in judged:
            evaluator.resolve(objective_id, state, {"say": "objective_not_judged"})
