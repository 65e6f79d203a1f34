"""--prune never deletes history: a probe, target or region that measurements refer to (on_delete=PROTECT)
is kept, the plan says so and why, and the whole file is refused, the other deletions included, dry run or
not."""

from __future__ import annotations

import pytest
import yaml

from probes.models import Measurement, Probe, Target
from tests.config_as_code.conftest import atlas, counts, export_text
from tests.factories import MeasurementFactory


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry run"])
def test_a_target_with_measurements_is_kept_and_the_file_refused(configured, tmp_path, dry_run):
    warm = Probe.objects.get(name="warm")
    MeasurementFactory(probe=warm, region=warm.regions.first())
    document = yaml.safe_load(export_text(tmp_path).read_text())
    document["probes"] = [p for p in document["probes"] if p["target"] not in ("claude-eu", "gemini-flash")]
    document["targets"] = [t for t in document["targets"] if t["name"] not in ("claude-eu", "gemini-flash")]
    document["alert_rules"] = [r for r in document["alert_rules"] if r["name"] != "claude slow"]
    path = tmp_path / "copy.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    before = counts()

    run = atlas("apply", str(path), "--prune", *(["--dry-run"] if dry_run else []))

    lines = run.out.splitlines()
    assert '! keep probe "claude-eu / warm" (--prune cannot delete it: measurements refer to it)' in lines
    assert '- delete probe "gemini-flash / cold"' in lines
    assert '- delete target "gemini-flash"' in lines
    assert 'probe "claude-eu / warm": --prune cannot delete it: its measurements are kept as history' in run.error
    assert "Applied" not in run.out and "Dry run" not in run.out
    assert counts() == before
    assert Target.objects.filter(name="gemini-flash").exists()
    assert Measurement.objects.count() == 1
