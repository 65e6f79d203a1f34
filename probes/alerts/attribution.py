"""Which phase of a call moved, and what that says.

For a latency breach, the window's phase pieces (the dashboard's stack:
dns, connect, tls, server wait = TTFB minus connection set-up, first token
= TTFT minus TTFB, streaming = total minus TTFT; probes.readings'
stack_segments) are compared with the same pieces of the baseline, pooled
over the breaching regions: the window's calls together, the baselines'
histograms merged (percentiles are never averaged). The piece that grew
most is named, with the seed's reading of it: the network path (DNS,
connect, TLS), queueing or prefill at the provider (server wait, first
token), generation (streaming), or a cold start, when each breaching
region's breach is one slow call that came after an idle spell.

Server wait (TTFB minus connection set-up) holds one round trip: the request
going out and the first byte coming back. When the path got longer, server
wait grows by about what TCP connect (one round trip) grew, and the provider
added nothing. So the provider's share of a change in server wait is that
change minus connect's (when connect moved); when what is left is within the
tolerance (ROUND_TRIP_SLACK), the round trip explains it and the network path
is named instead.

Plain Python over readings: no ORM, no Celery."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from probes.alerts.wording import SEGMENT_NAMES, why_text
from probes.histogram import exact_percentile
from probes.readings.alerts import Baseline, Call
from probes.readings.rows import Reading
from probes.readings.summaries import stack_segments

NETWORK = ("dns", "connect", "tls")
PROVIDER = ("server_wait", "first_token")
# A piece moved when it grew by more than this many ms and this share of its baseline.
MOVED_MS = 5.0
MOVED_SHARE = 0.10
# The provider's share of a server-wait change (the change minus connect's) is left to the round trip while it
# is within this share of connect's change, or within MOVED_MS / MOVED_SHARE of the baseline server wait as for
# any piece: medians of a jittered round trip do not cancel to the millisecond.
ROUND_TRIP_SLACK = 0.10
MILESTONES = ("dns", "connect", "tls", "ttfb", "ttft", "total")


@dataclass(frozen=True)
class Attribution:
    phase: str  # a key of SEGMENT_NAMES, "cold_start", or "" when nothing can be named
    # What the sentence says, as data (probes.alerts.wording.why_text): {"note": "no_baseline"}, or the parts
    # [("unchanged", "connect"), ("change", "server_wait", 1100.0)] and the reading ("server_wait").
    why: dict
    deltas: dict[str, float]  # piece -> ms grown (window minus baseline)

    @property
    def text(self) -> str:
        """ "TCP connect unchanged, server wait +1.1 s: queueing at the provider, not the network", in the
        active language."""
        return why_text(self.why)


def window_medians(calls: Iterable[Call]) -> dict[str, float | None]:
    values: dict[str, list[float]] = {m: [] for m in MILESTONES}
    for call in calls:
        if not call.ok:
            continue
        for m in MILESTONES:
            v = getattr(call, m)
            if v is not None:
                values[m].append(v)
    return {m: (exact_percentile(v, 0.5) if v else None) for m, v in values.items()}


def pooled(baselines: Sequence[Baseline]) -> Baseline:
    reading = Reading()
    for b in baselines:
        reading.merge(b.reading)
    return Baseline(reading, same_hour=all(b.same_hour for b in baselines))


def attribute(
    window: Sequence[Call], baselines: Sequence[Baseline], *, cold_start: tuple[bool, float] | None = None
) -> Attribution:
    """The phase that moved most between the baselines and the window's calls
    (both of the breaching regions only). cold_start=(True, idle_minutes)
    when every breaching region's breach is one slow call after idle."""
    if cold_start is not None and cold_start[0]:
        return Attribution("cold_start", {"note": "cold_start", "idle_minutes": cold_start[1]}, {})
    if not baselines or not window:
        return Attribution("", {"note": "no_baseline"}, {})
    return compare(window_medians(window), pooled(baselines).medians())


def compare(window: dict[str, float | None] | None, baseline: dict[str, float | None] | None) -> Attribution:
    """attribute() from the medians already taken: an evaluation pass takes them once per
    (target, breaching regions) for every rule that breaches there (probes.alerts.evaluate)."""
    if window is None or baseline is None:
        return Attribution("", {"note": "no_baseline"}, {})
    now = stack_segments(window)
    before = stack_segments(baseline)
    deltas = {name: now[name] - before[name] for name in SEGMENT_NAMES}
    moved = {name: d for name, d in deltas.items() if _moved(d, before[name])}
    # The round trip inside server wait: what connect grew, when it moved at all (jitter is not a round trip).
    round_trip = moved.get("connect", 0.0)
    provider_share = deltas["server_wait"] - round_trip
    explained = bool(round_trip) and "server_wait" in moved
    if explained:
        slack = max(MOVED_MS, MOVED_SHARE * max(before["server_wait"], 1.0), ROUND_TRIP_SLACK * round_trip)
        if provider_share > slack:
            moved["server_wait"] = provider_share
            explained = False
        else:
            del moved["server_wait"]
    if not moved:
        return Attribution("", {"note": "no_phase"}, deltas)
    phase = max(moved, key=lambda name: moved[name])
    parts: list[tuple] = []
    # The counterpart that did not move is what rules the other reading out.
    if phase in NETWORK:
        reading = "network"
        witness = "server_wait"
    else:
        reading = phase
        witness = "connect"
    if witness not in moved and not explained and (now[witness] or before[witness]):
        parts.append(("unchanged", witness))
    if phase == "server_wait" and round_trip:
        parts.append(("change", "connect", round_trip))
        parts.append(("beyond", phase, deltas[phase], provider_share))
    else:
        parts.append(("change", phase, deltas[phase]))
    if explained and phase in NETWORK:
        if phase != "connect":
            parts.append(("change", "connect", round_trip))
        parts.append(("with_it", "server_wait", deltas["server_wait"]))
    return Attribution(phase, {"parts": parts, "reading": reading}, deltas)


def _moved(delta: float, before: float) -> bool:
    return delta > MOVED_MS and delta > MOVED_SHARE * max(before, 1.0)
