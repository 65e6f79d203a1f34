"""Objectives in the file: named by their name, their targets, regions and model group by theirs, the mix by region
slug. A change is planned field by field and a second apply has nothing to do; an objective the admin would refuse
is refused naming it and the field, and nothing is applied; a committed change of the good call empties the counts
made under the old one."""

from __future__ import annotations

import yaml

from probes.models import ServiceLevelObjective, SLOHourCount
from tests.config_as_code.conftest import atlas, export_text
from tests.factories import SLOHourCountFactory


def apply_changed(tmp_path, change, *args: str):
    document = yaml.safe_load(export_text(tmp_path).read_text())
    change(document)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return atlas("apply", str(path), *args)


def objective(document: dict, name: str) -> dict:
    return next(o for o in document["objectives"] if o["name"] == name)


def test_a_hand_written_objective_is_created_from_names_with_the_defaults(configured, tmp_path):
    def add(document):
        document["objectives"].append(
            {"name": "gemini", "targets": ["gemini-flash"], "ttft_threshold_ms": 600, "objective_percent": 99.5}
        )

    run = apply_changed(tmp_path, add)

    assert run.error == ""
    assert '+ create objective "gemini"' in run.out
    created = ServiceLevelObjective.objects.get(name="gemini")
    assert [t.name for t in created.targets.all()] == ["gemini-flash"]
    assert (created.window, created.exclude_silences, created.exclude_rate_limited) == ("rolling_30d", True, False)
    assert (created.enabled, created.mix) == (True, {})
    assert float(created.objective_percent) == 99.5


def test_a_change_is_planned_by_field_and_a_second_apply_does_nothing(
    configured, tmp_path, django_capture_on_commit_callbacks
):
    counted = ServiceLevelObjective.objects.get(name="claude chat")
    ServiceLevelObjective.objects.filter(pk=counted.pk).update(counted_condition=counted.condition_fingerprint())
    SLOHourCountFactory(objective=counted)

    def change(document):
        objective(document, "claude chat")["ttft_threshold_ms"] = 700
        objective(document, "claude chat")["regions"] = ["zz-lagos-2"]

    with django_capture_on_commit_callbacks(execute=True):
        run = apply_changed(tmp_path, change)

    assert run.error == ""
    assert '~ update objective "claude chat": regions -zz-tokyo-2; ttft_threshold_ms 800.0 -> 700.0' in run.out
    assert not SLOHourCount.objects.filter(objective=counted).exists()
    again = atlas("apply", str(tmp_path / "changed.yaml"))
    assert "Nothing to change" in again.out


def test_an_objective_the_admin_would_refuse_is_refused_naming_the_field(configured, tmp_path):
    def break_it(document):
        objective(document, "claude chat")["degraded_ttft_threshold_ms"] = 900
        objective(document, "fast models for our users")["targets"] = ["claude-eu"]

    run = apply_changed(tmp_path, break_it)

    assert 'objective "claude chat": degraded_ttft_threshold_ms: The degraded threshold must be below' in run.error
    assert 'objective "fast models for our users": model_group: Choose targets or a model group, not both.' in run.error
    assert ServiceLevelObjective.objects.get(name="claude chat").degraded_ttft_threshold_ms == 500.5


def test_a_mix_naming_a_region_the_prune_deletes_is_refused(configured, tmp_path):
    def drop_tokyo(document):
        document["regions"] = [r for r in document["regions"] if r["slug"] != "zz-tokyo-2"]
        for item in document["probes"] + document["alert_rules"] + document["objectives"]:
            item["regions"] = [slug for slug in item["regions"] if slug != "zz-tokyo-2"]

    run = apply_changed(tmp_path, drop_tokyo, "--prune")

    assert (
        'objective "fast models for our users": mix: region "zz-tokyo-2" is not in the file, and --prune' in run.error
    )
    assert ServiceLevelObjective.objects.get(name="fast models for our users").mix["zz-tokyo-2"] == 40.0


def test_a_share_that_is_no_number_is_refused_with_its_path(configured, tmp_path):
    def bad_share(document):
        objective(document, "fast models for our users")["mix"]["zz-lagos-2"] = "sixty"

    run = apply_changed(tmp_path, bad_share)

    assert 'objective "fast models for our users": mix: zz-lagos-2: expected a finite number, got a string' in run.error
