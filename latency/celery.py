"""The Celery app. Queues and routes are declared here as the pipeline grows."""

import os

from celery import Celery, signals

from probes.worker.broker import quiet_cancel_warning

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")

# Workers survive any message on their queues (latency/broker.py): the Redis
# transport and Celery's consumer, subclassed where a message is decoded and
# handed over.
app = Celery("latency", amqp="latency.broker:AMQP")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.worker_consumer = "latency.broker:Consumer"
app.autodiscover_tasks()
# Tasks in flight are not cancelled when the broker drops (latency/settings.py says why).
signals.celeryd_after_setup.connect(quiet_cancel_warning, weak=False)
