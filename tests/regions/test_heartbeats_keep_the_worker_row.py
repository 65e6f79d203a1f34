"""A running region worker says where it connected in one line, then beats:
the central site keeps one Worker row per process and region, moved forward
by each beat (release, runs, in flight, clock offset), a short history of
beats, and a last `stopped` beat when the worker is stopped (SIGTERM, as
systemctl stop sends it)."""

from __future__ import annotations

from kombu import Connection

from probes.fleet.keys import issue_key
from probes.models import Measurement, Worker, WorkerBeat
from probes.worker.protocol import SCHEMA, release
from tests.support import wait_for


def test_the_worker_says_what_it_connected_to_and_its_heartbeats_advance_its_row(region_host, llm_probe, pipeline):
    probe = llm_probe(slug="test-beat-lagos", interval=10)
    region = probe.regions.get()
    issued = issue_key(region)
    region_host.ingest()
    worker = region_host.start(
        "worker", "--region", region.slug, LATENCY_REGION_KEY=issued.credential, LATENCY_HEARTBEAT_SECONDS="1"
    )
    wait_for(lambda: " ready." in worker.log(), 90, message="the region worker to be ready")
    (line,) = [x for x in worker.log().splitlines() if " connected: " in x]
    masked = Connection(pipeline.redis_url).as_uri()
    assert f"broker {masked}" in line and ":**@" in masked
    password = Connection(pipeline.redis_url).password
    assert not password or password not in worker.log()
    assert f"region {region.slug} ({region.name})" in line
    assert f"key {issued.key_id}" in line and f"schema {SCHEMA}" in line and "clock offset " in line

    row = wait_for(lambda: Worker.objects.filter(region=region).first(), 60, message="the worker's row")
    assert row.release == release() and row.schema == SCHEMA and row.key_id == issued.key_id
    assert row.state == Worker.RUNNING and row.name.startswith(f"region-{region.slug}-")
    first_seen = row.last_seen
    pipeline.start_scheduler()

    def advanced():
        row.refresh_from_db()
        return row.last_seen > first_seen and row.runs >= 1 and row.clock_offset_ms is not None

    wait_for(advanced, 90, message="a later heartbeat counting the run and the clock offset")
    assert row.in_flight >= 0 and row.round_trip_ms is not None and row.last_run_at is not None
    # Same machine, same clock: the offset is small (generous: a busy machine delays one way).
    assert abs(row.clock_offset_ms) < 2000
    assert row.queue_depth is not None
    assert WorkerBeat.objects.filter(worker=row).count() >= 2
    stored = wait_for(lambda: Measurement.objects.filter(probe=probe).first(), 60, message="a measurement")
    assert stored.worker == row.name

    assert worker.stop(timeout=90) == 0, worker.log()
    row.refresh_from_db()
    wait_for(lambda: Worker.objects.get(pk=row.pk).state == Worker.STOPPED, 30, message="the stopped beat")
