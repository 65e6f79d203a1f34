"""The admin's rule form asks probes.alerts.rules.refusals with what was typed: a rule that can never fire or
always fires is shown again with the reason beside its field, and not saved; a sensible rule saves; a rate
rule's percentile is cleared. The list shows the condition, the quorum and how many regions a rule can judge."""

from __future__ import annotations

import pytest
from django.urls import reverse

from probes.models import AlertRule
from tests.factories import AlertRuleFactory, IncidentFactory, ProbeFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db

ADD = "admin:probes_alertrule_add"


@pytest.fixture
def measured():
    regions = [RegionFactory(name="Lagos"), RegionFactory(name="Nairobi")]
    target = TargetFactory(name="gpt-eu")
    ProbeFactory(target=target, regions=regions, interval_seconds=60)
    return {"target": target, "regions": regions}


def rule_data(measured, **overrides) -> dict:
    data = {
        "name": "TTFT slow from Africa",
        "enabled": "on",
        "target": measured["target"].id,
        "metric": "ttft",
        "percentile": "p95",
        "threshold_ms": "1500",
        "baseline_factor": "",
        "threshold_percent": "",
        "window_minutes": "10",
        "min_samples": "5",
        "min_regions": "1",
        "min_regions_percent": "",
        "regions": [r.id for r in measured["regions"]],
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def form_errors(response) -> dict:
    assert response.status_code == 200, "expected the form to be shown again with errors"
    form = response.context["adminform"].form
    return {name: [str(e) for e in errs] for name, errs in form.errors.items()}


def test_a_rule_that_can_never_fire_is_refused_with_the_reason(admin_client, measured):
    response = admin_client.post(reverse(ADD), rule_data(measured, min_regions="3"))
    errors = form_errors(response)
    assert "can never fire" in errors["min_regions"][0] and "2 regions measure" in errors["min_regions"][0]
    assert "can never fire" in response.content.decode()
    assert not AlertRule.objects.exists()


def test_a_rule_that_always_fires_is_refused_with_the_reason(admin_client, measured):
    response = admin_client.post(reverse(ADD), rule_data(measured, threshold_ms="", baseline_factor="0.9"))
    errors = form_errors(response)
    assert "would always fire" in errors["baseline_factor"][0]
    assert not AlertRule.objects.exists()


def test_a_reason_about_a_field_not_on_the_form_is_shown_above_it(admin_client, measured):
    # No target and regions nothing measures from: the reason is about "regions", which is on the form.
    elsewhere = RegionFactory()
    response = admin_client.post(reverse(ADD), rule_data(measured, target="", regions=[elsewhere.id]))
    errors = form_errors(response)
    assert "no enabled probe" in errors["regions"][0]


def test_a_sensible_rule_saves(admin_client, measured):
    response = admin_client.post(reverse(ADD), rule_data(measured, baseline_factor="2"))
    assert response.status_code == 302
    rule = AlertRule.objects.get()
    assert rule.threshold_ms == 1500.0 and rule.baseline_factor == 2.0 and rule.regions.count() == 2


def test_a_rate_rule_saves_without_a_percentile(admin_client, measured):
    data = rule_data(measured, metric="error_rate", percentile="p99", threshold_ms="", threshold_percent="20")
    response = admin_client.post(reverse(ADD), data)
    assert response.status_code == 302, form_errors(response)
    assert AlertRule.objects.get().percentile == ""


def test_the_list_shows_condition_quorum_and_reach(admin_client, measured):
    rule = AlertRuleFactory(
        name="Listed rule", target=measured["target"], baseline_factor=2.0, min_regions=2, min_regions_percent=25.0
    )
    AlertRuleFactory(name="Everywhere rule")
    IncidentFactory(rule=rule, target=measured["target"])
    html = admin_client.get(reverse("admin:probes_alertrule_changelist")).content.decode()
    row = html.split("Listed rule", 1)[1].split("</tr>", 1)[0]
    assert "above 1000 ms and above 2× baseline" in row
    assert "2 regions or 25 % of those measured" in row
    assert '<td class="field-open_incidents">1</td>' in row
    assert '<td class="field-regions_judged">2</td>' in row
    assert "every target" in html.split("Everywhere rule", 1)[1].split("</tr>", 1)[0]
