"""A call whose slot lies in a silence of its target leaves the denominator of an objective that excludes
silences, and counts as usual in one that does not."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory, SilenceFactory
from tests.slos_counting.conftest import counts, current, hour_ago, ingest


@pytest.mark.django_db(transaction=True)
def test_calls_in_a_silence_are_excluded_only_where_the_objective_excludes_silences():
    probe = ProbeFactory()
    region = probe.regions.get()
    start = hour_ago()
    SilenceFactory(target=probe.target, starts_at=start, ends_at=start + timedelta(minutes=30))
    excluding = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    counting = current(
        ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500, exclude_silences=False)
    )
    calls = [
        (start, {"ttft_ms": 900.0}),  # the silence's first instant: inside
        (start + timedelta(minutes=29), {"ttft_ms": 200.0}),
        (start + timedelta(minutes=30), {"ttft_ms": 900.0}),  # its end: outside
        (start + timedelta(minutes=31), {"ttft_ms": 200.0}),
    ]
    assert ingest(probe, region, calls) == 4
    assert counts(excluding) == {"good": 1, "degraded": 0, "bad": 1, "missed": 0, "excluded": 2}
    assert counts(counting) == {"good": 2, "degraded": 0, "bad": 2, "missed": 0, "excluded": 0}

    rebuild(excluding.id)
    rebuild(counting.id)
    assert counts(excluding) == {"good": 1, "degraded": 0, "bad": 1, "missed": 0, "excluded": 2}
    assert counts(counting) == {"good": 2, "degraded": 0, "bad": 2, "missed": 0, "excluded": 0}
