"""Ingest counts what it stored right after storing it, but never waits to do so: not for another counter, and not
for another ingest's transaction still in flight (which may itself be waiting for this one's caller). What it
leaves is counted by the next pass, and readers count it meanwhile."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction

from probes.ingest import store
from probes.readings.slos import counts_in
from probes.slos import counting
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory, measurement_payload
from tests.slos_counting.conftest import counts, current, hour_ago, ingest

pytestmark = pytest.mark.timeout(120)


@pytest.mark.django_db(transaction=True)
def test_an_ingest_beside_an_open_ingest_transaction_returns_and_its_call_is_counted_later(monkeypatch):
    # Another target, region and hour: the two ingests share no tally, count or hour version row.
    probe, elsewhere = ProbeFactory(), ProbeFactory()
    region, other_region = probe.regions.get(), elsewhere.regions.get()
    start = hour_ago()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    stored, release, errors = threading.Event(), threading.Event(), []

    def held_open() -> None:
        try:
            with transaction.atomic():
                payload = measurement_payload(elsewhere, other_region, start - timedelta(hours=2), ttft_ms=200.0)
                assert len(store([payload])) == 1
                stored.set()
                release.wait(60)
        except Exception as exc:  # reported by the test thread
            errors.append(exc)
            stored.set()
        finally:
            connection.close()

    def second_ingest() -> None:
        try:
            assert (
                ingest(probe, region, [(start, {"ttft_ms": 200.0}), (start + timedelta(minutes=1), {"ttft_ms": 900.0})])
                == 2
            )
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    first = threading.Thread(target=held_open)
    first.start()
    assert stored.wait(60)
    monkeypatch.setitem(counting._ingest_counted, "at", float("-inf"))  # due to count now
    second = threading.Thread(target=second_ingest)  # stores, then tries to count
    second.start()
    second.join(60)
    returned = not second.is_alive()
    release.set()
    first.join(60)
    second.join(60)
    assert returned, "the second ingest waited for the first one's transaction"
    assert not errors

    window = {"all": (start, start + timedelta(hours=1))}
    (read,) = counts_in([objective.id], window, by_cell=False).values()
    assert (read.good, read.bad) == (1, 1)
    assert counts(objective) == {"good": 1, "degraded": 0, "bad": 1, "missed": 0, "excluded": 0}
