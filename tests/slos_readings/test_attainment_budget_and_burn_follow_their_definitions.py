"""An objective's figures from known hour counts, against the definitions (probes.readings.slos): attainment is
good / eligible; the budget allowed is (1 - objective) x eligible and its remaining share goes negative once
overspent; a burn rate is the bad share over the budget's share; a mix weighs each region's bad share by its share;
the status and the projected exhaustion follow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.readings.slos import BURN_ALERTS, alert_for, objective_row
from tests.factories import ProbeFactory, RegionFactory, ServiceLevelObjectiveFactory, SLOHourCountFactory

NOW = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)  # on the hour: whole hours only


def _counted(**kwargs):
    objective = ServiceLevelObjectiveFactory(objective_percent=99.0, **kwargs)
    type(objective).objects.filter(id=objective.id).update(
        counted_condition=objective.condition_fingerprint(), exact_since=NOW - timedelta(days=40)
    )
    return objective


def _hour(objective, target, region, ago: timedelta, good: int, bad: int, degraded: int = 0):
    SLOHourCountFactory(
        objective=objective, target=target, region=region, hour=NOW - ago, good=good, bad=bad, degraded=degraded
    )


@pytest.mark.django_db
def test_an_overspent_objective_reads_its_budget_in_calls_and_shares_pooled_and_by_cell():
    probe = ProbeFactory()
    a, b = probe.regions.get(), RegionFactory()
    objective = _counted(targets=[probe.target])
    _hour(objective, probe.target, a, timedelta(hours=2), good=990, bad=10, degraded=40)
    _hour(objective, probe.target, b, timedelta(hours=30), good=900, bad=100)
    _hour(objective, probe.target, b, timedelta(days=31), good=0, bad=500)  # outside the 30 days

    row = objective_row(objective.id, NOW)
    assert (row.budget.counts.good, row.budget.counts.bad, row.budget.counts.degraded) == (1890, 110, 40)
    assert row.budget.attainment == pytest.approx(0.945)
    assert (row.budget.allowed, row.budget.used, row.budget.remaining) == pytest.approx((20.0, 110.0, -90.0))
    assert row.budget.remaining_ratio == pytest.approx(-4.5)
    assert row.burn["1h"] is None  # no call in the last hour: no burn, not zero
    assert (row.burn["6h"], row.burn["24h"], row.burn["3d"]) == pytest.approx((1.0, 1.0, 5.5))
    assert (row.status, row.exhaustion) == ("exhausted", None)

    cells = {(c.target_id, c.region_id): c for c in row.cells}
    assert cells[(probe.target_id, a.id)].budget.attainment == pytest.approx(0.99)
    assert cells[(probe.target_id, a.id)].budget.remaining_ratio == pytest.approx(0.0)
    assert cells[(probe.target_id, b.id)].budget.attainment == pytest.approx(0.9)
    assert cells[(probe.target_id, b.id)].burn["3d"] == pytest.approx(10.0)
    assert {r.region_id: r.budget.counts.eligible for r in row.regions} == {a.id: 1000, b.id: 1000}


@pytest.mark.django_db
def test_a_mix_weighs_each_regions_bad_share_by_its_share():
    probe = ProbeFactory()
    a, b = probe.regions.get(), RegionFactory()
    objective = _counted(targets=[probe.target], mix={a.slug: 75, b.slug: 25})
    _hour(objective, probe.target, a, timedelta(hours=2), good=990, bad=10)
    _hour(objective, probe.target, b, timedelta(hours=2), good=90, bad=10)  # few calls, a quarter of the users

    row = objective_row(objective.id, NOW)
    assert row.has_mix
    assert row.budget.attainment == pytest.approx(1 - (0.75 * 0.01 + 0.25 * 0.1))
    assert row.burn["6h"] == pytest.approx((0.75 * 0.01 + 0.25 * 0.1) / 0.01)
    assert {r.region_id: r.share for r in row.regions} == pytest.approx({a.id: 0.75, b.id: 0.25})


@pytest.mark.django_db
def test_a_slow_burn_over_three_days_and_six_hours_is_a_ticket_with_its_exhaustion_projected():
    probe = ProbeFactory()
    region = probe.regions.get()
    objective = _counted(targets=[probe.target])
    _hour(objective, probe.target, region, timedelta(days=10), good=9900, bad=0)
    _hour(objective, probe.target, region, timedelta(hours=3), good=98, bad=2)  # burning at 2x

    row = objective_row(objective.id, NOW)
    assert row.budget.remaining_ratio == pytest.approx(1 - (2 / 10000) / 0.01)
    assert (row.burn["6h"], row.burn["24h"], row.burn["3d"]) == pytest.approx((2.0, 2.0, 2.0))
    assert (row.status, row.alert) == ("ticket", BURN_ALERTS[2])
    # The remaining 98 % of 30 days' budget lasts 0.98 x 30 days / 2 at the last 24 hours' rate.
    assert row.exhaustion == NOW + timedelta(days=30) * (0.98 / 2.0)


@pytest.mark.django_db
def test_an_objective_waiting_for_its_rebuild_or_disabled_says_so_and_has_no_figures():
    rebuilding = ServiceLevelObjectiveFactory()
    disabled = _counted(enabled=False)
    rows = {r.id: r for r in (objective_row(rebuilding.id, NOW), objective_row(disabled.id, NOW))}
    assert (rows[rebuilding.id].status, rows[rebuilding.id].exact_since) == ("rebuilding", None)
    assert rows[disabled.id].status == "disabled"
    assert rows[rebuilding.id].budget.attainment is None


def test_each_alert_holds_only_above_its_factor_over_both_windows():
    page, slow_page, ticket = BURN_ALERTS
    assert alert_for({"1h": 14.5, "5m": 14.5}) is page
    assert alert_for({"1h": 14.4, "5m": 20.0}) is None  # exactly at the factor: not above it
    assert alert_for({"1h": 20.0, "5m": 14.0}) is None  # the short window has stopped burning
    assert alert_for({"6h": 6.1, "30m": 6.1, "1h": 6.1, "5m": 6.1}) is slow_page
    assert alert_for({"3d": 1.01, "6h": 1.01}) is ticket
    assert alert_for({"3d": 1.01, "6h": None}) is None
