"""The attack of issue 45 through the real pipeline (scheduler, region worker, ingest, Postgres): rows saved
before the central checks (a key variable naming another region's credential, headers naming the broker's and
the database's URLs, the secret key, a *_FILE) are stored as config_error measurements naming the variable, and
the listener they point at (a loopback HTTP server standing for the provider) receives no request at all. The
same worker, given LATENCY_PROVIDER_ENV, reads a variable its list allows and refuses one outside it."""

from __future__ import annotations

import pytest

from devtools.receivers import JsonReceiver
from probes.models import Measurement
from tests.engine.test_keys_never_leak import leaks
from tests.support import wait_for

pytestmark = pytest.mark.timeout(120)

LONDON_KEY = "la1_" + "L" * 43  # another region's credential on the same host
SECRET_KEY = "site-secret-key-Qr7kLm2Np8Vw4sT6Hj1cDe5Gf0Uo9"
FILE_PATH = "/run/qz7Wd0bPx3/pw-Hj1cDe5Gf0"
ACME_KEY = "sk-acme-allowed-Ab3xYz9Qr7kLm2Np8Vw4"
OPENAI_KEY = "sk-openai-not-listed-Hj1cDe5Gf0Uo9Vw4"


def test_site_variables_are_config_errors_and_the_listener_hears_nothing(
    pipeline, make_region, make_target, make_probe, mockllm
):
    region = make_region(slug="test-secrets", name="Secrets")
    with JsonReceiver() as listener:
        collector = f"http://127.0.0.1:{listener.port}/v1/chat/completions"
        # Rows written without the central checks, as a target editor could save them before.
        targets = {
            "region key": make_target(
                url=collector,
                api_key_env="LATENCY_REGION_KEY_EU_LONDON",
                headers={"X-Broker": "${REDIS_URL}", "X-Db": "${DATABASE_URL}"},
            ),
            "broker url": make_target(url=collector, api_key_env="", headers={"X-Broker": "${REDIS_URL}"}),
            "database url": make_target(url=collector, api_key_env="DATABASE_URL"),
            "secret key": make_target(url=collector, api_key_env="", headers={"Authorization": "Bearer ${SECRET_KEY}"}),
            "file": make_target(url=collector, api_key_env="X_FILE"),
            "not listed": make_target(url=collector, api_key_env="OPENAI_API_KEY"),
            "listed": make_target(url=f"{mockllm.base_url}/v1/chat/completions?tokens=3", api_key_env="ACME_GATEWAY"),
        }
        probes = {
            name: make_probe(target=t, regions=[region], interval_seconds=10, timeout_seconds=5.0)
            for name, t in targets.items()
        }
        pipeline.start_ingest()
        worker = pipeline.start_region(
            "test-secrets",
            LATENCY_REGION_KEY_EU_LONDON=LONDON_KEY,
            SECRET_KEY=SECRET_KEY,
            X_FILE=FILE_PATH,
            ACME_GATEWAY=ACME_KEY,
            OPENAI_API_KEY=OPENAI_KEY,
            LATENCY_PROVIDER_ENV="ACME_*",
        )
        pipeline.start_scheduler()

        def stored():
            rows = {name: Measurement.objects.filter(probe=p).first() for name, p in probes.items()}
            return rows if all(rows.values()) else None

        rows = wait_for(stored, timeout=60, message="a stored row for every target")
        assert listener.posts == [], [(p.path, sorted(p.headers)) for p in listener.posts]

    expected = {
        "region key": "api_key_env: environment variable LATENCY_REGION_KEY_EU_LONDON is one of the site's own",
        "broker url": 'headers: header "X-Broker": environment variable REDIS_URL is one of the site\'s own',
        "database url": "api_key_env: environment variable DATABASE_URL is one of the site's own",
        "secret key": 'headers: header "Authorization": environment variable SECRET_KEY is one of the site\'s own',
        "file": "api_key_env: environment variable X_FILE is one of the site's own",
        "not listed": "api_key_env: environment variable OPENAI_API_KEY is not one this worker lets targets read",
    }
    for name, start in expected.items():
        row = rows[name]
        assert (row.outcome, row.error[: len(start)]) == ("config_error", start), (name, row.outcome, row.error)
    assert "LATENCY_PROVIDER_ENV" in rows["not listed"].error
    assert rows["listed"].outcome == "ok", rows["listed"].error
    # The worker names its broker at start (password masked), so the URLs are looked for in the rows only.
    secrets = (LONDON_KEY, SECRET_KEY, FILE_PATH, OPENAI_KEY, ACME_KEY)
    log = worker.log()
    for secret in secrets:
        assert not leaks(log, secret), (secret, leaks(log, secret))
    for secret in (*secrets, pipeline.redis_url, pipeline.database_url):
        for row in rows.values():
            assert not leaks(row.error or "", secret), row.error
