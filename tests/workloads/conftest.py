"""Rows of known workloads, inputs and times for the workload readings' tests."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from probes.models import Measurement
from tests.factories import MeasurementFactory


@pytest.fixture
def add_calls(db):
    """add_calls(probe, region, at, [{column: value, ...}, ...]): one stored call a dict, a second apart from `at`
    on (workload, outcome and every column the dict does not name as the factory has them)."""

    def add(probe, region, at: datetime, rows: list[dict]) -> list[Measurement]:
        built = MeasurementFactory.build_rows(
            [{"started_at": at + timedelta(seconds=i), **row} for i, row in enumerate(rows)],
            probe=probe,
            region=region,
        )
        return Measurement.objects.bulk_create(built)

    return add


def failed(outcome: str, **columns) -> dict:
    """A call that got no answer: no phase after the request, as the engine stores one."""
    return {"outcome": outcome, "http_status": 429 if outcome == "rate_limited" else 529, "ttfb_ms": None,
            "ttft_ms": None, "ttfat_ms": None, "total_ms": None, "output_tokens": None, "tokens_per_s": None,
            "itl_p50_ms": None, **columns}  # fmt: skip
