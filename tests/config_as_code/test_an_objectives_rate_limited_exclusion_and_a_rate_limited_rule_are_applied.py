"""exclude_rate_limited is a field of an objective in the file like exclude_silences: exported, planned field by
field, applied, and a committed change of it empties the counts made under the old one (it is part of the good
call); a file that leaves it out creates an objective counting refused calls as bad. An alert rule on the
rate_limited metric is applied from the file like any rate rule, and a second apply has nothing to do."""

from __future__ import annotations

import yaml

from probes.models import AlertRule, ServiceLevelObjective, SLOHourCount
from tests.config_as_code.conftest import atlas, export_text
from tests.factories import SLOHourCountFactory


def test_the_exclusion_and_a_rate_limited_rule_are_applied_and_the_counts_emptied(
    configured, tmp_path, django_capture_on_commit_callbacks
):
    counted = ServiceLevelObjective.objects.get(name="claude chat")
    assert counted.exclude_rate_limited is True
    ServiceLevelObjective.objects.filter(pk=counted.pk).update(counted_condition=counted.condition_fingerprint())
    SLOHourCountFactory(objective=counted)
    document = yaml.safe_load(export_text(tmp_path).read_text())
    chat = next(o for o in document["objectives"] if o["name"] == "claude chat")
    assert chat["exclude_rate_limited"] is True
    chat["exclude_rate_limited"] = False
    document["objectives"].append(
        {"name": "gemini", "targets": ["gemini-flash"], "ttft_threshold_ms": 600, "objective_percent": 99.5}
    )
    document["alert_rules"].append(
        {"name": "429s", "metric": "rate_limited", "percentile": "", "threshold_ms": None, "threshold_percent": 25.0}
    )
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))

    with django_capture_on_commit_callbacks(execute=True):
        run = atlas("apply", str(path))

    assert run.error == ""
    assert '~ update objective "claude chat": exclude_rate_limited true -> false' in run.out
    assert ServiceLevelObjective.objects.get(name="claude chat").exclude_rate_limited is False
    assert not SLOHourCount.objects.filter(objective=counted).exists()
    assert ServiceLevelObjective.objects.get(name="gemini").exclude_rate_limited is False
    rule = AlertRule.objects.get(name="429s")
    assert (rule.metric, rule.percentile, rule.threshold_percent, rule.threshold_ms) == ("rate_limited", "", 25.0, None)
    assert "Nothing to change" in atlas("apply", str(path)).out
