"""Thin Celery tasks: run a slot (region workers), ingest a batch, roll up,
prune. Each takes a small dict or nothing and calls a domain function."""

from __future__ import annotations

import logging
import socket
import time
from datetime import UTC, datetime, timedelta

from celery import shared_task
from celery_batches import Batches
from django.conf import settings

from probes.deadletters import INGEST_QUEUE

log = logging.getLogger(__name__)

INGEST_TASK = "probes.ingest"


@shared_task(
    name="probes.run_slot",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,  # a failed probe is a measurement, never a retry
    soft_time_limit=settings.LATENCY_MAX_PROBE_TIMEOUT + 20,
    time_limit=settings.LATENCY_MAX_PROBE_TIMEOUT + 30,
    ignore_result=True,
    bind=True,
)
def run_slot(self, *args, **kwargs) -> str:
    # Runs on region workers: no database here, only the engine and the broker.
    # Any arguments are accepted and checked by parse_run_order, so that a
    # malformed order is one log line, not a traceback.
    from probes.engine import ProbeSpec
    from probes.runtime import BadRunOrder, parse_run_order, result_batcher, run_probe

    queue = (self.request.delivery_info or {}).get("routing_key") or "?"
    try:
        message, scheduled, interval = parse_run_order(args, kwargs)
        spec = ProbeSpec.from_dict(message["spec"])
    except (BadRunOrder, TypeError, ValueError) as exc:
        from probes.deadletters import preview

        log.warning("dropped a malformed run order from %s: %s; message: %s", queue, exc, preview([args, kwargs]))
        return "rejected"
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    late = datetime.now(UTC) - scheduled
    if late > timedelta(seconds=interval) and not redelivered:
        # Queued while no worker listened: firing it now would be a burst of
        # stale runs. A redelivery (its worker died mid-run) still runs.
        log.info(
            "skipping stale slot %s of probe %s (%.0f s late)", scheduled, message["probe_id"], late.total_seconds()
        )
        return "stale"
    result = run_probe(spec)
    payload = {
        "probe_id": message["probe_id"],
        "target_id": message["target_id"],
        "region_id": message["region_id"],
        "scheduled_for": message["scheduled_for"],
        "worker": self.request.hostname or socket.gethostname(),
        "result": result.to_dict(),
    }
    # Published before this task is acknowledged: a crash in between means a
    # second run of the slot, which the unique key folds into one row.
    app = self.app

    def publish(payloads: list[dict]) -> None:
        app.send_task(
            INGEST_TASK,
            args=[payloads],
            queue=INGEST_QUEUE,
            retry=True,
            retry_policy={"max_retries": 20, "interval_start": 0.5, "interval_step": 1, "interval_max": 5},
        )

    result_batcher(publish).submit(payload)
    return result.outcome


class IngestBatch(Batches):
    acks_late = True  # acknowledged only after the batch is committed
    flush_every = 500
    flush_interval = 0.25  # seconds: bigger batches under a backlog, still live within a second

    def Strategy(self, task, app, consumer):
        # Called again when the worker reconnects to the broker. The flush
        # timer belonged to the old connection's timer and died with it; left
        # set, no new one would start and the buffer would only flush every
        # 500 messages. Messages buffered from the old connection cannot be
        # acknowledged any more: Redis delivers them again, so drop them.
        if self._tref is not None:
            self._tref.cancel()
        self._tref = None
        while not self._buffer.empty():
            self._buffer.get_nowait()
        return super().Strategy(task, app, consumer)


@shared_task(name=INGEST_TASK, base=IngestBatch, bind=True, ignore_result=True)
def ingest(self, requests) -> int:
    from probes.ingest import ingest_messages

    return ingest_messages([(req.args, req.kwargs, f"{req.name}[{req.id}]") for req in requests])


@shared_task(name="probes.rollup_recent", ignore_result=True, time_limit=600, soft_time_limit=570, expires=290)
def rollup_recent(token: str | None = None) -> int | None:
    from probes.fleet.maintenance import refused
    from probes.rollups import rollup_stale_hours

    # Sent by the central scheduler only (probes.fleet.maintenance): a region
    # host holds the broker URL too.
    if refused("probes.rollup_recent", token):
        return None

    return rollup_stale_hours()


@shared_task(name="probes.prune", ignore_result=True, time_limit=3000, soft_time_limit=2900, expires=3500)
def prune(token: str | None = None) -> int | None:
    from probes.fleet.maintenance import refused
    from probes.rollups import prune_raw

    if refused("probes.prune", token):
        return None

    started = time.monotonic()
    deleted = prune_raw()  # dead letters too, on the same retention
    log.info("pruned %d raw measurements in %.1f s", deleted, time.monotonic() - started)
    return deleted


@shared_task(name="probes.close_slots", ignore_result=True, time_limit=120, soft_time_limit=110, expires=55)
def close_slots(token: str | None = None) -> int | None:
    """Record scheduled runs that no worker picked up (probes.fleet.missed), every minute."""
    from probes.fleet.maintenance import refused
    from probes.fleet.missed import close_slots as record_missed

    # Sent by the central scheduler only (probes.fleet.maintenance), like the other maintenance tasks.
    if refused("probes.close_slots", token):
        return None
    return record_missed()
