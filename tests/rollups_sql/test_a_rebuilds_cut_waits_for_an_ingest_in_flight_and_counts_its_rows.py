"""A rebuild's cut (the highest measurement id its rollups may count) is taken
only once no ingest is in flight: an ingest that has drawn ids but not
committed makes the rebuild wait at its cut, never the other way round, and
its rows are then at or below the cut and counted. Rows stored after the cut
are above it, so a reading of the hour (its rollups plus its rows above the
cut) counts every row once.

Real connections, a thread each: the ingest's transaction is held open after
its INSERT until the rebuild is seen waiting for the lock in pg_locks."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction

from probes.ingest import store
from probes.models import HourCut, HourlyRollup, Measurement
from probes.readings.cache import merge_cache
from probes.readings.window import read_window
from probes.rollups import HOUR, LockSpace, floor_hour, rebuild_hour
from tests.support import ConnectionThread, ingest_payload

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

DEADLINE_S = 20


def payload(probe, region, started):
    return ingest_payload(probe, region, started, ttft_ms=640.0, total_ms=900.0)


def waiting_for_the_ingest_ids_lock() -> int:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = %s",
            [int(LockSpace.INGEST_IDS)],
        )
        return cur.fetchone()[0]


def test_a_rebuild_waits_at_its_cut_for_an_uncommitted_ingest_and_then_counts_its_row(make_probe, make_region, now):
    region = make_region()
    probe = make_probe(regions=[region])
    hour = floor_hour(now)
    assert len(store([payload(probe, region, hour + timedelta(seconds=1))])) == 1

    stored, release = threading.Event(), threading.Event()

    def ingest_held_open():
        with transaction.atomic():
            items = store([payload(probe, region, now - timedelta(seconds=30))])
            stored.set()
            assert release.wait(DEADLINE_S), "the test never released the ingest"
        return items

    ingest = ConnectionThread(ingest_held_open, DEADLINE_S)
    ingest.start()
    try:
        assert stored.wait(DEADLINE_S), "the ingest never stored its row"
        rebuild = ConnectionThread(lambda: rebuild_hour(hour), DEADLINE_S)
        rebuild.start()
        deadline = time.monotonic() + DEADLINE_S
        while not waiting_for_the_ingest_ids_lock():
            assert time.monotonic() < deadline, "the rebuild never waited for the ingest in flight"
            assert rebuild.is_alive(), "the rebuild took its cut while an ingest had uncommitted ids"
            time.sleep(0.02)
    finally:
        release.set()
    (item,) = ingest.result()
    assert rebuild.result() == 1

    cut = HourCut.objects.get(hour=hour)
    assert cut.cut >= item["id"]
    assert HourlyRollup.objects.get(hour=hour).samples == 2

    # A row stored after the rebuild lies above its cut: read once, from the tail.
    (later,) = store([payload(probe, region, now - timedelta(seconds=10))])
    assert later["id"] > cut.cut
    merge_cache.clear()
    reading = read_window(hour - 10 * HOUR, now + timedelta(seconds=1), target_ids=[probe.target_id])
    assert reading[(region.id,)].samples == Measurement.objects.filter(started_at__gte=hour).count() == 3
