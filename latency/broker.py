"""The guarded broker transport and consumer, as the central app names them
(latency/celery.py). They live in probes/worker/broker.py, which a region
host imports without Django."""

from probes.worker.broker import AMQP, Channel, Connection, Consumer, Transport

__all__ = ["AMQP", "Channel", "Connection", "Consumer", "Transport"]
