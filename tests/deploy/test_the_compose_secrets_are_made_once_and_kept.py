"""The compose file's init-secrets step (its script, run here as the container runs it, in folders standing for its
two volumes) makes SECRET_KEY, the database password and the DATABASE_URL holding it on the first start, readable
by their owner and the images' group only, and keeps them on every later start: a new SECRET_KEY would end every
session and make the central signing key unreadable, a new password would no longer open the database. The site's
settings read the files it makes (SECRET_KEY_FILE, DATABASE_URL_FILE)."""

from __future__ import annotations

import stat
import subprocess
import sys
from urllib.parse import urlsplit

from probes.conf import secretfiles
from tests.deploy.manifests import compose

SERVICE = compose()["services"]["init-secrets"]


def run_init(central, keys) -> subprocess.CompletedProcess:
    program, flag, script = SERVICE["entrypoint"]
    assert (program, flag) == ("python3", "-c")
    mounts = {volume.split(":")[1] for volume in SERVICE["volumes"]}
    assert mounts == {"/run/latency-atlas", "/run/region-keys"}
    script = script.replace('"/run/latency-atlas"', repr(str(central))).replace('"/run/region-keys"', repr(str(keys)))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)


def test_init_secrets_makes_the_secrets_once_for_the_images_group_and_keeps_them(tmp_path):
    central, keys = tmp_path / "central", tmp_path / "keys"
    central.mkdir()
    keys.mkdir()
    run_init(central, keys)
    made = {path.name: path.read_text() for path in central.iterdir()}
    assert sorted(made) == ["database_url", "postgres_password", "secret_key"]
    for path in central.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o440, path.name
    assert stat.S_IMODE(central.stat().st_mode) == 0o750
    assert stat.S_IMODE(keys.stat().st_mode) == 0o770  # region-key, as the images' user, writes the credential here
    password = made["postgres_password"].strip()
    url = urlsplit(made["database_url"].strip())
    assert (url.scheme, url.username, url.password, url.hostname, url.port, url.path) == (
        "postgres",
        "latency",
        password,
        "postgres",
        5432,
        "/latency",
    )
    assert len(made["secret_key"].strip()) >= 50

    run_init(central, keys)
    assert {path.name: path.read_text() for path in central.iterdir()} == made


def test_the_site_reads_the_secrets_init_secrets_makes(tmp_path):
    central, keys = tmp_path / "central", tmp_path / "keys"
    central.mkdir()
    keys.mkdir()
    run_init(central, keys)
    env = {"SECRET_KEY_FILE": str(central / "secret_key"), "DATABASE_URL_FILE": str(central / "database_url")}
    read = secretfiles.read(env)
    assert read["SECRET_KEY"] == (central / "secret_key").read_text().strip()
    assert read["DATABASE_URL"].startswith("postgres://latency:")
    # The paths the compose file gives the site are the files init-secrets makes.
    web = compose()["services"]["web"]["environment"]
    assert {web["SECRET_KEY_FILE"], web["DATABASE_URL_FILE"]} == {
        "/run/latency-atlas/secret_key",
        "/run/latency-atlas/database_url",
    }
