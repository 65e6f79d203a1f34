"""An ingest in flight when a rebuild starts (its rows not yet committed) is neither lost nor counted twice: the
rebuild waits for it and counts its rows once, whichever side the objective was on when the ingest read it."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction

from probes.ingest import store
from probes.slos.rebuild import rebuild
from probes.slos.services import objective_saved
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory, measurement_payload
from tests.slos_counting.conftest import counts, current, hour_ago, ingest
from tests.support import wait_for

pytestmark = pytest.mark.timeout(120)


def _a_lock_is_awaited() -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cur.fetchone()[0] > 0


def _rebuild_while_an_ingest_is_in_flight(probe, region, objective, slot) -> None:
    stored, release, errors = threading.Event(), threading.Event(), []

    def in_flight() -> None:
        try:
            with transaction.atomic():
                assert len(store([measurement_payload(probe, region, slot, ttft_ms=200.0)])) == 1
                stored.set()
                release.wait(60)
        except Exception as exc:  # reported by the test thread
            errors.append(exc)
            stored.set()
        finally:
            connection.close()

    def rebuilding() -> None:
        try:
            rebuild(objective.id)
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    ingesting = threading.Thread(target=in_flight)
    ingesting.start()
    assert stored.wait(60)
    rebuilder = threading.Thread(target=rebuilding)
    rebuilder.start()
    # The rebuild waits for the batch (its cut, or its lock on the objective) before it can finish.
    wait_for(_a_lock_is_awaited, 30, message="the rebuild to wait for the ingest in flight")
    release.set()
    ingesting.join(60)
    rebuilder.join(60)
    assert not errors


@pytest.mark.django_db(transaction=True)
def test_a_batch_in_flight_during_a_rebuild_is_counted_once():
    probe = ProbeFactory()
    region = probe.regions.get()
    start = hour_ago()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    assert ingest(probe, region, [(start, {"ttft_ms": 200.0})]) == 1

    # Counted by the ingest (the objective current), then emptied and recounted by the rebuild.
    _rebuild_while_an_ingest_is_in_flight(probe, region, objective, start + timedelta(minutes=1))
    assert counts(objective)["good"] == 2

    # Skipped by the ingest (waiting for its rebuild), counted by the rebuild.
    objective.ttft_threshold_ms = 600
    objective.save()
    assert objective_saved(objective.id)
    _rebuild_while_an_ingest_is_in_flight(probe, region, objective, start + timedelta(minutes=2))
    assert counts(objective)["good"] == 3
