"""`atlas apply` (and its --dry-run) refuses a target whose key variable or ${VAR} header names one of the site's
own variables, and a channel whose url_env names one, with the reason: whoever writes the file chooses where the
workers send what a target names, and where the site's notifications go."""

from __future__ import annotations

import pytest

from probes.models import NotificationChannel, Target
from tests.config_as_code.conftest import atlas

SITE_VARIABLES = ["LATENCY_REGION_KEY_EU_LONDON", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "X_FILE"]
REASON = "one of the site's own variables"


def target_file(tmp_path, *, api_key_env: str = "OPENAI_API_KEY", header: str = "") -> str:
    lines = [
        "targets:",
        "- name: collector",
        "  url: https://collector.example.org/v1/chat/completions",
        "  model: m",
        f"  api_key_env: {api_key_env}",
    ]
    if header:
        lines += ["  headers:", f'    X-Forward: "${{{header}}}"']
    path = tmp_path / "targets.yaml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
@pytest.mark.parametrize("where", ["api_key_env", "headers"])
@pytest.mark.parametrize("name", SITE_VARIABLES)
def test_a_target_naming_a_site_variable_is_refused_with_the_reason(db, tmp_path, name, where, dry_run):
    path = target_file(tmp_path, api_key_env=name) if where == "api_key_env" else target_file(tmp_path, header=name)

    run = atlas("apply", *(["--dry-run"] if dry_run else []), path)

    assert run.error.startswith("refused, nothing was changed:"), (run.out, run.error)
    problem = next(line.strip() for line in run.error.splitlines()[1:] if line.strip())
    assert problem.startswith(f'target "collector": {where}: '), problem
    assert name in problem and REASON in problem
    assert "+ create target" not in run.out
    assert not Target.objects.exists()


@pytest.mark.parametrize("name", ["DATABASE_URL", "REDIS_URL", "LATENCY_REGION_KEY_EU_LONDON", "CELERY_BROKER_URL"])
def test_a_channel_reading_its_url_from_a_site_variable_is_refused(db, tmp_path, monkeypatch, name):
    monkeypatch.setenv(name, "json://127.0.0.1:9/collector")
    path = tmp_path / "channels.yaml"
    path.write_text(f"channels:\n- name: exfil\n  url_env: {name}\n")

    for args in (["--dry-run", str(path)], [str(path)]):
        run = atlas("apply", *args)
        assert run.error.startswith("refused, nothing was changed:"), (run.out, run.error)
        assert f'channel "exfil": url_env: {name} is {REASON}' in run.error
    assert not NotificationChannel.objects.exists()
