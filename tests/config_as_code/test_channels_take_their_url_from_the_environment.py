"""A channel's Apprise URL is a secret: the file names the environment variable that holds it (url_env) and
apply reads it there, checked as the admin checks a typed URL and stored encrypted; the export writes the
variable's name, never the URL, and the plan says the URL changed without showing it."""

from __future__ import annotations

import yaml

from probes.alerts.secrets import decrypt_url
from probes.models import NotificationChannel
from tests.config_as_code.conftest import ONCALL_URL, atlas, export_text
from tests.factories import NotificationChannelFactory

PAGER_URL = "ntfy://ntfy.sh/atlas-pager-topic-secret"


def _apply(tmp_path, text: str):
    path = tmp_path / "channels.yaml"
    path.write_text(text)
    return atlas("apply", str(path))


def test_a_new_channel_is_made_from_its_variable(db, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_PAGER_URL", PAGER_URL)

    run = _apply(tmp_path, "channels:\n- name: pager\n  url_env: ATLAS_PAGER_URL\n")

    assert run.error == ""
    assert run.out.splitlines()[0] == '+ create channel "pager"'
    channel = NotificationChannel.objects.get(name="pager")
    assert (channel.service, channel.url_env, decrypt_url(channel.apprise_url)) == (
        "ntfy",
        "ATLAS_PAGER_URL",
        PAGER_URL,
    )
    assert PAGER_URL not in channel.apprise_url
    exported = export_text(tmp_path).read_text()
    assert "ATLAS_PAGER_URL" in exported and "atlas-pager-topic-secret" not in exported


def test_a_changed_url_is_an_update_that_never_shows_it(configured, tmp_path, monkeypatch):
    path = export_text(tmp_path)
    monkeypatch.setenv("ATLAS_ONCALL_URL", PAGER_URL)

    run = atlas("apply", str(path))

    assert run.out.splitlines()[0] == '~ update channel "oncall": url read from $ATLAS_ONCALL_URL'
    assert "ntfy" not in run.out and "secret" not in run.out
    assert decrypt_url(NotificationChannel.objects.get(name="oncall").apprise_url) == PAGER_URL
    assert atlas("apply", str(path)).out == f"Nothing to change: the database matches {path}.\n"


def test_an_unset_variable_keeps_a_stored_url_and_refuses_a_new_channel(configured, tmp_path, monkeypatch):
    path = export_text(tmp_path)
    monkeypatch.delenv("ATLAS_ONCALL_URL")

    kept = atlas("apply", str(path))

    assert kept.error == ""
    assert 'note: channel "oncall": ATLAS_ONCALL_URL is not set here; the stored URL is kept' in kept.out
    assert decrypt_url(NotificationChannel.objects.get(name="oncall").apprise_url) == ONCALL_URL

    new = _apply(tmp_path, "channels:\n- name: pager\n  url_env: ATLAS_PAGER_URL\n")

    assert 'channel "pager": url_env: ATLAS_PAGER_URL is not set' in new.error
    assert not NotificationChannel.objects.filter(name="pager").exists()


def test_a_channel_without_url_env_must_exist_already(db, tmp_path):
    NotificationChannelFactory(name="typed in the admin")

    run = _apply(tmp_path, "channels:\n- name: typed in the admin\n- name: nowhere\n")

    assert 'channel "nowhere": url_env: the channel is not in the database' in run.error
    assert 'channel "typed in the admin"' not in run.error
    assert not NotificationChannel.objects.filter(name="nowhere").exists()


def test_a_url_apprise_does_not_understand_is_refused_as_the_admin_refuses_it(db, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_PAGER_URL", "slack://only-one-part")

    run = _apply(tmp_path, "channels:\n- name: pager\n  url_env: ATLAS_PAGER_URL\n")

    assert 'channel "pager": url_env: $ATLAS_PAGER_URL: Apprise does not understand this slack:// URL' in run.error
    assert "only-one-part" not in run.error


def test_a_url_typed_in_the_admin_clears_the_variable_and_apply_puts_it_back(configured, tmp_path, admin_client):
    path = export_text(tmp_path)
    channel = NotificationChannel.objects.get(name="oncall")
    admin_client.post(
        f"/admin/probes/notificationchannel/{channel.pk}/change/",
        {"name": "oncall", "enabled": "on", "apprise_url": PAGER_URL},
    )
    assert NotificationChannel.objects.get(name="oncall").url_env == ""
    assert yaml.safe_load(export_text(tmp_path, "now.yaml").read_text())["channels"][0]["url_env"] == ""

    run = atlas("apply", str(path))

    assert run.out.splitlines()[0] == (
        '~ update channel "oncall": url_env "" -> "ATLAS_ONCALL_URL"; url read from $ATLAS_ONCALL_URL'
    )
    assert decrypt_url(NotificationChannel.objects.get(name="oncall").apprise_url) == ONCALL_URL
