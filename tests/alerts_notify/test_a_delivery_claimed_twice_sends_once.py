"""A delivery task delivered twice (a redelivered message, a duplicate queue() call) sends once:
the second run finds the delivery sent, or claimed by the first, and sends nothing. Two runs at
the same moment in two threads: one claims, one skips. A claim whose run died (its time is up)
is taken over."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from probes.alerts import notify
from probes.alerts.models import Delivery, IncidentEvent


def test_a_second_run_after_the_first_sends_nothing(delivery_to, json_receiver):
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))

    assert notify.deliver(delivery.pk) == notify.SENT
    assert notify.deliver(delivery.pk) == notify.SKIPPED

    assert len(json_receiver.posts) == 1
    assert IncidentEvent.objects.filter(incident=delivery.incident, kind=IncidentEvent.NOTIFIED).count() == 1


def test_two_runs_at_once_send_once(delivery_to, json_receiver, transactional_db):
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def run() -> None:
        from django.db import connection

        try:
            start.wait(timeout=10)
            outcomes.append(notify.deliver(delivery.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(outcomes) == [notify.SENT, notify.SKIPPED]
    assert len(json_receiver.posts) == 1
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.SENT, 1)


def test_a_claim_whose_run_died_is_taken_over(delivery_to, json_receiver):
    delivery = delivery_to(json_receiver.apprise_url("/alerts"))
    # A run claimed it and was killed before it could say how the send went.
    Delivery.objects.filter(pk=delivery.pk).update(
        state=Delivery.SENDING, attempts=1, claimed_until=datetime.now(UTC) + timedelta(minutes=1)
    )
    assert notify.deliver(delivery.pk) == notify.SKIPPED  # still claimed
    Delivery.objects.filter(pk=delivery.pk).update(claimed_until=datetime.now(UTC) - timedelta(seconds=1))

    assert notify.deliver(delivery.pk) == notify.SENT

    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == (Delivery.SENT, 2)
    assert len(json_receiver.posts) == 1
