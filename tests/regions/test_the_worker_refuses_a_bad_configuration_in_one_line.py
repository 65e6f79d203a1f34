"""Before it touches the broker, the console script checks what it was
given: a region slug, a credential of the right form. Each refusal is one
line naming the variable, exit status 78 (systemd does not restart it), and
never quotes the credential."""

from __future__ import annotations

import pytest

from tests.regions.conftest import one_line

GOOD_LOOKING = "la2_" + "A" * 43 + "." + "A" * 43


@pytest.mark.parametrize(
    "region, key, expected",
    [
        ("Af_Lagos", GOOD_LOOKING, "is not a region slug"),
        ("af-lagos", None, "LATENCY_REGION_KEY is not set"),
        ("af-lagos", "", "LATENCY_REGION_KEY is not set"),
        ("af-lagos", "la2_short", "LATENCY_REGION_KEY is not a region credential"),
        ("af-lagos", "sk-" + "x" * 44, "LATENCY_REGION_KEY is not a region credential"),
        ("af-lagos", "la2_" + "*" * 43 + "." + "A" * 43, "LATENCY_REGION_KEY is not a region credential"),
    ],
    ids=["bad-slug", "missing-key", "empty-key", "short-key", "other-prefix", "not-base64url"],
)
def test_a_bad_region_or_credential_is_refused_in_one_line(region_host, region, key, expected):
    env = {} if key is None else {"LATENCY_REGION_KEY": key}
    done = region_host.run("worker", "--region", region, **env)
    assert done.returncode == 78, done.stderr
    line = one_line(done.stdout + done.stderr)
    assert expected in line and line.startswith("latency-atlas: refusing to start: ")
    if key and len(key) > 8:
        assert key[4:12] not in line and key not in line


def test_a_region_of_several_without_its_own_credential_is_named(region_host):
    done = region_host.run(
        "worker", "--region", "af-lagos,eu-oslo", LATENCY_REGION_KEY_AF_LAGOS=GOOD_LOOKING, timeout=60
    )
    assert done.returncode == 78
    line = one_line(done.stdout + done.stderr)
    assert "eu-oslo" in line and "LATENCY_REGION_KEY_EU_OSLO" in line


@pytest.mark.parametrize(
    "variable, value, expected",
    [
        ("LATENCY_BROKER_URL", "http://broker.example.org/", "must be a redis://, rediss://, amqp:// or amqps://"),
        ("LATENCY_BROKER_URL", "rediss://:pw@broker.example.org:6380/0?ssl_cert_reqs=none", "always verifies"),
        ("LATENCY_BROKER_CA", "/nonexistent/ca.pem", "LATENCY_BROKER_CA"),
        ("LATENCY_HEARTBEAT_SECONDS", "often", "LATENCY_HEARTBEAT_SECONDS"),
        ("LATENCY_MAX_CLOCK_OFFSET_MS", "-5", "LATENCY_MAX_CLOCK_OFFSET_MS"),
        # A worker never sends the site's own variables to a target: a list that expects it to is refused.
        ("LATENCY_PROVIDER_ENV", "OPENAI_API_KEY,LATENCY_REGION_KEY_*", "LATENCY_PROVIDER_ENV: LATENCY_REGION_KEY_*"),
        ("LATENCY_PROVIDER_ENV", "OPENAI_API_KEY,ACME-*", "LATENCY_PROVIDER_ENV: 'ACME-*' is not a variable name"),
        ("LATENCY_CA_DIR", "/nonexistent/latency-cas", "LATENCY_CA_DIR=/nonexistent/latency-cas is not a directory"),
    ],
    ids=[
        "scheme",
        "tls-unverified",
        "missing-ca",
        "heartbeat-not-a-number",
        "negative-offset",
        "provider-env-names-site-variables",
        "provider-env-malformed",
        "ca-dir-missing",
    ],
)
def test_a_bad_setting_is_refused_in_one_line_naming_it(region_host, variable, value, expected):
    done = region_host.run("worker", "--region", "af-lagos", LATENCY_REGION_KEY=GOOD_LOOKING, **{variable: value})
    assert done.returncode == 78, done.stdout + done.stderr
    line = one_line(done.stdout + done.stderr)
    assert expected in line
    assert ":pw@" not in line
