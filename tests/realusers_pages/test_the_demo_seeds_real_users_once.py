"""`make demo` seeds real users for the map's layer and the panels: a day of calls from a few cities to the
demo targets, through the store (rollups right, so they show from the minimum on); a second start adds only
the hours since, never the same calls twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.demo_seed import DEMO_CITIES, DEMO_SOURCE_NAME, TARGETS, seed, seed_real_users
from probes import readings
from probes.models import IngestSource, Observation, Region

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)


def test_a_day_of_real_users_then_only_the_new_hours():
    seed("http://127.0.0.1:9", list(Region.objects.filter(active=True)[:2]))
    added = seed_real_users(now=NOW)
    assert added == Observation.objects.count() > 0
    assert IngestSource.objects.filter(name=DEMO_SOURCE_NAME).count() == 1

    places = readings.real_users.rows(NOW - timedelta(hours=24), NOW, by_target=False).rows
    assert {p.city for p in places} == {c.city for c in DEMO_CITIES}
    by_target = readings.real_users.rows(NOW - timedelta(hours=24), NOW).rows
    assert {r.target for r in by_target} == {t[0] for t in TARGETS}
    # Farther users wait longer: Lagos to Tokyo's target is slower than Osaka to it.
    tokyo = next(t[0] for t in TARGETS if "Tokyo" in t[4])
    p50 = {r.city: r.figures["ttft_p50"] for r in by_target if r.target == tokyo}
    assert p50["Osaka"] < p50["Lagos"]

    assert seed_real_users(now=NOW) == 0
    later = seed_real_users(now=NOW + timedelta(hours=2))
    assert 0 < later < added
