"""Rows at the slot rule's extremes around a window's edges (probes.slot_time), for the slot_windows tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.models import Measurement
from tests.factories import MeasurementFactory

SINCE = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
LATE = timedelta(minutes=59, seconds=59)  # started this long after its slot
EARLY = timedelta(minutes=4, seconds=59)  # started this long before its slot
TICK = timedelta(microseconds=1)


def edge_rows(probe, region, since: datetime, until: datetime) -> list[Measurement]:
    """Rows of `probe` in `region` that a slot bound computed wrongly would lose or add: late and early starts
    (up to the rule's exact limits) just inside both edges of [since, until), and rows whose slot lies inside
    but whose start lies outside. Each has its own TTFT, so a percentile tells which were read."""
    times = [
        (since, since - LATE),  # a late start at the first instant
        (since, since - timedelta(hours=1)),  # the latest start the rule allows, at the first instant
        (since + timedelta(minutes=1), since + timedelta(minutes=1) + EARLY),
        (until - timedelta(seconds=1), until - timedelta(seconds=1) + EARLY),  # an early start at the end
        (until - TICK, until - TICK + timedelta(minutes=5)),  # the earliest start allowed, at the last instant
        (until - timedelta(minutes=30), until - timedelta(minutes=30) - LATE),
        (since - TICK, since + EARLY - TICK),  # slot inside, start just before: not in the window
        (until, until - LATE),  # slot inside, start at the end: not in the window
    ]
    return [
        MeasurementFactory(probe=probe, region=region, started_at=started, scheduled_for=slot, ttft_ms=100.0 + i)
        for i, (started, slot) in enumerate(times)
    ]


def started_within(since: datetime, until: datetime, **narrow) -> list[Measurement]:
    """The rows a reader must read: by started_at alone, as before any slot bound."""
    return list(Measurement.objects.filter(started_at__gte=since, started_at__lt=until, **narrow))
