"""One evaluation pass over every enabled rule, as if it were `now`.

Per rule and target (a rule without a target is judged for each target an
enabled probe measures, each on its own):
1. judge: each region of the rule with at least min_samples calls in the
   window [now - window, now) is measured; it breaches when its value (the
   exact percentile of a latency metric over the window's calls, or the
   share of calls not ok / of scheduled runs missed / of calls refused for
   rate limits or overload) is above every
   condition the rule sets (threshold, baseline_factor x its baseline).
   The rule holds when the breaching regions reach the quorum.
2. move the rule's AlertState (the hysteresis): ok -> pending when it holds;
   pending -> firing once it has held for a whole window (an incident
   opens); firing -> clearing when it stops holding; clearing -> ok once it
   has stayed clear for a whole window (the incident resolves); clearing ->
   firing again when it holds before that, with nothing sent. So a
   condition that flaps inside a window notifies nobody twice.
Every move is a compare-and-swap on AlertState.version inside the
transaction that writes the incident, its timeline and its deliveries; a
pass that loses the swap (another evaluator moved the state first) writes
nothing. Deliveries are queued after the commit (probes.alerts.notify).

A pass writes only what changed: a steady rule costs a read, not a row.

The same pass then judges the objectives' burn-rate alerts (probes.slos.alerts), through the same incidents,
channels, silences and timeline.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation

from probes.alerts import wording
from probes.alerts.attribution import Attribution, attribute, compare, pooled, window_medians
from probes.alerts.models import (
    GLOBAL,
    REGIONAL,
    AlertRule,
    AlertState,
    Delivery,
    Incident,
    IncidentEvent,
    NotificationChannel,
    Silence,
)
from probes.alerts.rules import is_latency, quorum
from probes.alerts.transitions import deliveries, queue, record_opened, region_events, swap
from probes.histogram import _rank
from probes.metrics import BY_NAME, PERCENTILES
from probes.readings.alerts import Baseline, Call, baselines, missed_in_window, window_calls
from probes.slos.alerts import evaluate_objectives

log = logging.getLogger(__name__)

# A call is "after idle" when its probe made no call from that region for
# this long before it: the provider may have scaled the model down.
COLD_IDLE = timedelta(minutes=10)


@dataclass
class Verdict:
    """One region's reading of a rule over the window."""

    region_id: int
    samples: int
    value: float
    baseline: float | None
    breach: bool
    same_hour: bool = False  # the baseline is the same hour of day's (else the whole 7 days')

    @property
    def excess(self) -> float:
        """How far above its reference (the baseline, else 1): picks the region a summary quotes."""
        return self.value / self.baseline if self.baseline else self.value


@dataclass
class Judgement:
    measured: list[Verdict]
    needed: int

    @property
    def breaching(self) -> list[Verdict]:
        return [v for v in self.measured if v.breach]

    @property
    def holds(self) -> bool:
        return bool(self.breaching) and len(self.breaching) >= self.needed

    @property
    def scope(self) -> str:
        share = len(self.breaching) / len(self.measured) if self.measured else 0.0
        return GLOBAL if share >= settings.LATENCY_ALERT_GLOBAL_SHARE else REGIONAL


@dataclass
class PassReport:
    rules: int = 0
    pairs: int = 0
    objectives: int = 0
    opened: int = 0
    resolved: int = 0
    moved: int = 0
    lost_races: int = 0
    seconds: float = 0.0
    queued: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{self.rules} rules, {self.pairs} rule-target pairs judged in {self.seconds:.2f} s: "
            f"{self.opened} opened, {self.resolved} resolved, {self.moved} other state changes"
            + (f", {self.lost_races} left to a concurrent pass" if self.lost_races else "")
            + (f"; {self.objectives} objectives judged" if self.objectives else "")
        )


class PassData:
    """What one pass reads, read once: the calls of the longest window (plus
    COLD_IDLE before it), and, when first asked, baselines and missed runs."""

    def __init__(self, now: datetime, rules: list[AlertRule], target_ids: list[int], region_ids: list[int]):
        self.now = now
        self.target_ids = target_ids
        self.region_ids = region_ids
        longest = max((r.window_minutes for r in rules), default=0)
        self.calls = window_calls(now - timedelta(minutes=longest) - COLD_IDLE, now, target_ids)
        self.starts = {pair: [c.started_at for c in calls] for pair, calls in self.calls.items()}
        self._baselines: dict[tuple[int, int], Baseline] | None = None
        self._missed: dict[int, dict[tuple[int, int], int]] = {}
        self._values: dict[tuple, list[float]] = {}
        self._starts_by_probe: dict[tuple[int, int], dict[int, list[datetime]]] = {}
        self._idle_splits: dict[tuple, tuple[list[float], list[float]]] = {}
        self._window_medians: dict[tuple, dict[str, float | None] | None] = {}
        self._baseline_medians: dict[tuple, dict[str, float | None] | None] = {}

    def window(self, pair: tuple[int, int], minutes: int) -> list[Call]:
        calls = self.calls.get(pair, [])
        first = bisect.bisect_left(self.starts.get(pair, []), self.now - timedelta(minutes=minutes))
        return calls[first:]

    def sorted_values(self, pair: tuple[int, int], minutes: int, metric: str) -> list[float]:
        """The window's values of a latency metric (ok calls), ascending: shared by every rule that asks."""
        key = (pair, minutes, metric)
        values = self._values.get(key)
        if values is None:
            values = sorted(v for c in self.window(pair, minutes) if c.ok and (v := getattr(c, metric)) is not None)
            self._values[key] = values
        return values

    def baseline(self, pair: tuple[int, int]) -> Baseline | None:
        if self._baselines is None:
            self._baselines = baselines(self.target_ids, self.now)
        return self._baselines.get(pair)

    def idle_split(self, pair: tuple[int, int], minutes: int, metric: str) -> tuple[list[float], list[float]]:
        """The window's values of a metric (ok calls) that came without an idle spell before them,
        ascending, and the idle minutes before the others: the same for every rule with this metric and
        window, and a scan of the window's calls per rule and breaching region was a second of a firing pass."""
        key = (pair, minutes, metric)
        split = self._idle_splits.get(key)
        if split is None:
            rest, idle = [], []
            for call in self.window(pair, minutes):
                value = getattr(call, metric)
                if not call.ok or value is None:
                    continue
                gap = self.idle_before(pair, call)
                if gap is None:
                    rest.append(value)
                else:
                    idle.append(gap)
            rest.sort()
            split = self._idle_splits[key] = (rest, idle)
        return split

    def window_medians(self, target_id: int, region_ids: tuple[int, ...], minutes: int) -> dict | None:
        """The phase medians of the breaching regions' window calls (None without calls): every rule with
        the same window that breaches in the same regions of a target reads the same ones."""
        key = (target_id, region_ids, minutes)
        if key not in self._window_medians:
            calls = [c for r in region_ids for c in self.window((target_id, r), minutes)]
            self._window_medians[key] = window_medians(calls) if calls else None
        return self._window_medians[key]

    def baseline_medians(self, target_id: int, region_ids: tuple[int, ...]) -> dict | None:
        """The medians of the breaching regions' baselines merged (None without any): merging them again
        for each rule that fired on the same target was most of a firing pass (bench/alerts.py)."""
        key = (target_id, region_ids)
        if key not in self._baseline_medians:
            bases = [b for r in region_ids if (b := self.baseline((target_id, r))) is not None]
            self._baseline_medians[key] = pooled(bases).medians() if bases else None
        return self._baseline_medians[key]

    def missed(self, pair: tuple[int, int], minutes: int) -> int:
        if minutes not in self._missed:
            since = self.now - timedelta(minutes=minutes)
            self._missed[minutes] = missed_in_window(since, self.now, self.target_ids, self.region_ids)
        return self._missed[minutes].get(pair, 0)

    def idle_before(self, pair: tuple[int, int], call: Call) -> float | None:
        """Minutes since the probe's previous call from the region, when at least COLD_IDLE; else None."""
        # Each probe's start times, once per pair: a scan of the pair's calls per call was quadratic, seconds
        # in a pass where many rules fire (bench/alerts.py).
        by_probe = self._starts_by_probe.get(pair)
        if by_probe is None:
            by_probe = {}
            for other in self.calls.get(pair, []):
                by_probe.setdefault(other.probe_id, []).append(other.started_at)
            self._starts_by_probe[pair] = by_probe
        starts = by_probe.get(call.probe_id, [])
        before = bisect.bisect_left(starts, call.started_at)
        previous = starts[before - 1] if before else None
        if previous is None:
            # Nothing in the COLD_IDLE read before the window: idle at least that long.
            return COLD_IDLE.total_seconds() / 60.0
        gap = call.started_at - previous
        return gap.total_seconds() / 60.0 if gap >= COLD_IDLE else None


def _cold_start(rule: AlertRule, target_id: int, verdict: Verdict, data: PassData) -> float | None:
    """Minutes of idle before the calls that make this region breach, when
    its breach is theirs alone: the window's calls that came after an idle
    spell (COLD_IDLE without a call of their probe from the region) are the
    slow ones, and the region's other calls, read alone, do not breach."""
    q = PERCENTILES[rule.percentile or "p95"]
    rest, idle = data.idle_split((target_id, verdict.region_id), rule.window_minutes, rule.metric)
    if not idle or not rest:
        return None
    if _exceeds(rule, rest[_rank(q, len(rest)) - 1], verdict.baseline):
        return None
    return min(idle)


def _exceeds(rule: AlertRule, value: float, baseline: float | None) -> bool:
    checks = []
    if is_latency(rule.metric):
        if rule.threshold_ms is not None:
            checks.append(value > rule.threshold_ms)
        if rule.baseline_factor is not None:
            checks.append(baseline is not None and value > rule.baseline_factor * baseline)
    elif rule.threshold_percent is not None:
        checks.append(value > rule.threshold_percent)
    return bool(checks) and all(checks)


def judge(rule: AlertRule, target_id: int, region_ids: Iterable[int], data: PassData) -> Judgement:
    verdicts = []
    minutes = rule.window_minutes
    for region_id in region_ids:
        pair = (target_id, region_id)
        if is_latency(rule.metric):
            values = data.sorted_values(pair, minutes, BY_NAME[rule.metric].name)
            n = len(values)
            if n < rule.min_samples:
                continue
            q = PERCENTILES[rule.percentile or "p95"]
            value = values[_rank(q, n) - 1]
            base, same_hour = None, False
            if rule.baseline_factor is not None:
                b = data.baseline(pair)
                if b is not None:
                    base, same_hour = b.percentile(rule.metric, q), b.same_hour
            verdict = Verdict(region_id, n, value, base, _exceeds(rule, value, base), same_hour=same_hour)
        else:
            calls = data.window(pair, minutes)
            if rule.metric == "missed":
                missed = data.missed(pair, minutes)
                n, bad = len(calls) + missed, missed
            elif rule.metric == "rate_limited":
                n, bad = len(calls), sum(1 for c in calls if c.refused)
            else:
                n, bad = len(calls), sum(1 for c in calls if not c.ok)
            if n < rule.min_samples or n == 0:
                continue
            value = 100.0 * bad / n
            verdict = Verdict(region_id, n, value, None, _exceeds(rule, value, None))
        verdicts.append(verdict)
    return Judgement(verdicts, quorum(rule.min_regions, rule.min_regions_percent, len(verdicts)))


# --- the summary -------------------------------------------------------------------------------------


def summarise(
    rule: AlertRule, target_name: str, j: Judgement, region_names: dict[int, str], why: Attribution
) -> tuple[str, dict]:
    """The incident's summary: its data (probes.alerts.wording), which pages and notifications render in their
    reader's language, and its English text, stored with the incident for search and the API. Written again as
    regions join and leave, so it names what breaches now."""
    breaching = sorted(j.breaching, key=lambda v: -v.excess)
    worst = breaching[0]
    data: dict = {
        "v": wording.VERSION,
        "metric": rule.metric,
        "places": sorted(region_names.get(v.region_id, str(v.region_id)) for v in breaching),
        "target": target_name,
        "minutes": rule.window_minutes,
        "value": worst.value,
        "breaching": len(j.breaching),
        "measured": len(j.measured),
        "scope": j.scope,
    }
    if is_latency(rule.metric):
        data.update(short=BY_NAME[rule.metric].short, percentile=rule.percentile or "p95", why=why.why)
        if rule.baseline_factor is not None and worst.baseline:
            data.update(baseline=worst.baseline, same_hour=bool(worst.same_hour))
        else:
            data.update(threshold=rule.threshold_ms or 0.0)
    else:
        data.update(threshold=rule.threshold_percent)
    with translation.override("en"):
        text = wording.summary_text(data)
    return text, data


# --- state moves --------------------------------------------------------------------------------------


class Evaluator:
    def __init__(self, now: datetime, report: PassReport):
        self.now = now
        self.report = report
        self.region_names: dict[int, str] = {}
        # Small tables read once per pass, when first needed: per incident they were many of its round trips.
        self._silences: dict[int, Silence] | None = None
        self._target_names: dict[int, str] | None = None
        self._channels: dict[int, list[NotificationChannel]] | None = None

    def state_for(self, rule: AlertRule, target_id: int, states: dict) -> AlertState:
        state = states.get((rule.id, target_id))
        if state is None:
            AlertState.objects.bulk_create([AlertState(rule=rule, target_id=target_id)], ignore_conflicts=True)
            state = AlertState.objects.get(rule=rule, target_id=target_id)
        return state

    def step(self, rule: AlertRule, target_id: int, state: AlertState | None, j: Judgement, data: PassData) -> None:
        status = state.status if state is not None else AlertState.OK
        window = timedelta(minutes=rule.window_minutes)
        breaching = sorted(v.region_id for v in j.breaching)
        if status == AlertState.OK:
            if j.holds:
                self._move(rule, target_id, state, status=AlertState.PENDING, since=self.now, breaching=breaching)
        elif status == AlertState.PENDING:
            assert state is not None
            if not j.holds:
                self._move(rule, target_id, state, status=AlertState.OK, since=None, breaching=[])
            elif self.now - state.since >= window:
                self._fire(rule, target_id, state, j, data)
        elif status == AlertState.FIRING:
            assert state is not None
            if not j.holds:
                self._move(rule, target_id, state, status=AlertState.CLEARING, since=self.now)
            elif breaching != sorted(state.breaching):
                self._regions_moved(rule, target_id, state, j, data)
        elif status == AlertState.CLEARING:
            assert state is not None
            if j.holds:
                # Back before it cleared for a whole window: still the same incident, nothing sent.
                self._move(rule, target_id, state, status=AlertState.FIRING, since=None)
            elif self.now - state.since >= window:
                self._resolve(rule, target_id, state)

    def _move(self, rule, target_id, state, **changes) -> bool:
        if state is None:
            state = self.state_for(rule, target_id, {})
            if state.status != AlertState.OK:
                self.report.lost_races += 1
                return False
        if swap(state, evaluated_at=self.now, **changes):
            self.report.moved += 1
            return True
        self.report.lost_races += 1
        return False

    def _fire(self, rule: AlertRule, target_id: int, state: AlertState, j: Judgement, data: PassData) -> None:
        breaching = j.breaching
        why = self._why(rule, target_id, j, data)
        worst = max(breaching, key=lambda v: v.excess)
        names = self._names()
        summary, summary_data = summarise(
            rule, rule.target.name if rule.target else self._target_name(target_id), j, names, why
        )
        queued: list[int] = []
        try:
            with transaction.atomic():
                if not swap(
                    state,
                    status=AlertState.FIRING,
                    evaluated_at=self.now,
                    breaching=sorted(v.region_id for v in breaching),
                ):
                    self.report.lost_races += 1
                    return
                silence = self._silence_at(target_id)
                incident = Incident.objects.create(
                    rule=rule,
                    target_id=target_id,
                    started_at=state.since,
                    opened_at=self.now,
                    scope=j.scope,
                    measured_regions=len(j.measured),
                    summary=summary,
                    summary_data=summary_data,
                    phase=why.phase,
                    peak_value=worst.value,
                    baseline_value=worst.baseline,
                    silenced=silence is not None,
                )
                # A new incident has no regions yet: add() inserts them without set()'s read of the current ones.
                incident.regions.add(*(v.region_id for v in breaching))
                record_opened(incident, self.now, summary, summary_data, silence)
                queued = deliveries(
                    incident, Delivery.OPENED, self.now, withheld=silence is not None, channels=self._channels_of(rule)
                )
                transaction.on_commit(lambda: queue(queued))
        except IntegrityError:
            # Another pass opened this rule's incident for the target between our read and our write.
            self.report.lost_races += 1
            return
        self.report.opened += 1
        self.report.queued.extend(queued)

    def _regions_moved(self, rule: AlertRule, target_id: int, state: AlertState, j: Judgement, data: PassData) -> None:
        now_breaching = {v.region_id for v in j.breaching}
        # The summary says what is breaching now (which regions, how far, which phase): a reader of the incident
        # or of its resolution sees the regions that joined, not the ones it opened with. The timeline keeps who
        # joined and left when, and the incident's regions every region it ever held.
        why = self._why(rule, target_id, j, data)
        summary, summary_data = summarise(
            rule, rule.target.name if rule.target else self._target_name(target_id), j, self._names(), why
        )
        before = set(state.breaching)
        with transaction.atomic():
            if not swap(state, evaluated_at=self.now, breaching=sorted(now_breaching)):
                self.report.lost_races += 1
                return
            incident = Incident.objects.filter(rule=rule, target_id=target_id, resolved_at__isnull=True).first()
            if incident is None:
                return
            names = self._names()
            events = region_events(incident, self.now, before, now_breaching, names)
            IncidentEvent.objects.bulk_create(events)
            incident.regions.add(*(now_breaching - before))
            worst = max(j.breaching, key=lambda v: v.excess)
            changes: dict = {"scope": GLOBAL if incident.scope == GLOBAL else j.scope, "summary": summary}
            changes["summary_data"] = summary_data
            if incident.peak_value is None or worst.value > incident.peak_value:
                changes["peak_value"] = worst.value
            Incident.objects.filter(pk=incident.pk).update(**changes)
        self.report.moved += 1

    def _resolve(self, rule: AlertRule, target_id: int, state: AlertState, why: dict | None = None) -> None:
        """Resolve the open incident; `why` says why other than a clear window, as a timeline line's data
        (probes.alerts.wording.event_text)."""
        queued: list[int] = []
        with transaction.atomic():
            if not swap(state, status=AlertState.OK, since=None, evaluated_at=self.now, breaching=[]):
                self.report.lost_races += 1
                return
            incident = (
                Incident.objects.select_for_update()
                .filter(rule=rule, target_id=target_id, resolved_at__isnull=True)
                .first()
            )
            if incident is None:
                return
            Incident.objects.filter(pk=incident.pk).update(resolved_at=self.now)
            IncidentEvent.objects.create(
                incident=incident,
                at=self.now,
                kind=IncidentEvent.RESOLVED,
                detail=wording.english_event(why or {"say": "clear_for", "minutes": rule.window_minutes}),
                detail_data=why or {"say": "clear_for", "minutes": rule.window_minutes},
            )
            # Whoever was not told of the opening (silenced) is not told of the end either.
            withheld = incident.silenced or self._silence_at(target_id) is not None
            channels = self._channels_of(rule)
            queued = deliveries(incident, Delivery.RESOLVED, self.now, withheld=withheld, channels=channels)
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

    def _why(self, rule: AlertRule, target_id: int, j: Judgement, data: PassData) -> Attribution:
        if not is_latency(rule.metric):
            return Attribution("", {}, {})
        breaching = j.breaching
        idles = [_cold_start(rule, target_id, v, data) for v in breaching]
        if all(idle is not None for idle in idles):
            return attribute([], [], cold_start=(True, min(i for i in idles if i is not None)))
        regions = tuple(v.region_id for v in breaching)
        baseline = data.baseline_medians(target_id, regions)
        if baseline is None:
            return compare(None, None)
        return compare(data.window_medians(target_id, regions, rule.window_minutes), baseline)

    def _silence_at(self, target_id: int) -> Silence | None:
        """The silence over the target now that ends last, if any."""
        if self._silences is None:
            self._silences = {}
            for silence in Silence.objects.filter(starts_at__lte=self.now, ends_at__gt=self.now).order_by("-ends_at"):
                self._silences.setdefault(silence.target_id, silence)
        return self._silences.get(target_id)

    def _target_name(self, target_id: int) -> str:
        if self._target_names is None:
            from probes.models import Target

            self._target_names = dict(Target.objects.values_list("id", "name"))
        return self._target_names[target_id]

    def _channels_of(self, rule: AlertRule) -> list[NotificationChannel]:
        """The rule's enabled channels, in the order rule.channels gave them."""
        if self._channels is None:
            self._channels = {}
            links = AlertRule.channels.through.objects.filter(notificationchannel__enabled=True)
            for link in links.select_related("notificationchannel").order_by("notificationchannel__name"):
                self._channels.setdefault(link.alertrule_id, []).append(link.notificationchannel)
        return self._channels.get(rule.id, [])

    def _names(self) -> dict[int, str]:
        if not self.region_names:
            from probes.models import Region

            self.region_names = dict(Region.objects.values_list("id", "city"))
        return self.region_names


def run_pass(now: datetime | None = None) -> PassReport:
    """Evaluate every enabled rule as if it were `now` (default: the clock)."""
    from probes.models import Probe, Region

    started = time.monotonic()
    now = now or timezone.now()
    report = PassReport()
    rules = list(AlertRule.objects.filter(enabled=True).select_related("target").prefetch_related("regions"))
    report.rules = len(rules)
    measured_targets = sorted(set(Probe.objects.filter(enabled=True).values_list("target_id", flat=True)))
    active_regions = list(Region.objects.filter(active=True).values_list("id", flat=True))
    pairs = []
    for rule in rules:
        for target_id in [rule.target_id] if rule.target_id is not None else measured_targets:
            pairs.append((rule, target_id))
    target_ids = sorted({t for _, t in pairs})
    data = PassData(now, rules, target_ids, active_regions)
    states = {(s.rule_id, s.target_id): s for s in AlertState.objects.filter(rule__in=[r.id for r in rules])}
    evaluator = Evaluator(now, report)
    for rule, target_id in pairs:
        subset = [r.id for r in rule.regions.all()]
        j = judge(rule, target_id, subset or active_regions, data)
        evaluator.step(rule, target_id, states.get((rule.id, target_id)), j, data)
        report.pairs += 1
    # A rule switched off is no longer judged: what it had open ends now, said so, rather than staying open.
    for state in AlertState.objects.filter(rule__enabled=False).exclude(status=AlertState.OK).select_related("rule"):
        if state.status == AlertState.PENDING:
            evaluator._move(state.rule, state.target_id, state, status=AlertState.OK, since=None, breaching=[])
        else:
            evaluator._resolve(state.rule, state.target_id, state, why={"say": "rule_disabled"})
    evaluate_objectives(now, report)
    report.seconds = time.monotonic() - started
    log.info("alert pass at %s: %s", now.isoformat(timespec="seconds"), report)
    return report
