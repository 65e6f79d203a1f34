"""The region worker's one task: run a scheduled slot and hand its
measurement, signed with the region's credential, to the ingest queue.
Registered on the region app only (probes/worker/app.py); no Django."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

from celery.exceptions import Reject

from probes.worker import context
from probes.worker.app import app, central_route
from probes.worker.config import MAX_PROBE_TIMEOUT_S
from probes.worker.letters import INGEST_QUEUE
from probes.worker.protocol import RESULTS, Refused, seal

log = logging.getLogger("probes.tasks")

INGEST_TASK = "probes.ingest"
RUN_TASK = "probes.run_slot"


def publish_results(region: str, payloads: list[dict]) -> None:
    """One signed `results` message for a region's measurements."""
    credential = context.credential(region)
    app.send_task(
        INGEST_TASK,
        args=[seal(RESULTS, region, credential, payloads)],
        **central_route(INGEST_QUEUE),
        retry=True,
        retry_policy={"max_retries": 20, "interval_start": 0.5, "interval_step": 1, "interval_max": 5},
    )


@app.task(
    name=RUN_TASK,
    shared=False,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,  # a failed probe is a measurement, never a retry
    soft_time_limit=MAX_PROBE_TIMEOUT_S + 20,
    time_limit=MAX_PROBE_TIMEOUT_S + 30,
    ignore_result=True,
    bind=True,
)
def run_slot(self, *args, **kwargs) -> str:
    # Any arguments are accepted and checked by verify_order, so that a
    # malformed or forged order is counted (and its kind logged once), not a traceback.
    from probes.engine import ProbeSpec
    from probes.runtime import RunHandedBack, result_batcher, run_probe
    from probes.worker.orders import verify_order

    queue = (self.request.delivery_info or {}).get("routing_key") or "?"
    try:
        message, scheduled, interval = verify_order(args, kwargs, queue=str(queue), now=datetime.now(UTC))
        spec = ProbeSpec.from_dict(message["spec"])
    except Refused as exc:
        context.refused_order(str(queue), exc)
        return "rejected"
    except (TypeError, ValueError) as exc:
        # Signed by the central site, yet not a spec this engine reads: a release mismatch, said once.
        context.refused_order(str(queue), Refused(f"a signed run order whose spec cannot be read: {exc}", why="spec"))
        return "rejected"
    region = message["region"]
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    late = datetime.now(UTC) - scheduled
    if late > timedelta(seconds=interval) and not redelivered:
        # Queued while no worker listened: firing it now would be a burst of
        # stale runs. A redelivery (its worker died mid-run) still runs.
        log.info(
            "skipping stale slot %s of probe %s (%.0f s late)", scheduled, message["probe_id"], late.total_seconds()
        )
        return "stale"
    context.run_started(region)
    try:
        hold_until(scheduled)
        try:
            result = run_probe(spec)
        except RunHandedBack:
            # The worker is stopping (probes.runtime.celery_health): the run goes back to its queue, marked
            # redelivered, so that the next worker runs it however late (see the stale check above).
            log.info(
                "handing slot %s of probe %s back to the broker: the worker is stopping", scheduled, message["probe_id"]
            )
            raise Reject("the worker is stopping", requeue=True) from None
        payload = {
            "probe_id": message["probe_id"],
            "target_id": message["target_id"],
            "region_id": message["region_id"],
            "scheduled_for": message["scheduled_for"],
            "worker": self.request.hostname or context.node_name(),
            "result": result.to_dict(),
        }
        # Published before this task is acknowledged: a crash in between means a
        # second run of the slot, which the unique key folds into one row.
        result_batcher(publish_results).submit(region, payload)
    finally:
        context.run_finished(region)
    return result.outcome


# The scheduler sends each order up to a second before its slot (probes.scheduling.LEAD_S), so that
# reading, publishing and delivering it do not delay the start. An order further ahead than this means the
# clocks disagree: it runs at once rather than parking a thread on a wrong clock.
MAX_HOLD_S = 5.0


def hold_until(scheduled: datetime) -> None:
    """Wait, in this run's own thread, until the slot's moment."""
    wait = (scheduled - datetime.now(UTC)).total_seconds()
    if 0 < wait <= MAX_HOLD_S:
        time.sleep(wait)
