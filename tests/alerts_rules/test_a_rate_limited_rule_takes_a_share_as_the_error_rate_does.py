"""A rule on rate_limited (the share of calls refused for rate limits or overload) is a rate rule: it takes
threshold_percent, is refused with ms, without a share or against a baseline, with messages that name it, and
the admin's form saves it with its percentile cleared."""

from __future__ import annotations

import pytest
from django.urls import reverse

from probes.alerts.rules import is_rate, refusals
from probes.models import AlertRule
from tests.factories import ProbeFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def target():
    target = TargetFactory(name="gpt-eu")
    ProbeFactory(target=target, regions=[RegionFactory(), RegionFactory()], interval_seconds=60)
    return target


def rule(target, **fields) -> dict:
    values = {
        "metric": "rate_limited",
        "percentile": "",
        "threshold_ms": None,
        "threshold_percent": 20.0,
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


def test_a_share_is_all_it_takes_and_ms_or_a_baseline_are_refused_naming_it(target):
    assert is_rate("rate_limited")
    assert refusals(**rule(target)) == {}
    assert "give threshold_percent" in refusals(**rule(target, threshold_percent=None))["threshold_percent"]
    in_ms = refusals(**rule(target, threshold_ms=500.0))["threshold_ms"]
    assert in_ms == "Error rate, missed runs and rate-limited calls are shares: use threshold_percent, not ms."
    against = refusals(**rule(target, baseline_factor=2.0))["baseline_factor"]
    assert "error rate, missed runs and rate-limited calls take threshold_percent" in against
    share_on_latency = refusals(**rule(target, metric="ttft", percentile="p95", threshold_ms=1500.0))
    assert "A share applies to error rate, missed runs and rate-limited calls" in share_on_latency["threshold_percent"]


def test_the_admin_saves_a_rate_limited_rule_without_a_percentile(admin_client, target):
    data = {
        "name": "429s from anywhere",
        "enabled": "on",
        "target": target.id,
        "metric": "rate_limited",
        "percentile": "p95",
        "threshold_ms": "",
        "baseline_factor": "",
        "threshold_percent": "30",
        "window_minutes": "10",
        "min_samples": "5",
        "min_regions": "1",
        "min_regions_percent": "",
    }
    response = admin_client.post(reverse("admin:probes_alertrule_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    saved = AlertRule.objects.get()
    assert (saved.metric, saved.percentile, saved.threshold_percent) == ("rate_limited", "", 30.0)
    assert str(saved.get_metric_display()) == "Rate-limited calls (% of calls refused for rate limits or overload)"
