"""The site's settings and a region worker's configuration read their secrets from files: SECRET_KEY_FILE in a
real `manage.py` process, the region key and a provider's key (into the environment the engine reads at each
call) in the worker's; a bad file refuses to start naming the variable."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from probes.worker import config as worker_config
from probes.worker.protocol import Credential
from tests.support import ROOT

PRINT_KEY_HASH = (
    "import hashlib; from django.conf import settings; print(hashlib.sha256(settings.SECRET_KEY.encode()).hexdigest())"
)


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"} | env
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def test_the_site_takes_its_secret_key_from_a_file(tmp_path):
    key = "a-long-random-key-mounted-as-a-file-" + "x" * 30
    (tmp_path / "secret_key").write_text(key + "\n")
    result = manage({"SECRET_KEY_FILE": str(tmp_path / "secret_key")}, "shell", "-c", PRINT_KEY_HASH)
    assert result.returncode == 0, result.stderr
    # The last line: the shell may say what it imported first.
    assert result.stdout.strip().splitlines()[-1] == hashlib.sha256(key.encode()).hexdigest()


def test_the_site_refuses_to_start_on_a_secret_file_it_cannot_read(tmp_path):
    result = manage({"SECRET_KEY_FILE": str(tmp_path / "nowhere")}, "check")
    assert result.returncode != 0
    assert "SECRET_KEY_FILE=" in result.stderr and "cannot be read" in result.stderr


def test_a_region_worker_reads_its_key_and_a_providers_key_from_files(tmp_path, monkeypatch):
    central, _ = Credential.new()
    _, credential = Credential.new((central.public(),))
    (tmp_path / "region").write_text(credential + "\n")
    (tmp_path / "openai").write_text("sk-from-a-mounted-secret\n")
    monkeypatch.setenv("LATENCY_BROKER_URL", "rediss://broker.example.org:6380/0")
    monkeypatch.setenv("LATENCY_REGION_KEY_FILE", str(tmp_path / "region"))
    monkeypatch.setenv("OPENAI_API_KEY_FILE", str(tmp_path / "openai"))
    # Set empty so that monkeypatch takes back what load() puts there.
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.delenv("LATENCY_REGION_KEY", raising=False)
    loaded = worker_config.load(region="af-lagos")
    assert loaded.credentials["af-lagos"].key_id == Credential.parse(credential, name="x", region="af-lagos").key_id
    # Where the engine reads a target's ${OPENAI_API_KEY} at each call.
    assert os.environ["OPENAI_API_KEY"] == "sk-from-a-mounted-secret"


def test_a_worker_does_not_read_a_file_for_a_variable_targets_may_not_name(tmp_path):
    central, _ = Credential.new()
    _, credential = Credential.new((central.public(),))
    env = {
        "LATENCY_BROKER_URL": "rediss://broker.example.org:6380/0",
        "LATENCY_REGION_KEY": credential,
        # Outside the default allowlist (*_API_KEY, *_TOKEN): not a secret this worker sends, so its missing file
        # is never opened.
        "HOME_DIRECTORY_FILE": str(tmp_path / "missing"),
    }
    loaded = worker_config.load(region="af-lagos", env=env)
    assert loaded.regions == ("af-lagos",)
    with pytest.raises(worker_config.ConfigError, match=r"LATENCY_REGION_KEY_FILE=/nope cannot be read"):
        worker_config.load(region="af-lagos", env={**env, "LATENCY_REGION_KEY": "", "LATENCY_REGION_KEY_FILE": "/nope"})
