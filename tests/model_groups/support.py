"""Stored measurements of known TTFTs for the model-group tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from probes.models import Measurement
from tests.factories import MeasurementFactory


def store(probe, region, ttfts: Sequence[float], start: datetime, step) -> None:
    """One successful measurement per TTFT, `step` apart from `start`."""
    Measurement.objects.bulk_create(
        MeasurementFactory.build(probe=probe, region=region, scheduled_for=start + step * i, ttft_ms=v)
        for i, v in enumerate(ttfts)
    )
