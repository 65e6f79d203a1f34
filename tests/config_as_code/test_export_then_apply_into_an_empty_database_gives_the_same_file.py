"""Export, apply into an empty database, export again: the two files are identical, byte for byte."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.config_as_code.conftest import atlas, counts, empty_the_configuration, export_text


def test_the_round_trip_gives_the_same_file(configured, tmp_path):
    first = export_text(tmp_path, "first.yaml")
    before = counts()
    empty_the_configuration()

    run = atlas("apply", str(first))

    assert run.error == ""
    assert f"Applied: {sum(before.values())} created, 0 updated, 0 deleted." in run.out
    assert counts() == before
    second = export_text(tmp_path, "second.yaml")
    assert second.read_bytes() == first.read_bytes()


def test_every_kind_is_in_the_file_by_key_and_never_by_id(configured, tmp_path):
    document = yaml.safe_load(export_text(tmp_path).read_text())

    assert list(document) == [
        "version",
        "regions",
        "targets",
        "channels",
        "probes",
        "alert_rules",
        "model_groups",
        "objectives",
        "status_pages",
    ]
    assert {"name": "fast models", "targets": ["claude-eu", "gemini-flash"]} in document["model_groups"]
    probe = next(p for p in document["probes"] if p["name"] == "warm")
    assert probe["target"] == "claude-eu"
    assert probe["regions"] == ["zz-lagos-2", "zz-tokyo-2"]
    rule = next(r for r in document["alert_rules"] if r["name"] == "claude slow")
    assert (rule["target"], rule["regions"], rule["channels"]) == (
        "claude-eu",
        ["zz-lagos-2", "zz-tokyo-2"],
        ["oncall"],
    )
    assert next(r for r in document["alert_rules"] if r["name"] == "errors anywhere")["target"] is None
    assert document["objectives"] == [
        {
            "name": "claude chat",
            "enabled": True,
            "targets": ["claude-eu", "gemini-flash"],
            "model_group": None,
            "regions": ["zz-lagos-2", "zz-tokyo-2"],
            "mix": {},
            "ttft_threshold_ms": 800.0,
            "tpot_threshold_ms": 40.0,
            "total_threshold_ms": 5000.0,
            "degraded_ttft_threshold_ms": 500.5,
            "objective_percent": 99.95,
            "window": "calendar_month",
            "exclude_silences": False,
            "exclude_rate_limited": True,
            "channels": ["oncall"],
        },
        {
            "name": "fast models for our users",
            "enabled": False,
            "targets": [],
            "model_group": "fast models",
            "regions": [],
            "mix": {"zz-lagos-2": 60.0, "zz-tokyo-2": 40.0},
            "ttft_threshold_ms": 800.0,
            "tpot_threshold_ms": None,
            "total_threshold_ms": None,
            "degraded_ttft_threshold_ms": None,
            "objective_percent": 99.0,
            "window": "rolling_30d",
            "exclude_silences": True,
            "exclude_rate_limited": False,
            "channels": [],
        },
    ]
    assert document["status_pages"] == [
        {
            "slug": "acme",
            "title": "Acme APIs",
            "description": "Our models, as our users see them.",
            "language": "zh-hans",
            "targets": ["gemini-flash"],
            "model_groups": ["fast models"],
            "regions": ["zz-lagos-2"],
            "slos": ["fast models for our users"],
            "show_latency": False,
            "public": True,
            "hostname": "status.example.org",
        },
        {
            "slug": "internal",
            "title": "Internal",
            "description": "",
            "language": "en",
            "targets": [],
            "model_groups": [],
            "regions": [],
            "slos": [],
            "show_latency": True,
            "public": False,
            "hostname": "",
        },
    ]
    for section in document.values():
        for item in section if isinstance(section, list) else []:
            assert "id" not in item and "pk" not in item


def test_the_export_is_the_same_twice_and_on_standard_output(configured, tmp_path):
    written = export_text(tmp_path, "a.yaml").read_text(encoding="utf-8")

    assert export_text(tmp_path, "b.yaml").read_text(encoding="utf-8") == written
    assert atlas("export").out == written


def test_the_documented_example_applies_and_exports_as_written(db, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_ONCALL_URL", "json://hooks.example.com/oncall")
    page = (Path(__file__).parents[2] / "docs" / "guides" / "config-as-code.md").read_text()
    section = page[page.index("# Configuration as code") :]
    example = section[section.index("```yaml\n") + len("```yaml\n") : section.index("```\n", section.index("```yaml"))]
    path = tmp_path / "example.yaml"
    path.write_text(example)

    run = atlas("apply", str(path))

    assert run.error == ""
    exported = yaml.safe_load(export_text(tmp_path).read_text())
    written = yaml.safe_load(example)
    for section_name in ("targets", "channels", "probes", "alert_rules", "model_groups", "objectives", "status_pages"):
        assert exported[section_name] == written[section_name]
    assert next(r for r in exported["regions"] if r["slug"] == "eu-frankfurt") == written["regions"][0]
