"""Readers count the calls the counter has not counted yet (probes.slos.counting counts behind ingest): a window's
figures are the same before the counter runs as after, including a missed run that a late measurement replaces,
and the current hour of a window ending now (read from that hour's count) holds its calls so far."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.fleet.missed import close_slots
from probes.ingest import store
from probes.models import MissedRun, SLOHourCount
from probes.readings.slos import counts_in
from probes.slos.counting import count_pending
from probes.slos.rebuild import rebuild
from tests.factories import ServiceLevelObjectiveFactory, measurement_payload
from tests.slos_counting.conftest import scheduled_since


def _pooled(objective, windows) -> dict[str, tuple[int, int, int]]:
    got = counts_in([objective.id], windows, by_cell=False)
    return {label: (c.good, c.bad, c.missed) for (_, label), c in sorted(got.items())}


@pytest.mark.django_db(transaction=True)
def test_a_windows_counts_are_the_same_before_and_after_the_counter_counts():
    probe, region, now = scheduled_since(4, interval_seconds=600)
    objective = ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500)
    rebuild(objective.id)
    assert close_slots(now) > 0  # every closed slot of the last hours: missed, counted as they are recorded
    missed = list(MissedRun.objects.filter(probe=probe).order_by("scheduled_for"))
    late = missed[0].scheduled_for
    this_hour = now.replace(minute=0, second=0, microsecond=0)
    recent = max(now - timedelta(seconds=30), this_hour)  # in the current hour whenever the test runs
    payloads = [
        measurement_payload(probe, region, late, ttft_ms=200.0),  # replaces a counted missed run
        measurement_payload(probe, region, this_hour - timedelta(minutes=50, seconds=7), ttft_ms=900.0),
        measurement_payload(probe, region, recent, ttft_ms=100.0),
    ]
    assert len(store(payloads)) == 3  # stored, not counted: store() leaves counting to the counter
    windows = {
        "ending now": (now - timedelta(hours=5), datetime.now(UTC)),
        "past hours": (now - timedelta(hours=5), this_hour),
        "this hour so far": (this_hour, datetime.now(UTC)),
    }
    counted_before = SLOHourCount.objects.filter(objective=objective, good__gt=0).count()

    before = _pooled(objective, windows)
    count_pending()
    after = _pooled(objective, windows)

    assert counted_before == 0  # the reading above counted the calls itself
    assert SLOHourCount.objects.filter(objective=objective, good__gt=0).exists()
    assert before == after
    good, bad, missed_runs = after["ending now"]
    assert good == 2 and bad == missed_runs + 1
    assert missed_runs == len(missed) - 1  # the late measurement took its missed run back
    # The good calls of the current hour (the recent one, and the late one when its slot is this hour's), read
    # from the current hour's count.
    assert after["this hour so far"][0] == sum(slot >= this_hour for slot in (late, recent)) >= 1
