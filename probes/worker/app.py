"""The region worker's Celery app, built without Django.

A region host has the broker URL, its region's credential and the providers'
keys, nothing of the site's: so this app is configured from WorkerConfig,
not from django.conf.settings, and registers only the region's task
(probes.worker.tasks). The settings mirror latency/settings.py's CELERY_*
where they concern a region worker."""

from __future__ import annotations

from celery import Celery, signals

from probes.worker.broker import quiet_cancel_warning
from probes.worker.config import WorkerConfig

# Cancelling runs in flight at a connection loss is off on purpose (configure() says why).
signals.celeryd_after_setup.connect(quiet_cancel_warning, weak=False)

app = Celery("latency-region", amqp="probes.worker.broker:AMQP", set_as_current=False)


def configure(config: WorkerConfig) -> Celery:
    app.conf.update(
        broker_url=config.broker_url,
        broker_use_ssl=config.broker_use_ssl(),
        broker_transport_options=config.transport_options(),
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # reconnect forever
        timezone="UTC",
        enable_utc=True,
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        result_backend=None,
        task_ignore_result=True,
        # A run is acknowledged only once its measurement is handed to the
        # ingest queue; a worker killed mid-probe has it delivered again.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # Off: the worker runs on Celery's thread pool (cli.worker_argv), which cannot terminate a job, and
        # cancelling the runs in flight when the broker drops raised NotImplementedError("does not implement
        # kill_job") and stopped the worker for good. A run in flight finishes and hands its measurement to
        # ingest; its unacknowledged message comes back after the reconnect, and the second result of the same
        # slot is ignored by ingest's insert-or-ignore (one measurement per probe, region and slot).
        worker_cancel_long_running_tasks_on_connection_loss=False,
        # Off too (latency/settings.py says why): restoring the prefetch count after a connection loss with runs in
        # flight calls basic.qos from the pool thread that acknowledges a run, and on RabbitMQ that thread then
        # reads the consumer's connection alongside its loop, which could stop the worker taking orders for good.
        worker_enable_prefetch_count_reduction=False,
        # No remote control over the broker: a region host holds a broker
        # login, and pidbox broadcasts (shutdown, rate limits, ...) would let
        # any other holder steer it. Nor does it need the pidbox queues'
        # permissions on RabbitMQ.
        worker_enable_remote_control=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
        # Survive any message on the region's queue (probes/worker/broker.py).
        worker_consumer="probes.worker.broker:Consumer",
        include=["probes.worker.tasks"],
    )
    return app


def central_route(queue: str) -> dict:
    """send_task options addressing a central queue (`ingest`, `health`) from a region host.

    On RabbitMQ through the exchange of the same name, which the central ingest worker declares, and with
    nothing declared: a region's user may publish to those two exchanges but may neither declare the central
    side's queues nor use the default exchange, which reaches any queue by name (maintenance, another region's
    runs); docs/guides/add-a-region.md ("Broker over TLS") has the permissions, tests/regions_e2e proves them.
    On Redis, which has no such permissions, the default route: it delivers to the queue by name even where no
    consumer ever bound the exchange (a freshly flushed Redis), where a named exchange would drop the message."""
    if str(app.conf.broker_url).split("://", 1)[0] in ("amqp", "amqps", "pyamqp"):
        return {"queue": queue, "exchange": queue, "routing_key": queue, "declare": []}
    return {"queue": queue}
