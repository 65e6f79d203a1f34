"""The Celery app. Queues and routes are declared here as the pipeline grows."""

import os
from urllib.parse import urlsplit

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")

app = Celery("latency")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Workers survive any message on their queues (latency/broker.py): the Redis
# transport and Celery's consumer, subclassed where a message is decoded and
# handed over. Only for Redis URLs, the one broker the project supports.
if urlsplit(app.conf.broker_url or "").scheme in ("redis", "rediss"):
    app.conf.broker_transport = "latency.broker:Transport"
app.conf.worker_consumer = "latency.broker:Consumer"
app.autodiscover_tasks()
