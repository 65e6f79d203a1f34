"""Each objective shows on /metrics: attainment and budget left per target x region over its window, its burn rate
over every burn window, its own attainment and budget (weighted by its mix), the objective and its status; a
series without eligible calls is left out rather than exported as NaN, and an objective that is disabled or
waiting for its rebuild has its status and nothing else."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from probes.prometheus import render
from probes.readings.slos import BURN_WINDOWS
from tests.factories import ProbeFactory, RegionFactory, ServiceLevelObjectiveFactory, TargetFactory
from tests.metrics.conftest import families, samples
from tests.slos_counting.conftest import current, hour_ago, ingest

OBJECTIVE = 0.99


def _by(parsed: dict, name: str, *keys: str) -> dict:
    return {tuple(labels[k] for k in keys): value for labels, value in samples(parsed, name)}


@pytest.mark.django_db(transaction=True)
def test_cells_burn_rates_and_the_objective_itself_carry_the_exact_figures():
    london = RegionFactory(slug="test-london")
    tokyo = RegionFactory(slug="test-tokyo")
    probe = ProbeFactory(target=TargetFactory(name="chat"), regions=[london, tokyo])
    pooled = current(ServiceLevelObjectiveFactory(name="chat p99", targets=[probe.target]))
    mixed = current(
        ServiceLevelObjectiveFactory(name="chat mix", targets=[probe.target], mix={london.slug: 25, tokyo.slug: 75})
    )
    ServiceLevelObjectiveFactory(name="chat off", targets=[probe.target], enabled=False)
    ServiceLevelObjectiveFactory(name="chat new", targets=[probe.target])  # never rebuilt: not counting yet
    start = hour_ago()
    # Minutes 50 to 59 of a past hour: london 8 good then 2 bad (TTFT over the 800 ms threshold), tokyo 10 good.
    london_calls = [(start + timedelta(minutes=50 + k), {"ttft_ms": 200.0 if k < 8 else 900.0}) for k in range(10)]
    tokyo_calls = [(start + timedelta(minutes=50 + k), {"ttft_ms": 200.0}) for k in range(10)]
    assert ingest(probe, london, london_calls) == 10
    assert ingest(probe, tokyo, tokyo_calls) == 10
    now = start + timedelta(minutes=62)  # the 5-minute window holds minutes 57 to 59: 6 calls, 2 of them bad
    parsed = families(render("", now=lambda: now)[0].decode())

    attainment = _by(parsed, "latency_atlas_slo_attainment_ratio", "slo", "target", "region")
    assert attainment == {
        ("chat mix", "chat", "test-london"): pytest.approx(8 / 10),
        ("chat mix", "chat", "test-tokyo"): 1.0,
        ("chat p99", "chat", "test-london"): pytest.approx(8 / 10),
        ("chat p99", "chat", "test-tokyo"): 1.0,
    }
    remaining = _by(parsed, "latency_atlas_slo_error_budget_remaining_ratio", "slo", "target", "region")
    assert remaining[("chat p99", "chat", "test-london")] == pytest.approx(1 - (2 / 10) / (1 - OBJECTIVE))
    assert remaining[("chat p99", "chat", "test-tokyo")] == 1.0

    burn = _by(parsed, "latency_atlas_slo_burn_rate", "slo", "window")
    bad_share = {label: 2 / 20 for label, _ in BURN_WINDOWS} | {"5m": 2 / 6}
    assert {w: v for (slo, w), v in burn.items() if slo == "chat p99"} == {
        label: pytest.approx(share / (1 - OBJECTIVE)) for label, share in bad_share.items()
    }
    # The mix weighs each region's own bad share: london 25 %, tokyo (no bad call) 75 %.
    assert burn[("chat mix", "5m")] == pytest.approx(0.25 * (2 / 3) / (1 - OBJECTIVE))
    assert burn[("chat mix", "1h")] == pytest.approx(0.25 * (2 / 10) / (1 - OBJECTIVE))

    overall = _by(parsed, "latency_atlas_slo_overall_attainment_ratio", "slo")
    assert overall == {("chat p99",): pytest.approx(18 / 20), ("chat mix",): pytest.approx(1 - 0.25 * 2 / 10)}
    overall_remaining = _by(parsed, "latency_atlas_slo_overall_error_budget_remaining_ratio", "slo")
    assert overall_remaining[("chat p99",)] == pytest.approx(1 - (2 / 20) / (1 - OBJECTIVE))
    assert _by(parsed, "latency_atlas_slo_objective_ratio", "slo") == {
        (name,): pytest.approx(OBJECTIVE) for name in ("chat p99", "chat mix", "chat off", "chat new")
    }
    status = {key for key, v in _by(parsed, "latency_atlas_slo_status", "slo", "status").items() if v == 1.0}
    assert status == {
        ("chat p99", "exhausted"),
        ("chat mix", "exhausted"),
        ("chat off", "disabled"),
        ("chat new", "rebuilding"),
    }
    assert pooled.id != mixed.id


@pytest.mark.django_db(transaction=True)
def test_a_series_without_eligible_calls_is_left_out_not_nan():
    probe = ProbeFactory(target=TargetFactory(name="quiet"), regions=[RegionFactory(slug="test-quiet")])
    current(ServiceLevelObjectiveFactory(name="quiet p99", targets=[probe.target]))
    start = hour_ago()
    assert ingest(probe, probe.regions.get(), [(start + timedelta(minutes=10), {"ttft_ms": 100.0})]) == 1
    now = start + timedelta(minutes=62)  # the call is 52 minutes back: inside 1 h, outside 5 m and 30 m
    parsed = families(render("", now=lambda: now)[0].decode())

    windows = {w for (_, w) in _by(parsed, "latency_atlas_slo_burn_rate", "slo", "window")}
    assert windows == {"1h", "6h", "24h", "3d"}
    assert _by(parsed, "latency_atlas_slo_attainment_ratio", "slo", "target", "region") == {
        ("quiet p99", "quiet", "test-quiet"): 1.0
    }
    objective_families = [f for name, f in parsed.items() if name.startswith("latency_atlas_slo_")]
    assert objective_families
    assert not [s for f in objective_families for s in f.samples if math.isnan(s.value)]
