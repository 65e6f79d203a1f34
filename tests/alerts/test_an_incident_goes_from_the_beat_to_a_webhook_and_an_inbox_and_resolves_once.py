"""The whole path, with real parts: the central beat's signed `probes.evaluate_alerts` runs on the ingest worker,
the pass fires a rule that has been pending for a window, and Apprise delivers the incident to a JSON webhook and
to an SMTP server on loopback. Once the calls are normal again for a window, exactly one "resolved" notification
reaches each."""

from datetime import UTC, datetime, timedelta

import pytest

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Delivery, Incident
from tests.factories import AlertRuleFactory, NotificationChannelFactory
from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)


def test_a_breach_is_notified_by_webhook_and_email_and_its_recovery_once(
    pipeline, test_broker, world, json_receiver, smtp_receiver
):
    from latency.celery import app
    from probes.scheduling import SlotScheduler

    now = datetime.now(UTC).replace(microsecond=0)
    lagos, nairobi, frankfurt = world.regions
    world.baseline_week(until=now)
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, now - timedelta(minutes=25), now, seed=i, server_wait=1100.0)
    world.calls(frankfurt, now - timedelta(minutes=25), now + timedelta(minutes=30), seed=7)
    hook = NotificationChannelFactory(name="on-call webhook", url=json_receiver.apprise_url("/alerts"))
    mail = NotificationChannelFactory(name="on-call mail", url=smtp_receiver.apprise_url(to="oncall@example.com"))
    rule = AlertRuleFactory(
        name="TTFT p95 over 1.5 s", target=world.target, threshold_ms=1500.0, min_regions=2, channels=[hook, mail]
    )
    run_pass(now - timedelta(minutes=10))  # pending since then: a window ago when the beat's pass runs
    assert AlertState.objects.get(rule=rule).status == AlertState.PENDING

    # The receivers are on loopback, which the address policy refuses unless told otherwise.
    ingest = pipeline.start_ingest(LATENCY_NOTIFY_RETRY_BACKOFF_MAX="1", LATENCY_NOTIFY_ALLOW_PRIVATE="true")
    wait_for(lambda: "ready." in ingest.log(), 60, message="the ingest worker to be ready")
    scheduler = SlotScheduler(app=app)
    try:
        scheduler.apply_entry(scheduler.schedule["evaluate-alerts"], producer=scheduler.producer)
    finally:
        scheduler.close()

    (fired,) = json_receiver.wait_for_posts(1, timeout=90)
    (email,) = smtp_receiver.wait_for_messages(1, timeout=90)
    incident = Incident.objects.get()
    assert fired.path == "/alerts"
    assert fired.body["title"].startswith("[FIRING] TTFT p95 over 1.5 s: gpt-eu")
    assert incident.summary in fired.body["message"]
    assert "[FIRING]" in email.subject and "Lagos and Nairobi" in email.body
    assert incident.scope == "regional" and incident.phase == "server_wait"

    # Normal again from now on; two passes a window apart resolve it.
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, now, now + timedelta(minutes=30), seed=10 + i)
    run_pass(now + timedelta(minutes=11))
    run_pass(now + timedelta(minutes=21))
    run_pass(now + timedelta(minutes=22))

    posts = json_receiver.wait_for_posts(2, timeout=90)
    smtp_receiver.wait_for_messages(2, timeout=90)
    wait_for(
        lambda: set(Delivery.objects.values_list("state", flat=True)) == {Delivery.SENT},
        60,
        message="every delivery to be marked sent",
    )
    assert [p.body["title"].split("]")[0] for p in posts] == ["[FIRING", "[RESOLVED"]
    assert Delivery.objects.count() == 4  # two transitions x two channels, each sent once
    assert len(json_receiver.posts) == 2 and len(smtp_receiver.messages) == 2
    kinds = list(Incident.objects.get().events.values_list("kind", flat=True))
    assert kinds.count("notified") == 4 and kinds[0] == "opened" and "resolved" in kinds
