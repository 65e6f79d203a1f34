"""Start-up refuses ingest budgets that cannot work, naming the variables: a per-request cap above the per-minute
budget (such an export could never be admitted), and the old shared LATENCY_INGEST_RATE_PER_MINUTE, which would
otherwise be ignored without a word now that beacons and OTLP have budgets of their own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _start(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'latency.settings'; "
         "django.setup()"],
        cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_cap_above_the_minute_and_the_old_shared_rate_are_refused():
    refused = _start(
        LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE="100", LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST="101"
    )
    assert refused.returncode != 0
    assert "LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST=101" in refused.stderr

    refused = _start(LATENCY_INGEST_RATE_PER_MINUTE="1200")
    assert refused.returncode != 0
    assert "LATENCY_BEACONS_PER_MINUTE" in refused.stderr

    assert (
        _start(
            LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE="100", LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST="100"
        ).returncode
        == 0
    )
