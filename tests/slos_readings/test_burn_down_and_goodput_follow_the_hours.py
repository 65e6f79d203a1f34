"""The burn-down chart's points are the budget left after each hour of the window, ending at the objective's own
remaining share; goodput sums each hour's or day's good calls per region."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.readings.slo_history import burn_down, goodput
from probes.readings.slos import objective_row
from tests.factories import ProbeFactory, RegionFactory, ServiceLevelObjectiveFactory, SLOHourCountFactory

NOW = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


@pytest.mark.django_db
def test_the_burn_down_ends_at_the_remaining_share_and_goodput_sums_by_bucket():
    probe = ProbeFactory()
    a, b = probe.regions.get(), RegionFactory()
    objective = ServiceLevelObjectiveFactory(targets=[probe.target], objective_percent=99.0)
    type(objective).objects.filter(id=objective.id).update(counted_condition=objective.condition_fingerprint())
    hours = [(a, 30, 500, 0), (b, 30, 400, 4), (a, 5, 480, 12), (a, 4, 100, 2)]  # (region, hours ago, good, bad)
    for region, ago, good, bad in hours:
        SLOHourCountFactory(
            objective=objective, target=probe.target, region=region, hour=NOW - timedelta(hours=ago), good=good, bad=bad
        )

    points = burn_down(objective.id, NOW)
    eligible = sum(good + bad for _, _, good, bad in hours)
    assert [p.hour for p in points] == [NOW - timedelta(hours=ago - 1) for ago in (30, 5, 4)]
    spent = [4, 16, 18]
    assert [p.remaining_ratio for p in points] == pytest.approx([1 - s / eligible / 0.01 for s in spent])
    assert points[-1].remaining_ratio == pytest.approx(objective_row(objective.id, NOW).budget.remaining_ratio)

    hourly = goodput(objective.id, NOW - timedelta(hours=6), NOW, "hour")
    assert [(r.bucket, r.region_slug, r.counts.good, r.attainment) for r in hourly] == [
        (NOW - timedelta(hours=5), a.slug, 480, pytest.approx(480 / 492)),
        (NOW - timedelta(hours=4), a.slug, 100, pytest.approx(100 / 102)),
    ]
    since = NOW - timedelta(days=3)
    daily = goodput(objective.id, since, NOW, "day", by_region=False)
    assert sum(r.counts.good for r in daily) == 1480
    # Whole days from the day counts and the edges from the hours agree with the hours summed by day.
    by_hour: dict = {}
    for r in goodput(objective.id, since, NOW, "hour", by_region=False):
        day = r.bucket.replace(hour=0)
        by_hour[day] = by_hour.get(day, 0) + r.counts.good
    assert {r.bucket: r.counts.good for r in daily} == by_hour
    assert all(r.bucket.hour == 0 and 0 < r.hours <= 24 for r in daily)
    inside = [r for r in daily if since <= r.bucket and r.bucket + timedelta(days=1) <= NOW]
    assert inside and all(r.hours == 24 for r in inside)
    today = goodput(objective.id, NOW - timedelta(hours=5), NOW, "day", by_region=False)
    # Only the hours of the bucket inside the window count, so goodput per hour of a part day is not understated.
    first = today[0]
    assert first.hours == (min(first.bucket + timedelta(days=1), NOW) - (NOW - timedelta(hours=5))) / timedelta(hours=1)
    assert first.goodput_per_hour == first.counts.good / first.hours > first.counts.good / 24
