"""A flood of forged messages costs dead letters, not the log: one summary
warning per batch, and the keys of the whole batch looked up in one query."""

from __future__ import annotations

import logging

from django.db import connection
from django.test.utils import CaptureQueriesContext

from probes.models import DeadLetter, Measurement
from probes.worker.protocol import Credential
from tests.factories import RegionFactory, region_credential, sealed_results
from tests.trust.conftest import ingest


def test_two_hundred_forged_messages_are_two_hundred_dead_letters_and_one_warning(region, payloads, caplog):
    forger, _text = Credential.new()
    honest = sealed_results(region, payloads(1))
    forged = [sealed_results(region, payloads(1, start=1 + k), forger) for k in range(200)]
    with caplog.at_level(logging.INFO, logger="probes"):
        assert ingest(*forged, honest) == 1
    assert DeadLetter.objects.count() == 200 and Measurement.objects.count() == 1
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    line = warnings[0].getMessage()
    assert line.startswith("ingest: 200 of 201 messages and payloads kept as dead letters: 200 x key ")
    assert len(line) < 1000


def test_the_keys_of_a_whole_batch_are_looked_up_in_one_query(probe, region, payloads):
    others = [RegionFactory() for _ in range(2)]
    probe.regions.add(*others)
    messages = [
        sealed_results(r, payloads(1, start=k, of_region=r), region_credential(r))
        for k, r in enumerate([region, *others] * 5)
    ]
    with CaptureQueriesContext(connection) as queries:
        assert ingest(*messages) == 15
    assert sum("probes_regionkey" in q["sql"] for q in queries.captured_queries) == 1
