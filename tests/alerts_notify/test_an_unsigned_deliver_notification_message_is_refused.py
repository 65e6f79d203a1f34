"""Anyone with the broker URL (a region host) could queue probes.deliver_notification to make the
central site post to its channels; it runs only when the central side signed it. Without the
signature, or with a forged one, the worker refuses it (a dead letter with the reason) and nothing
is sent; the same delivery queued by the central side (notify.queue) is sent."""

from __future__ import annotations

import pytest
from django.core import signing

from probes.alerts import notify
from probes.alerts.models import Delivery
from probes.fleet.maintenance import SALT
from probes.models import DeadLetter
from tests.support import wait_for

pytestmark = pytest.mark.timeout(180)


def test_unsigned_and_forged_deliveries_are_refused_and_the_central_one_is_sent(
    pipeline, test_broker, delivery_to, json_receiver
):
    # The receiver is on loopback, which the address policy refuses unless told otherwise.
    worker = pipeline.start_ingest(LATENCY_NOTIFY_ALLOW_PRIVATE="true")
    wait_for(lambda: "ready." in worker.log(), 60, message="the ingest worker to be ready")
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))
    forged = signing.dumps({"task": notify.TASK}, key="a region host's guess", salt=SALT)

    pipeline.app.send_task(notify.TASK, kwargs={"delivery_id": delivery.pk}, queue="maintenance")
    pipeline.app.send_task(notify.TASK, kwargs={"delivery_id": delivery.pk, "token": forged}, queue="maintenance")

    wait_for(lambda: DeadLetter.objects.count() >= 2, 60, message="two refusals kept")
    reasons = sorted(letter.reason for letter in DeadLetter.objects.all())
    assert reasons == [
        f"maintenance task {notify.TASK} arrived without the central signature: not run",
        f"maintenance task {notify.TASK} carries a bad signature (not the central site's): not run",
    ]
    assert {letter.source for letter in DeadLetter.objects.all()} == {"maintenance"}
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.PENDING, 0)
    assert json_receiver.posts == []

    notify.queue([delivery.pk])
    wait_for(lambda: len(json_receiver.posts) == 1, 60, message="the central side's delivery to arrive")
    wait_for(lambda: Delivery.objects.filter(pk=delivery.pk, state=Delivery.SENT).exists(), 30, message="it to be sent")
