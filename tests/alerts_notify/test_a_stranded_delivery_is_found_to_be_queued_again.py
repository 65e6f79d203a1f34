"""A delivery whose task is gone (its run died holding the claim, or it is pending long after every
retry would have run) is found by notify.stranded(), for the evaluator to queue again; one being
sent now, one waiting for its retry, one sent or failed is not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from probes.alerts import notify
from probes.alerts.models import Delivery
from tests.alerts_notify.conftest import make_incident
from tests.factories import NotificationChannelFactory

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def delivery(incident, name: str, **fields) -> Delivery:
    return Delivery.objects.create(
        incident=incident,
        transition=Delivery.OPENED,
        channel=NotificationChannelFactory(name=name),
        **{"created_at": NOW - timedelta(hours=1), **fields},
    )


def test_only_the_stranded_deliveries_are_found(db):
    incident = make_incident()
    died = delivery(incident, "died", state=Delivery.SENDING, attempts=2, claimed_until=NOW - timedelta(seconds=1))
    forgotten = delivery(incident, "forgotten", state=Delivery.PENDING, attempts=1)
    delivery(incident, "sending now", state=Delivery.SENDING, attempts=1, claimed_until=NOW + timedelta(minutes=1))
    delivery(
        incident, "waiting for its retry", state=Delivery.PENDING, attempts=1, created_at=NOW - timedelta(minutes=5)
    )
    delivery(incident, "sent", state=Delivery.SENT, attempts=1, sent_at=NOW - timedelta(minutes=59))
    delivery(incident, "failed", state=Delivery.FAILED, attempts=notify.MAX_ATTEMPTS)
    delivery(incident, "withheld", state=Delivery.WITHHELD)

    assert notify.stranded(NOW) == [died.pk, forgotten.pk]
