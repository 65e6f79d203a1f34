"""Applying the same file twice: the second run says nothing changes and writes nothing (not even a row's
updated_at), also where the rules normalise what the file says."""

from __future__ import annotations

import yaml

from probes.models import AlertRule, Probe, Region, Target
from tests.config_as_code.conftest import atlas, export_text


def _stamps():
    return (
        sorted(Region.objects.values_list("slug", "updated_at")),
        sorted(Probe.objects.values_list("name", "updated_at")),
        sorted(AlertRule.objects.values_list("name", "updated_at")),
    )


def test_the_second_apply_changes_nothing(configured, tmp_path):
    path = export_text(tmp_path)
    document = yaml.safe_load(path.read_text())
    # What a person writes by hand: the Gemini model left for the URL to name, a percentile on a rate rule
    # (the admin clears it), a whole number for a float, fields left to their defaults.
    gemini = next(t for t in document["targets"] if t["name"] == "gemini-flash")
    gemini["model"] = ""
    rule = next(r for r in document["alert_rules"] if r["name"] == "errors anywhere")
    rule["percentile"] = "p99"
    document["probes"].append({"target": "gemini-flash", "name": "short", "regions": ["zz-tokyo-2"]})
    document["targets"].append({"name": "plain", "api_style": "http", "url": "https://example.com/health"})
    path.write_text(yaml.safe_dump(document, sort_keys=False))

    first = atlas("apply", str(path))
    assert first.error == ""
    assert first.out.splitlines()[-1] == "Applied: 2 created, 0 updated, 0 deleted."
    stamps = _stamps()

    second = atlas("apply", str(path))

    assert second.error == ""
    assert second.out.splitlines() == [f"Nothing to change: the database matches {path}."]
    assert _stamps() == stamps
    assert Target.objects.get(name="gemini-flash").model == "gemini-2.0-flash"
    assert Probe.objects.get(name="short").interval_seconds == 60
    assert AlertRule.objects.get(name="errors anywhere").percentile == ""


def test_an_export_applied_to_its_own_database_has_nothing_to_do(configured, tmp_path):
    path = export_text(tmp_path)

    run = atlas("apply", str(path), "--prune")

    assert run.error == ""
    assert run.out == f"Nothing to change: the database matches {path}.\n"
