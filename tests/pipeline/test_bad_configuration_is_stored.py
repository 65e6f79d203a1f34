"""Through the real pipeline (scheduler, region worker, ingest worker, Postgres):
a target the worker cannot send (a key with a typographic quote in the
worker's environment, a CA file missing there, a header HTTP cannot carry,
saved before the admin checked them) is stored as a config_error row each
interval, instead of a task that raises and stores nothing; and no key shows
in a stored row or in the region worker's log."""

from __future__ import annotations

import pytest

from probes.models import Measurement
from tests.engine.test_keys_never_leak import leaks
from tests.support import wait_for

pytestmark = pytest.mark.timeout(120)

QUOTE_KEY = "sk-pipe-quote-Ab3+x/Yz9=Qr7\u201dkLm2/Np8+Vw4sT6=Hj1c"
NEWLINE_KEY = "sk-pipe-newline-Qr7kLm2/Np8+Vw4sT6=Hj1cDe5/Gf0+Uo9\n"


def test_unsendable_targets_are_stored_as_config_errors_and_no_key_is_logged(
    pipeline, make_region, make_target, make_probe, mockllm
):
    region = make_region(slug="test-config", name="Config")
    url = f"{mockllm.base_url}/v1/chat/completions"
    # Rows written without the admin's checks, as older versions could save them.
    targets = {
        "quote key": make_target(url=url, api_key_env="PIPE_QUOTE_API_KEY"),
        "missing ca": make_target(url=url, api_key_env="", ca_bundle="/nonexistent/latency-ca.pem"),
        "accented header": make_target(url=url, api_key_env="", headers={"X-Title": "Caf\u00e9"}),
        # Sendable once trimmed; the provider echoes it in its error.
        "echoed key": make_target(url=url + "?fault=500&echo_key=raw", api_key_env="PIPE_NEWLINE_API_KEY"),
    }
    probes = {
        name: make_probe(target=t, regions=[region], interval_seconds=10, timeout_seconds=5.0)
        for name, t in targets.items()
    }
    pipeline.start_ingest()
    worker = pipeline.start_region("test-config", PIPE_QUOTE_API_KEY=QUOTE_KEY, PIPE_NEWLINE_API_KEY=NEWLINE_KEY)
    pipeline.start_scheduler()

    def stored():
        rows = {name: Measurement.objects.filter(probe=p).first() for name, p in probes.items()}
        return rows if all(rows.values()) else None

    rows = wait_for(stored, timeout=60, message="a stored row for every target")
    expected = {
        "quote key": ("config_error", "api_key_env: environment variable PIPE_QUOTE_API_KEY"),
        "missing ca": ("config_error", "ca_bundle:"),
        "accented header": ("config_error", 'headers: header "X-Title"'),
        "echoed key": ("http_error", "HTTP 500"),
    }
    for name, (outcome, start) in expected.items():
        row = rows[name]
        assert (row.outcome, row.error[: len(start)]) == (outcome, start), (name, row.outcome, row.error)
        for key in (QUOTE_KEY, NEWLINE_KEY):
            assert not leaks(row.error, key), (name, row.error)
    log = worker.log()
    assert "Traceback" not in log, log
    for key in (QUOTE_KEY, NEWLINE_KEY):
        assert not leaks(log, key), log
