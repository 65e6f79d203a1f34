"""Through the real pipeline: queue() sends the signed task to the maintenance queue, the ingest
worker (which consumes it) runs it; the receiver answers 503 twice, so Celery retries the task with
its backoff (LATENCY_NOTIFY_RETRY_BACKOFF_MAX set low here) and the third attempt is sent. The
timeline has the two failures and the notification, and the worker's log names no secret."""

from __future__ import annotations

import pytest

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent
from tests.support import wait_for

pytestmark = pytest.mark.timeout(180)


def test_a_receiver_that_fails_twice_gets_the_third_attempt(pipeline, test_broker, delivery_to, json_receiver):
    # The receiver is on loopback, which the address policy refuses unless told otherwise.
    worker = pipeline.start_ingest(LATENCY_NOTIFY_RETRY_BACKOFF_MAX=1, LATENCY_NOTIFY_ALLOW_PRIVATE="true")
    wait_for(lambda: "ready." in worker.log(), 60, message="the ingest worker to be ready")
    delivery = delivery_to(json_receiver.apprise_url("/hook/TOKENSECRET123", password="PASSWORDSECRET"))
    json_receiver.fail_next(2, status=503)

    notify.queue([delivery.pk])

    wait_for(
        lambda: Delivery.objects.filter(pk=delivery.pk, state=Delivery.SENT).exists(),
        60,
        message="the delivery to be sent on its third attempt",
    )
    delivery.refresh_from_db()
    assert delivery.attempts == 3
    assert [p.status for p in json_receiver.posts] == [503, 503, 200]
    events = IncidentEvent.objects.filter(incident=delivery.incident).order_by("id")
    assert [(e.kind, e.attempt) for e in events] == [
        (IncidentEvent.NOTIFICATION_FAILED, 1),
        (IncidentEvent.NOTIFICATION_FAILED, 2),
        (IncidentEvent.NOTIFIED, 3),
    ]
    log = worker.log()
    assert log.count("probes.deliver_notification") >= 3 and "retry: Retry in" in log
    assert "TOKENSECRET123" not in log and "PASSWORDSECRET" not in log
