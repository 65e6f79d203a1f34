"""`atlas apply` checks a channel's URL as the admin does: one that leads to an internal address (here the
cloud's metadata service) is refused with the variable it came from, the rule it breaks and the setting
that lifts it, never the URL, and nothing of the file is applied."""

from __future__ import annotations

from probes.models import NotificationChannel
from tests.config_as_code.conftest import atlas


def test_a_metadata_service_url_is_refused_by_variable_and_rule(db, settings, tmp_path, monkeypatch):
    settings.LATENCY_NOTIFY_ALLOW_PRIVATE = False
    monkeypatch.setenv("ATLAS_META_URL", "json://169.254.169.254/latest/meta-data/iam/TOKENSECRET4527")
    path = tmp_path / "channels.yaml"
    path.write_text("channels:\n- name: meta\n  url_env: ATLAS_META_URL\n")

    run = atlas("apply", str(path))

    assert "$ATLAS_META_URL: Refused: the channel leads to a link-local address (169.254.0.0/16, fe80::/10)" in (
        run.error
    )
    assert "LATENCY_NOTIFY_ALLOW_PRIVATE=true" in run.error
    assert "TOKENSECRET4527" not in run.error + run.out and "169.254.169.254" not in run.error + run.out
    assert not NotificationChannel.objects.exists()
