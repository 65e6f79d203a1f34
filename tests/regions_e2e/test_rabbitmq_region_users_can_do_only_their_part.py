"""The RabbitMQ permissions docs/guides/add-a-region.md gives a region's user (devtools.brokers.region_permissions)
let it do its part and nothing more: consume its own queue and its workers' reply queues, publish to the central
side's `ingest` and `health` exchanges; never read, declare or delete those queues, never publish through
the default exchange (which reaches any queue: maintenance, another region's runs), never touch another
region's queues."""

import pytest
from kombu import Connection, Exchange, Producer, Queue

from probes.worker.protocol import region_queue, reply_queue

pytestmark = pytest.mark.timeout(180)

INSTANCE = "0123456789abcdef0123456789abcdef"


def _central_queues(url: str) -> None:
    # What the ingest worker declares when it starts (Celery names each queue's exchange after it).
    with Connection(url) as conn:
        channel = conn.channel()
        for name in ("ingest", "health", "maintenance", region_queue("test-lagos"), region_queue("test-mumbai")):
            Queue(name, Exchange(name, "direct"), routing_key=name, channel=channel).declare()


def _attempt(url: str, action) -> str | None:
    """None when the broker allowed the action, else its refusal. Publisher confirms make a refused
    publish fail here, not on some later call."""
    from amqp.exceptions import AccessRefused

    with Connection(url, transport_options={"confirm_publish": True}) as conn:
        channel = conn.channel()
        try:
            action(channel)
        except AccessRefused as exc:
            return str(exc)
    return None


def _publish(exchange: str, routing_key: str):
    return lambda channel: Producer(channel).publish({"x": 1}, exchange=exchange, routing_key=routing_key)


def test_a_region_user_may_consume_its_queues_and_publish_only_results_and_heartbeats(rabbitmq):
    _central_queues(rabbitmq.central_url)
    lagos = rabbitmq.add_region("test-lagos")
    own_reply = reply_queue("test-lagos", INSTANCE)

    allowed = {
        "publish results": _publish("ingest", "ingest"),
        "publish heartbeats": _publish("health", "health"),
        "declare its queue as Celery does": lambda ch: Queue(
            region_queue("test-lagos"), Exchange(region_queue("test-lagos"), "direct"), channel=ch
        ).declare(),
        "consume its queue": lambda ch: ch.basic_get(region_queue("test-lagos")),
        "declare and consume its reply queue": lambda ch: (
            Queue(own_reply, channel=ch, auto_delete=True).declare(),
            ch.basic_get(own_reply),
        ),
    }
    refused = {
        "read the ingest queue": lambda ch: ch.basic_get("ingest"),
        "declare the ingest queue": lambda ch: Queue(
            "ingest", Exchange("ingest", "direct"), routing_key="ingest", channel=ch
        ).declare(),
        "delete the ingest queue": lambda ch: ch.queue_delete("ingest"),
        "purge the health queue": lambda ch: ch.queue_purge("health"),
        "publish maintenance through the default exchange": _publish("", "maintenance"),
        "publish to its own queue through the default exchange": _publish("", region_queue("test-lagos")),
        "publish runs for another region": _publish(region_queue("test-mumbai"), region_queue("test-mumbai")),
        "consume another region's queue": lambda ch: ch.basic_get(region_queue("test-mumbai")),
        "declare another region's reply queue": lambda ch: Queue(
            reply_queue("test-mumbai", INSTANCE), channel=ch
        ).declare(),
    }
    assert {what: _attempt(lagos, action) for what, action in allowed.items()} == dict.fromkeys(allowed)
    outcomes = {what: _attempt(lagos, action) for what, action in refused.items()}
    assert [what for what, refusal in outcomes.items() if refusal is None] == []
    assert all("ACCESS_REFUSED" in refusal for refusal in outcomes.values()), outcomes
    assert rabbitmq.queue_lengths()["ingest"] == 1 and rabbitmq.queue_lengths()["health"] == 1
