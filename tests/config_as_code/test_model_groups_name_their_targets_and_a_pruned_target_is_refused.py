"""Model groups in the file: named by their name, their targets by name; a group naming a target that
--prune deletes is refused, and nothing is applied."""

from __future__ import annotations

import yaml

from probes.models import ModelGroup, Target
from tests.config_as_code.conftest import atlas, export_text


def test_a_group_is_created_with_its_targets_from_the_file(configured, tmp_path):
    document = yaml.safe_load(export_text(tmp_path).read_text())
    document["model_groups"].append({"name": "gemini only", "targets": ["gemini-flash"]})
    path = tmp_path / "more.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))

    run = atlas("apply", str(path))

    assert run.error == ""
    assert '+ create model group "gemini only"' in run.out
    group = ModelGroup.objects.get(name="gemini only")
    assert [t.name for t in group.targets.all()] == ["gemini-flash"]


def test_a_group_naming_a_target_the_prune_deletes_is_refused(configured, tmp_path):
    document = yaml.safe_load(export_text(tmp_path).read_text())
    document["probes"] = [p for p in document["probes"] if p["target"] != "claude-eu"]
    document["alert_rules"] = [r for r in document["alert_rules"] if r["target"] != "claude-eu"]
    document["targets"] = [t for t in document["targets"] if t["name"] != "claude-eu"]
    path = tmp_path / "copy.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))

    run = atlas("apply", str(path), "--prune")

    assert 'model group "fast models"' in run.error
    assert 'target "claude-eu" is not in the file, and --prune deletes it' in run.error
    assert Target.objects.filter(name="claude-eu").exists()
    assert ModelGroup.objects.get(name="fast models").targets.filter(name="claude-eu").exists()
