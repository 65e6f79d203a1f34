"""Heartbeat history is short (LATENCY_HEARTBEAT_HISTORY_HOURS) and a worker
not seen for 30 days is forgotten, in the prune that retention runs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Worker, WorkerBeat
from probes.rollups.prune import prune_workers

pytestmark = pytest.mark.django_db


def worker(region, last_seen: datetime) -> Worker:
    return Worker.objects.create(
        instance=uuid.uuid4().hex,
        region=region,
        key_id="0" * 16,
        name="region-test@host",
        hostname="host",
        release="0.2.0",
        schema=2,
        started_at=last_seen - timedelta(hours=1),
        last_seen=last_seen,
    )


def test_old_beats_and_long_gone_workers_are_deleted_and_the_rest_kept(make_region, settings):
    settings.LATENCY_HEARTBEAT_HISTORY_HOURS = 24
    now = datetime.now(UTC)
    region = make_region()
    live, gone = worker(region, now), worker(region, now - timedelta(days=31))
    old = WorkerBeat.objects.create(worker=live, at=now - timedelta(hours=25))
    recent = WorkerBeat.objects.create(worker=live, at=now - timedelta(hours=1))
    WorkerBeat.objects.create(worker=gone, at=now - timedelta(days=31))
    prune_workers(now)
    assert list(Worker.objects.all()) == [live]
    assert list(WorkerBeat.objects.all()) == [recent]
    assert not WorkerBeat.objects.filter(pk=old.pk).exists()
