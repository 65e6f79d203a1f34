"""Production mode refuses to start on a dangerous or incomplete configuration, `check --deploy` stays clean,
and X-Forwarded-Proto counts only when a trusted proxy sent it.

Start-up is tested in subprocesses with the environment an operator would set."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]  # the repository


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "LATENCY_PRODUCTION", "STATIC_ROOT")
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=120
    )


def production(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "LATENCY_PRODUCTION": "true",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "atlas.example.org",
        "STATIC_ROOT": str(tmp_path / "static"),
        **extra,
    }


def test_debug_with_production_refuses_to_start_even_without_a_secret_key(tmp_path):
    env = production(tmp_path, DEBUG="true")
    del env["SECRET_KEY"]
    result = run(["manage.py", "check"], **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "DEBUG=true cannot be combined with LATENCY_PRODUCTION=true" in result.stderr


def test_debug_with_production_refuses_to_start_with_a_secret_key_too(tmp_path):
    result = run(["manage.py", "check"], **production(tmp_path, DEBUG="true"))
    assert result.returncode != 0
    assert "DEBUG=true cannot be combined" in result.stderr


def test_production_without_a_secret_key_refuses_to_start(tmp_path):
    env = production(tmp_path)
    del env["SECRET_KEY"]
    result = run(["manage.py", "check"], **env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], **production(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_serve_before_collectstatic_and_names_the_command(tmp_path):
    env = production(tmp_path)
    result = run(["-c", "import latency.asgi"], **env)
    assert result.returncode != 0
    assert "python manage.py collectstatic --noinput" in result.stderr
    collected = run(["manage.py", "collectstatic", "--noinput", "--verbosity", "0"], **env)
    assert collected.returncode == 0, collected.stderr
    assert run(["-c", "import latency.asgi"], **env).returncode == 0


# --- X-Forwarded-Proto --------------------------------------------------------------------------------


@pytest.fixture
def behind_https(settings):
    """Production's HTTPS rules, with 10.0.0.2 as the only trusted proxy."""
    from probes.proxy import parse_proxies

    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.LATENCY_TRUSTED_PROXY_NETWORKS = parse_proxies(["10.0.0.2"])


def test_a_forwarded_proto_from_an_untrusted_client_is_ignored(behind_https):
    response = Client().get("/accounts/login/", REMOTE_ADDR="198.51.100.4", HTTP_X_FORWARDED_PROTO="https")
    # Not believed to be HTTPS: redirected there, as a plain-HTTP request is.
    assert response.status_code == 301
    assert response["Location"].startswith("https://")


def test_a_forwarded_proto_from_the_trusted_proxy_is_believed(behind_https):
    response = Client().get("/accounts/login/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_PROTO="https")
    assert response.status_code == 200


def test_a_bad_trusted_proxy_value_stops_start_up(tmp_path):
    result = run(["manage.py", "check"], LATENCY_TRUSTED_PROXIES="10.0.0.2,not-an-address")
    assert result.returncode != 0
    assert "LATENCY_TRUSTED_PROXIES: 'not-an-address' is not an IP address or network" in result.stderr
