"""probes.alerts.rules.refusals gives each reason a rule can never fire or always fires, on the field it is
about, and nothing for a sensible rule: one case per reason."""

from __future__ import annotations

import pytest

from probes.alerts.rules import refusals
from tests.factories import ProbeFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def measured():
    """A target probed every 60 s from two regions: 10 calls per region in 10 minutes."""
    regions = [RegionFactory(), RegionFactory()]
    target = TargetFactory()
    ProbeFactory(target=target, regions=regions, interval_seconds=60)
    return target


def rule(target, **fields) -> dict:
    values = {
        "metric": "ttft",
        "percentile": "p95",
        "threshold_ms": 1000.0,
        "threshold_percent": None,
        "baseline_factor": None,
        "window_minutes": 10,
        "min_samples": 5,
        "min_regions": 1,
        "min_regions_percent": None,
        "target_id": target.id,
        "region_ids": None,
    }
    values.update(fields)
    return values


CASES = [
    ("latency-without-percentile", {"percentile": ""}, "percentile", "Choose the percentile"),
    ("latency-with-a-share", {"threshold_percent": 10.0}, "threshold_percent", "A share applies"),
    ("no-condition", {"threshold_ms": None}, "threshold_ms", "can never fire"),
    ("zero-ms", {"threshold_ms": 0.0}, "threshold_ms", "always fire"),
    ("past-the-longest-timeout", {"threshold_ms": 10_000_000.0}, "threshold_ms", "longest probe timeout"),
    ("factor-of-one", {"baseline_factor": 1.0}, "baseline_factor", "always fire"),
    (
        "rate-without-share",
        {"metric": "error_rate", "percentile": "", "threshold_ms": None},
        "threshold_percent",
        "give threshold_percent",
    ),
    (
        "share-of-100",
        {"metric": "missed", "percentile": "", "threshold_ms": None, "threshold_percent": 100.0},
        "threshold_percent",
        "cannot be above 100%",
    ),
    ("rate-in-ms", {"metric": "error_rate", "percentile": "", "threshold_percent": 5.0}, "threshold_ms", "not ms"),
    (
        "rate-against-a-baseline",
        {
            "metric": "error_rate",
            "percentile": "",
            "threshold_ms": None,
            "threshold_percent": 5.0,
            "baseline_factor": 2.0,
        },
        "baseline_factor",
        "A baseline applies to latency metrics",
    ),
    ("unknown-metric", {"metric": "vibes"}, "metric", "Unknown metric"),
    ("more-samples-than-calls", {"min_samples": 11}, "min_samples", "at most 10 calls in 10 min"),
    ("quorum-above-the-regions", {"min_regions": 3}, "min_regions", "needs 3 regions to breach, and 2 regions"),
]


@pytest.mark.parametrize("fields, field, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_reason_names_its_field(measured, fields, field, words):
    problems = refusals(**rule(measured, **fields))
    assert field in problems, problems
    assert words in problems[field], problems[field]


def test_a_target_nothing_measures_is_refused_on_the_target(db):
    problems = refusals(**rule(TargetFactory()))
    assert "no enabled probe measures" in problems["target"]


def test_regions_nothing_measures_from_are_refused_on_the_regions(measured):
    elsewhere = RegionFactory()
    problems = refusals(**rule(measured, target_id=None, region_ids=[elsewhere.id]))
    assert "no enabled probe measures" in problems["regions"]


def test_a_sensible_rule_has_no_refusal(measured):
    assert refusals(**rule(measured)) == {}
    assert refusals(**rule(measured, threshold_ms=None, baseline_factor=2.0, min_regions=2)) == {}
    assert (
        refusals(**rule(measured, metric="error_rate", percentile="", threshold_ms=None, threshold_percent=20.0)) == {}
    )
