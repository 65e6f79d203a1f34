"""--dry-run prints the plan, each object with what would change, and leaves the database as it was, even
where the plan holds deletions and new objects that depend on each other."""

from __future__ import annotations

import yaml

from probes.models import AlertRule, Probe, Target
from tests.config_as_code.conftest import atlas, counts, export_text


def test_a_dry_run_changes_nothing(configured, tmp_path):
    path = export_text(tmp_path)
    document = yaml.safe_load(path.read_text())
    claude = next(t for t in document["targets"] if t["name"] == "claude-eu")
    claude["model"] = "claude-sonnet-4-5"
    document["targets"].append({"name": "new-target", "url": "https://api.example.com/v1/chat/completions"})
    document["probes"].append({"target": "new-target", "name": "p", "regions": ["zz-lagos-2"]})
    document["probes"] = [p for p in document["probes"] if p["name"] != "cold"]
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    before = counts()
    exported = export_text(tmp_path, "before.yaml").read_text()

    run = atlas("apply", str(path), "--dry-run", "--prune")

    # new-target has no model and is openai style: the model's rule refuses it, so fix that first.
    assert 'target "new-target": model: A model is required' in run.error
    document["targets"][-1]["model"] = "m"
    path.write_text(yaml.safe_dump(document, sort_keys=False))

    run = atlas("apply", str(path), "--dry-run", "--prune")

    assert run.error == ""
    lines = run.out.splitlines()
    assert '~ update target "claude-eu": model "claude-3-5-haiku-latest" -> "claude-sonnet-4-5"' in lines
    assert '+ create target "new-target"' in lines
    assert '+ create probe "new-target / p"' in lines
    assert '- delete probe "gemini-flash / cold"' in lines
    assert lines[-1] == "Dry run: 2 to create, 1 to update, 1 to delete; nothing was changed."
    assert counts() == before
    assert Target.objects.get(name="claude-eu").model == "claude-3-5-haiku-latest"
    assert Probe.objects.filter(name="cold").exists()
    assert AlertRule.objects.count() == before["AlertRule"]
    assert export_text(tmp_path, "after.yaml").read_text() == exported
