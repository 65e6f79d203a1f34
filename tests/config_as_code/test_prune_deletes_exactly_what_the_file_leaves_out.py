"""--prune on a copy of the export with some objects taken out deletes exactly those, with what goes with
them; sections the file leaves out are not managed by it and stay whole."""

from __future__ import annotations

import yaml

from probes.models import (
    AlertRule,
    ModelGroup,
    NotificationChannel,
    Probe,
    Region,
    RegionKey,
    ServiceLevelObjective,
    Target,
)
from tests.config_as_code.conftest import atlas, export_text
from tests.factories import RegionKeyFactory


def _keys():
    return {
        "regions": set(Region.objects.values_list("slug", flat=True)),
        "targets": set(Target.objects.values_list("name", flat=True)),
        "channels": set(NotificationChannel.objects.values_list("name", flat=True)),
        "probes": {(p.target.name, p.name) for p in Probe.objects.select_related("target")},
        "alert_rules": set(AlertRule.objects.values_list("name", flat=True)),
    }


def test_prune_deletes_what_the_copy_omits_and_nothing_else(configured, tmp_path):
    RegionKeyFactory(region=Region.objects.get(slug="zz-tokyo-2"))
    # A group naming the target the copy deletes would refuse the prune (tested below): here no group does.
    ModelGroup.objects.get(name="fast models").targets.remove(Target.objects.get(name="claude-eu"))
    # Nor any objective (test_objectives_are_applied_by_name_and_refused_naming_their_field).
    ServiceLevelObjective.objects.all().delete()
    original = export_text(tmp_path)
    document = yaml.safe_load(original.read_text())
    document["alert_rules"] = [r for r in document["alert_rules"] if r["name"] != "claude slow"]
    document["probes"] = [p for p in document["probes"] if p["target"] != "claude-eu"]
    document["targets"] = [t for t in document["targets"] if t["name"] != "claude-eu"]
    document["regions"] = [r for r in document["regions"] if r["slug"] != "zz-tokyo-2"]
    copy = tmp_path / "copy.yaml"
    copy.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    before = _keys()

    without_prune = atlas("apply", str(copy))
    assert without_prune.out == f"Nothing to change: the database matches {copy}.\n"
    assert _keys() == before

    run = atlas("apply", str(copy), "--prune")

    assert run.error == ""
    assert run.out.splitlines() == [
        '- delete alert rule "claude slow"',
        '- delete probe "claude-eu / warm"',
        '- delete target "claude-eu"',
        '- delete region "zz-tokyo-2" (with 1 region credential)',
        "Applied: 0 created, 0 updated, 4 deleted.",
    ]
    after = _keys()
    assert after["alert_rules"] == before["alert_rules"] - {"claude slow"}
    assert after["probes"] == before["probes"] - {("claude-eu", "warm")}
    assert after["targets"] == before["targets"] - {"claude-eu"}
    assert after["regions"] == before["regions"] - {"zz-tokyo-2"}
    assert after["channels"] == before["channels"]
    assert not RegionKey.objects.filter(region__slug="zz-tokyo-2").exists()
    assert yaml.safe_load(export_text(tmp_path, "after.yaml").read_text()) == document


def test_a_section_the_file_leaves_out_is_not_pruned(configured, tmp_path):
    document = yaml.safe_load(export_text(tmp_path).read_text())
    partial = tmp_path / "rules-only.yaml"
    partial.write_text(yaml.safe_dump({"version": 1, "alert_rules": document["alert_rules"][:1]}, sort_keys=False))
    before = _keys()

    run = atlas("apply", str(partial), "--prune")

    assert run.error == ""
    deleted = [line for line in run.out.splitlines() if line.startswith("- delete")]
    assert deleted == [f'- delete alert rule "{name}"' for name in sorted(before["alert_rules"])[1:]]
    after = _keys()
    assert {k: v for k, v in after.items() if k != "alert_rules"} == {
        k: v for k, v in before.items() if k != "alert_rules"
    }


def test_an_empty_section_prunes_every_object_of_its_kind(configured, tmp_path):
    document = yaml.safe_load(export_text(tmp_path).read_text())
    document["alert_rules"] = []
    path = tmp_path / "no-rules.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))

    assert atlas("apply", str(path), "--prune").error == ""

    assert not AlertRule.objects.exists()
