"""A tokens/s value beyond what any single stream can do (an older worker's
timing artefact) is no measurement: the ingest stores the rest of the row
with tokens_per_s NULL, says so in its log, and keeps no dead letter, since
every other value of the payload is good."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import store
from probes.metrics import TOKENS_PER_S_CEILING
from probes.models import DeadLetter, Measurement
from tests.pipeline.test_ingest_validation import payload

BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


@pytest.fixture
def probe(make_probe):
    return make_probe()


def test_implausible_tokens_per_second_is_stored_as_null(probe, caplog):
    region = probe.regions.get()
    sent = [
        payload(probe, region, BASE, tokens_per_s=226_193.0),
        payload(probe, region, BASE + timedelta(seconds=10), tokens_per_s=TOKENS_PER_S_CEILING),
        payload(probe, region, BASE + timedelta(seconds=20), tokens_per_s=2_500.0),
    ]
    with caplog.at_level(logging.WARNING, logger="probes.ingest"):
        assert len(store(sent)) == 3
    rows = list(Measurement.objects.order_by("scheduled_for").values_list("tokens_per_s", "ttft_ms"))
    assert rows == [(None, 250.123456), (TOKENS_PER_S_CEILING, 250.123456), (2_500.0, 250.123456)]
    assert not DeadLetter.objects.exists()
    assert "1 implausible values stored as NULL" in caplog.text and "tokens_per_s=226193" in caplog.text
