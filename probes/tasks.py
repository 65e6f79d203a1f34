"""Thin Celery tasks of the central side: ingest a batch, take a heartbeat,
roll up, prune. Each takes a small dict or nothing and calls a domain
function. The region workers' task (probes.run_slot) is in
probes/worker/tasks.py, on an app of their own without Django."""

from __future__ import annotations

import logging
import time

from celery import shared_task
from celery_batches import Batches

from probes.compat.celery_batches import forget_buffered

log = logging.getLogger(__name__)

INGEST_TASK = "probes.ingest"


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
        forget_buffered(self)
        return super().Strategy(task, app, consumer)


@shared_task(name=INGEST_TASK, base=IngestBatch, bind=True, ignore_result=True)
def ingest(self, requests) -> int:
    from probes.ingest import ingest_messages

    # The task id names each message across deliveries: its dead letters are kept once (probes.fleet.trust).
    return ingest_messages([(req.args, req.kwargs, f"{req.name}[{req.id}]", req.id) for req in requests])


@shared_task(
    name="probes.heartbeat",
    bind=True,
    acks_late=True,
    ignore_result=True,
    max_retries=0,  # the next beat comes in a few seconds
    time_limit=30,
    soft_time_limit=20,
    expires=60,
)
def heartbeat(self, *args, **kwargs) -> str:
    from probes.fleet.heartbeats import take_heartbeat

    return take_heartbeat(args, kwargs, app=self.app, source=f"health ({self.request.id})")


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


@shared_task(
    name="probes.ensure_partitions",
    bind=True,
    ignore_result=True,
    max_retries=3,
    time_limit=600,
    soft_time_limit=570,
    expires=3500,
)
def ensure_partitions(self, token: str | None = None) -> int | None:
    """Today's and LATENCY_PARTITIONS_AHEAD_DAYS ahead's partitions (probes.partitions), hourly. Returns how many
    were created."""
    from django.db import OperationalError

    from probes.fleet.maintenance import refused
    from probes.partitions import ensure_scheduled

    if refused("probes.ensure_partitions", token):
        return None
    try:
        return ensure_scheduled()
    except OperationalError as exc:
        # A database restart: the next hour's run would do, but a missing tomorrow is worth a retry now.
        raise self.retry(exc=exc, countdown=60, kwargs={"token": token}) from None


@shared_task(name="probes.close_slots", ignore_result=True, time_limit=120, soft_time_limit=110, expires=55)
def close_slots(token: str | None = None) -> int | None:
    """Record scheduled runs that no worker picked up (probes.fleet.missed), every minute."""
    from probes.fleet.maintenance import refused
    from probes.fleet.missed import close_slots as record_missed

    # Sent by the central scheduler only (probes.fleet.maintenance), like the other maintenance tasks.
    if refused("probes.close_slots", token):
        return None
    return record_missed()


@shared_task(name="probes.evaluate_alerts", ignore_result=True, time_limit=110, soft_time_limit=100, expires=55)
def evaluate_alerts(token: str | None = None) -> str | None:
    """One pass over the alert rules (probes.alerts.evaluate), every minute. Two passes that overlap
    (a slow one and the next) are safe: every state change is a compare-and-swap."""
    from probes.alerts.evaluate import run_pass
    from probes.fleet.maintenance import refused

    if refused("probes.evaluate_alerts", token):
        return None
    report = run_pass()
    # Objectives whose coverage changed without a save of theirs (a model group's targets, a deleted target) are
    # emptied and rebuilt like a save (probes.slos.services).
    from probes.slos.services import reconcile

    reconcile()
    # Deliveries whose task was lost (a broker restart, a purged queue) go out again; their claim
    # (probes.alerts.notify) keeps one that is merely slow from being sent twice.
    from probes.alerts import notify

    notify.queue(notify.stranded())
    return str(report)


# probes.alerts.notify.MAX_ATTEMPTS, repeated so this module imports no models at load, like the tasks above.
_NOTIFY_MAX_ATTEMPTS = 6


@shared_task(
    name="probes.deliver_notification",
    bind=True,
    ignore_result=True,
    # A worker killed mid-send has the message delivered again; the delivery's claim
    # (probes.alerts.notify) makes that run send only if the first did not finish.
    acks_late=True,
    max_retries=_NOTIFY_MAX_ATTEMPTS - 1,
    time_limit=90,
    soft_time_limit=80,
)
def deliver_notification(self, delivery_id: int, token: str | None = None) -> str | None:
    """One notification of an incident to one channel (probes.alerts.notify.deliver), retried with
    exponential backoff and jitter while attempts are left."""
    from probes.alerts import notify
    from probes.fleet.maintenance import refused

    # Sent by the central side only (probes.fleet.maintenance). A retry carries the first send's token,
    # so the token stays good for a day, far longer than every attempt's backoff together.
    if refused(notify.TASK, token, max_age_s=24 * 3600, delivery_id=delivery_id):
        return None
    try:
        return notify.deliver(delivery_id)
    except notify.NotificationFailed as failed:
        # The backoff is read per retry, so LATENCY_NOTIFY_RETRY_BACKOFF_MAX applies without a restart.
        raise self.retry(exc=failed, countdown=notify.retry_countdown(self.request.retries)) from None


# The objectives' tasks live with them; importing them here registers them where Celery's autodiscovery looks.
from probes.slos.tasks import rebuild_objective  # noqa: E402, F401
