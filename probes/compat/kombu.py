"""kombu's private names (supported: kombu >=5.7.0,<5.8): its Redis transport, with the two places where a popped
message is handled made overridable.

- Channel: `_brpop_read` and `_get` are kombu 5.7.0's with only the decode of the popped item moved into `decode`,
  which may answer REJECTED (the item is already off the queue: nothing is delivered, the poll goes on);
- Transport: `_deliver` hands one decoded message to the consumer; `before_delivery` sees the message first, and
  `undeliverable` gets it (acknowledged) when the hand-over fails for a reason that is the message's, not the
  broker connection's (that one still propagates, and the worker reconnects).

What to do with a rejected message is probes.worker.broker's; this module only holds what reaches into kombu.
"""

from __future__ import annotations

from queue import Empty
from typing import Any

from probes.compat import require

# Checked before kombu's modules are imported, so a release that moved them fails with this message.
MINIMUM, BELOW = "5.7.0", "5.8"
VERSION = require("kombu", MINIMUM, BELOW, module=__name__)

from kombu.transport import redis  # noqa: E402
from kombu.utils.encoding import bytes_to_str  # noqa: E402
from kombu.utils.json import loads  # noqa: E402

REJECTED = object()  # not None: a JSON null is a message too, and a bad one


class Channel(redis.Channel):
    def decode(self, item: bytes, queue: str) -> Any:
        """The message in a popped item, or REJECTED (then it was dealt with here: it is already off the queue)."""
        return loads(bytes_to_str(item))

    # kombu 5.7.0's Channel._brpop_read, but for self.decode.
    def _brpop_read(self, **options):
        try:
            try:
                dest__item = self.client.parse_response(self.client.connection, "BRPOP", **options)
            except self.connection_errors:
                # if there's a ConnectionError, disconnect so the next
                # iteration will reconnect automatically.
                self.client.connection.disconnect()
                raise
            if dest__item:
                dest, item = dest__item
                dest = bytes_to_str(dest).rsplit(self.sep, 1)[0]
                self._queue_cycle.rotate(dest)
                message = self.decode(item, dest)
                if message is REJECTED:
                    raise Empty()
                self.connection._deliver(message, dest)
                return True
            else:
                raise Empty()
        finally:
            self._in_poll = None
            self._flush_brpop_reauth()

    # kombu 5.7.0's Channel._get, but for self.decode.
    def _get(self, queue):
        with self.conn_or_acquire() as client:
            for pri in self.priority_steps:
                item = client.rpop(self._q_for_pri(queue, pri))
                if item:
                    self._maybe_update_queues_expire(client, queue)
                    message = self.decode(item, queue)
                    if message is REJECTED:
                        raise Empty()
                    return message

            self._maybe_update_queues_expire(client, queue)
            raise Empty()


class Transport(redis.Transport):
    Channel = Channel

    def before_delivery(self, message: Any, queue: str) -> None:
        """Called with each decoded message before it is handed to the consumer."""

    def undeliverable(self, message: Any, queue: str, exc: Exception) -> None:
        """Called (the message already acknowledged) when handing a message over failed because of the message."""
        raise exc

    def _deliver(self, message, queue):
        self.before_delivery(message, queue)
        try:
            super()._deliver(message, queue)
        except self._broker_errors():
            raise
        except Exception as exc:
            self._settle(message)
            self.undeliverable(message, queue, exc)

    def _broker_errors(self) -> tuple[type[BaseException], ...]:
        # kombu counts KeyError among Redis connection errors (some redis-py
        # versions raise it from a broken connection), but while a message
        # is handed over a KeyError is the message's: a task message without
        # an id, say. Re-raised as a connection error, it made the consumer
        # reconnect and redeliver the same message until Celery gave up.
        return tuple(e for e in (*self.connection_errors, *self.channel_errors) if e is not KeyError)

    def _settle(self, message) -> None:
        """Acknowledge a rejected message if kombu already holds it as
        unacknowledged; otherwise Redis would deliver it again after the
        visibility timeout, and again, forever."""
        properties = message.get("properties") if isinstance(message, dict) else None
        tag = properties.get("delivery_tag") if isinstance(properties, dict) else None
        if tag is None:
            return
        for chan in self.channels:
            try:
                chan.qos.get(tag)
            except (KeyError, TypeError, AttributeError):
                continue
            chan.qos.ack(tag)


def is_redis_transport(transport_cls: type) -> bool:
    """Whether kombu picked its own Redis transport (for redis:// and rediss:// URLs)."""
    return transport_cls is redis.Transport
