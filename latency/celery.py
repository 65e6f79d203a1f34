"""The Celery app. Queues and routes are declared here as the pipeline grows."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")

app = Celery("latency")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
