"""A value the admin would refuse is refused by apply with the object's key and the field, by the same rules
(the admin's forms and the models' full_clean()), and a file with one such value applies nothing at all, not
even the valid objects before it."""

from __future__ import annotations

import yaml

from probes.models import Probe, Region, Target
from tests.config_as_code.conftest import atlas, counts, export_text


def test_every_bad_value_is_named_and_nothing_is_half_applied(configured, tmp_path):
    path = export_text(tmp_path)
    document = yaml.safe_load(path.read_text())
    # Valid changes first in the file: they must not be applied either.
    document["regions"].append(
        {"slug": "eu-paris", "name": "Paris", "city": "Paris", "country": "FR", "latitude": 48.9, "longitude": 2.35}
    )
    claude = next(t for t in document["targets"] if t["name"] == "claude-eu")
    claude["location_name"] = "moved"
    document["targets"].append({"name": "gpt-eu", "url": "ftp://api.openai.com/v1/chat/completions", "model": "m"})
    document["regions"].append(
        {"slug": "zz-north", "name": "North", "city": "N", "country": "ZZ", "latitude": 95.0, "longitude": 0.0}
    )
    warm = next(p for p in document["probes"] if p["name"] == "warm")
    warm["interval_seconds"] = 5
    document["probes"].append({"target": "claude-eu", "name": "nowhere", "regions": []})
    rule = next(r for r in document["alert_rules"] if r["name"] == "claude slow")
    rule["threshold_ms"] = 0.0
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    before = counts()

    run = atlas("apply", str(path))

    problems = [line.strip() for line in run.error.splitlines()[1:]]
    assert 'target "gpt-eu": url: URL must start with http:// or https://' in problems
    assert 'region "zz-north": latitude: Latitude must be between -90 and 90.' in problems
    assert 'probe "claude-eu / warm": interval_seconds: Interval must be at least 10 seconds.' in problems
    assert (
        'probe "claude-eu / nowhere": regions: Choose at least one region: a probe with no region never runs.'
        in problems
    )
    assert any(p.startswith('alert rule "claude slow": threshold_ms: This rule would always fire') for p in problems)
    assert run.error.startswith("refused, nothing was changed:")
    assert "Applied" not in run.out
    assert counts() == before
    assert not Region.objects.filter(slug="eu-paris").exists()
    assert Target.objects.get(name="claude-eu").location_name == "GCP europe-west4"
    assert Probe.objects.get(name="warm").interval_seconds == 30


def test_a_probe_naming_a_target_nobody_has_is_refused(configured, tmp_path):
    path = tmp_path / "probe.yaml"
    path.write_text("probes:\n- target: nobody\n  name: p\n  regions: [zz-lagos-2]\n")

    run = atlas("apply", str(path))

    assert 'probe "nobody / p": target: no target "nobody" in the file or the database' in run.error
    assert not Probe.objects.filter(name="p").exists()
