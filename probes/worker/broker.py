"""Workers survive whatever lands on their queues.

kombu's Redis transport pops a message (BRPOP) and decodes it, JSON and then
its own envelope, before Celery sees it; an error there (one `redis-cli lpush
ingest 'garbage{'`) escapes the worker's event loop and Celery exits with
"Unrecoverable error". Celery's consumer handles later failures itself
(undecodable body, unknown task, invalid task) but logs a traceback and the
body for each, and some shapes (a task message without an id, a body that is
not [args, kwargs, embed]) still escape it. So, at the two places where a
popped message is handled:

- Channel decodes the popped item itself, guarded (the decode is made
  overridable by probes.compat.kombu, which holds every reach into kombu's
  Redis transport);
- Transport guards the hand-over of one decoded message to the consumer
  (kombu's envelope, Celery's request): what fails there is that message's
  fault, so it is rejected, unless the error is the broker connection's
  (that still propagates, and the worker reconnects);
- Consumer replaces Celery's four bad-message handlers with one log line and
  the same rejection.

Rejected messages go to probes.worker.letters.reject_message: the ingest worker
(it has the database) keeps them as dead letters; a region worker logs them
once, truncated, and drops them. Republishing them to the ingest side was
the alternative; we do not, because what sits on a region queue is a run
order, not a measurement: dropping one loses no data (the scheduler publishes
the next slot), while a publish from inside the consumer's loop would block
it on the broker, and would feed a broker that mangles messages its own
garbage back.

Wired in latency/celery.py (central) and probes/worker/app.py (region
hosts): the app's AMQP class hands out a Connection that picks our
Transport wherever kombu would pick its Redis one (so redis://
and rediss:// URLs keep their meaning, TLS included), and the
`worker_consumer` setting names our Consumer. Subclasses through Celery's
own extension points, no monkeypatching.
"""

from __future__ import annotations

import logging
import warnings

import kombu
from celery import signals
from celery.app.amqp import AMQP as CeleryAMQP
from celery.exceptions import CPendingDeprecationWarning
from celery.worker.consumer import Consumer as CeleryConsumer

from probes.compat import kombu as kombu_compat
from probes.worker.letters import keeps_letters, reject_message

log = logging.getLogger(__name__)


class Channel(kombu_compat.Channel):
    def decode(self, item: bytes, queue: str):
        """The message in a popped item, or REJECTED when it is not JSON:
        then it is rejected here, since it is already off the queue."""
        try:
            return super().decode(item, queue)
        except (ValueError, RecursionError) as exc:
            reject_message(
                item,
                source=queue,
                reason=f"not a broker message (not JSON: {str(exc)[:200]})",
                keep=keeps_letters(self.active_queues),
                raw=True,
            )
            return kombu_compat.REJECTED


def _stamp_queue(message, queue: str) -> None:
    """Make the routing key the task sees the queue the message was popped
    from. On Redis the routing key is whatever the publisher wrote into the
    message, and a region worker checks that a run order came from its
    region's own queue (probes.worker.orders): the publisher's word is no
    proof of that, the list it was popped from is. (For any message the
    central scheduler sent they are the same.)"""
    properties = message.get("properties") if isinstance(message, dict) else None
    info = properties.get("delivery_info") if isinstance(properties, dict) else None
    if isinstance(info, dict):  # a message without one is rejected as it was
        info["routing_key"] = queue


class Transport(kombu_compat.Transport):
    Channel = Channel

    def before_delivery(self, message, queue: str) -> None:
        _stamp_queue(message, queue)

    def undeliverable(self, message, queue: str, exc: Exception) -> None:
        consumed = {q for chan in self.channels for q in getattr(chan, "active_queues", ())}
        reject_message(
            message,
            source=queue,
            reason=f"not a task message this worker can read ({type(exc).__name__}: {str(exc)[:200]})",
            keep=keeps_letters(consumed),
        )


def _envelope(message) -> dict:
    """The message as received, its body decoded from the transport's base64
    so a reader of the dead letter can see it."""
    body = message.body
    if isinstance(body, (bytes, bytearray, memoryview)):
        body = bytes(body).decode("utf-8", "backslashreplace")
    return {
        "headers": message.headers,
        "properties": message.properties,
        "content-type": message.content_type,
        "content-encoding": message.content_encoding,
        "body": body,
    }


class Consumer(CeleryConsumer):
    """Celery's consumer, with bad messages rejected in one line each (kept
    as dead letters on the ingest worker) instead of logged with a traceback."""

    def _reject(self, message, reason: str) -> None:
        info = message.delivery_info or {}
        consumed = [q.name for q in getattr(self.task_consumer, "queues", ()) or ()]
        key = info.get("routing_key")
        # The routing key is the message's own claim: trusted only when it
        # names a queue this worker consumes.
        source = key if key in consumed else f"{','.join(consumed) or '?'} (routing key {str(key)[:100]!r})"
        reject_message(_envelope(message), source=source, reason=reason, keep=keeps_letters(consumed))

    def on_decode_error(self, message, exc):
        self._reject(message, f"the message body cannot be decoded ({type(exc).__name__}: {str(exc)[:200]})")
        message.ack()

    def on_unknown_message(self, body, message):
        self._reject(message, "not a Celery task message (no task name)")
        message.reject_log_error(log, self.connection_errors)
        signals.task_rejected.send(sender=self, message=message, exc=None)

    def on_unknown_task(self, body, message, exc):
        name = (message.headers or {}).get("task") if isinstance(message.headers, dict) else None
        self._reject(message, f"unknown task {str(name)[:200]!r}")
        message.reject_log_error(log, self.connection_errors)
        signals.task_rejected.send(sender=self, message=message, exc=exc)

    def on_invalid_task(self, body, message, exc):
        self._reject(message, f"invalid task message ({type(exc).__name__}: {str(exc)[:200]})")
        message.reject_log_error(log, self.connection_errors)
        signals.task_rejected.send(sender=self, message=message, exc=exc)


class Connection(kombu.Connection):
    def get_transport_cls(self):
        # The URL still chooses the transport (and TLS for rediss://); only
        # kombu's own Redis transport is swapped for the guarded one.
        transport_cls = super().get_transport_cls()
        return Transport if kombu_compat.is_redis_transport(transport_cls) else transport_cls


class AMQP(CeleryAMQP):
    Connection = Connection
    BrokerConnection = Connection


def quiet_cancel_warning(**_signal) -> None:
    """Celery 5 warns at every connection loss that cancelling the tasks in flight will become the default. Both
    apps turn it off on purpose (the thread pool cannot cancel a task: probes.worker.app, latency/settings.py), so
    the warning would only fill the workers' logs.

    Connected to celeryd_after_setup: the worker's logging setup adds an "always" filter for Celery's
    deprecation warnings, in front of any made before it (a filter set at import never applied)."""
    warnings.filterwarnings(
        "ignore",
        message=r"\s*In Celery 5\.1 we introduced an optional breaking change",
        category=CPendingDeprecationWarning,
    )
