"""Ninety bars, oldest first, one per UTC day: the day's attainment under the objective (good / eligible), met or
missed against it; days without calls, and days before the objective's counts are exact, have none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.models import ServiceLevelObjective
from probes.readings.status import UPTIME_DAYS, status_reading
from tests.factories import SLOHourCountFactory


def _day(days_ago: int) -> datetime:
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=days_ago)


def _hour(scene, days_ago: int, good: int, bad: int) -> None:
    SLOHourCountFactory(
        objective=scene.objective,
        target=scene.target,
        region=scene.regions[0],
        hour=_day(days_ago) + timedelta(hours=10),
        good=good,
        degraded=0,
        bad=bad,
        missed=0,
        excluded=0,
        bad_minutes=0,
    )


def test_each_day_reads_its_own_attainment(scene):
    _hour(scene, 3, good=999, bad=1)  # 99.9 %: met
    _hour(scene, 2, good=97, bad=3)  # 97 %: missed
    target = status_reading(scene.page.id).targets[0]
    assert len(target.uptime) == UPTIME_DAYS
    by_day = {d.day: d for d in target.uptime}
    assert by_day[_day(3).date()].attainment == 0.999 and by_day[_day(3).date()].met is True
    assert by_day[_day(2).date()].attainment == 0.97 and by_day[_day(2).date()].met is False
    assert by_day[_day(1).date()].attainment is None and by_day[_day(1).date()].met is None
    assert target.uptime[-1].day == _day(0).date()
    assert target.uptime[0].day == _day(UPTIME_DAYS - 1).date()
    # Over the days shown, pooled: (999 + 97) / 1100.
    assert target.uptime_ratio == (999 + 97) / 1100


def test_days_before_the_counts_are_exact_have_no_figure(scene):
    _hour(scene, 10, good=50, bad=50)
    ServiceLevelObjective.objects.filter(id=scene.objective.id).update(exact_since=_day(5))
    by_day = {d.day: d for d in status_reading(scene.page.id).targets[0].uptime}
    assert by_day[_day(10).date()].attainment is None


def test_the_page_draws_a_bar_per_day_with_its_figure(scene, client):
    _hour(scene, 2, good=97, bad=3)
    html = client.get(f"/status/{scene.page.slug}/").content.decode()
    assert html.count('class="bar bar-') == UPTIME_DAYS
    assert f'data-day="{_day(2):%Y-%m-%d}" data-attainment="97.000"' in html
    assert html.count("bar bar-missed") == 1
