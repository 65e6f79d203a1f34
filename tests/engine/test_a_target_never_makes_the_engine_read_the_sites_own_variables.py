"""A target naming one of the site's own variables (the region's credential, the broker's and the database's URLs,
the secret key, a *_FILE), as its key variable or in a ${VAR} header, is a config_error naming the variable: the
engine sends nothing to the target's URL, even when the worker's LATENCY_PROVIDER_ENV has a pattern that covers
the name. A row saved before the central checks existed meets this at the worker."""

from __future__ import annotations

import pytest

from devtools.receivers import JsonReceiver

SITE_VARIABLES = ["LATENCY_REGION_KEY_EU_LONDON", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "X_FILE", "CELERY_X"]
SECRET = "site-secret-Qr7kLm2Np8Vw4sT6Hj1cDe5Gf0Uo9"
# Patterns an operator may list that match site names too: those are refused all the same.
BROAD_ALLOWLIST = "*_URL,SECRET*,*_LONDON,X_*,CELERY*,*_KEY"


@pytest.fixture
def listener():
    """A loopback HTTP server standing for the provider: it records every request."""
    with JsonReceiver() as receiver:
        yield receiver


@pytest.mark.parametrize("allowlist", ["", BROAD_ALLOWLIST], ids=["default", "broad-allowlist"])
@pytest.mark.parametrize("where", ["api_key_env", "headers"])
@pytest.mark.parametrize("name", SITE_VARIABLES)
def test_a_site_variable_is_a_config_error_and_nothing_is_sent(measure, listener, monkeypatch, name, where, allowlist):
    monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("LATENCY_PROVIDER_ENV", allowlist)
    fields = {"api_key_env": name} if where == "api_key_env" else {"headers": {"Authorization": f"Bearer ${{{name}}}"}}

    m = measure(f"http://127.0.0.1:{listener.port}/v1/chat/completions", **fields)

    assert m.outcome == "config_error", (m.outcome, m.error)
    assert m.error.startswith(f"{where}: ") and name in m.error and "site's own variables" in m.error
    assert SECRET not in m.error and SECRET[:8] not in m.error
    assert listener.posts == []
