"""A call stored while a rebuild counts is neither lost nor counted twice. An ingest in flight when a rebuild
starts (its rows not yet committed) does not hold the rebuild up: the rebuild counts up to the counting position,
and the counter counts the batch once it commits, whichever side the objective was on. A counting pass in flight
holds the position, so the rebuild waits for it and counts up to where it got."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection, transaction

from probes.ingest import store
from probes.slos.counting import count_pending
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


def _held_open(work: Callable[[], None], done: threading.Event, release: threading.Event, errors: list) -> None:
    """work() in a transaction that commits only once release is set."""
    try:
        with transaction.atomic():
            work()
            done.set()
            release.wait(60)
    except Exception as exc:  # reported by the test thread
        errors.append(exc)
        done.set()
    finally:
        connection.close()


def _rebuilding(objective, errors: list) -> None:
    try:
        rebuild(objective.id)
    except Exception as exc:
        errors.append(exc)
    finally:
        connection.close()


def _rebuild_while_an_ingest_is_in_flight(probe, region, objective, slot) -> None:
    stored, release, errors = threading.Event(), threading.Event(), []

    def one_call() -> None:
        assert len(store([measurement_payload(probe, region, slot, ttft_ms=200.0)])) == 1

    ingesting = threading.Thread(target=_held_open, args=(one_call, stored, release, errors))
    ingesting.start()
    assert stored.wait(60)
    # The rebuild does not wait for the batch: it finishes while the batch is uncommitted.
    rebuilder = threading.Thread(target=_rebuilding, args=(objective, errors))
    rebuilder.start()
    rebuilder.join(60)
    assert not rebuilder.is_alive()
    release.set()
    ingesting.join(60)
    assert not errors


@pytest.mark.django_db(transaction=True)
def test_a_batch_in_flight_during_a_rebuild_is_counted_once():
    probe = ProbeFactory()
    region = probe.regions.get()
    start = hour_ago()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    assert ingest(probe, region, [(start, {"ttft_ms": 200.0})]) == 1

    # Counted, then emptied and recounted by the rebuild; the batch in flight is the counter's.
    _rebuild_while_an_ingest_is_in_flight(probe, region, objective, start + timedelta(minutes=1))
    assert counts(objective)["good"] == 2

    # Skipped while the objective waits for its rebuild, counted after it.
    objective.ttft_threshold_ms = 600
    objective.save()
    assert objective_saved(objective.id)
    _rebuild_while_an_ingest_is_in_flight(probe, region, objective, start + timedelta(minutes=2))
    assert counts(objective)["good"] == 3


@pytest.mark.django_db(transaction=True)
def test_a_counting_pass_in_flight_during_a_rebuild_counts_each_call_once():
    probe = ProbeFactory()
    region = probe.regions.get()
    start = hour_ago()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    assert len(store([measurement_payload(probe, region, start, ttft_ms=200.0)])) == 1
    objective.ttft_threshold_ms = 600
    objective.save()
    assert objective_saved(objective.id)
    assert len(store([measurement_payload(probe, region, start + timedelta(minutes=1), ttft_ms=900.0)])) == 1

    counted, release, errors = threading.Event(), threading.Event(), []
    counter = threading.Thread(target=_held_open, args=(count_pending, counted, release, errors))
    counter.start()
    assert counted.wait(60)
    rebuilder = threading.Thread(target=_rebuilding, args=(objective, errors))
    rebuilder.start()
    # The counting position is held by the pass in flight: the rebuild waits for its commit.
    wait_for(_a_lock_is_awaited, 30, message="the rebuild to wait for the counting pass in flight")
    release.set()
    counter.join(60)
    rebuilder.join(60)
    assert not errors
    assert counts(objective) == {"good": 1, "degraded": 0, "bad": 1, "missed": 0, "excluded": 0}
