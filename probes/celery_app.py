"""The site's Celery app, found through the setting LATENCY_CELERY_APP ("module:attribute").

probes is the Django app and latency the project around it: the project names its app in its settings and
probes looks it up there, so probes imports nothing from latency
(tests/boundaries/test_probes_imports_nothing_from_latency.py).
Looked up by name rather than through celery.current_app, which follows whichever Celery app was made last in the
process (a region worker's app, in tests that run both).
"""

from __future__ import annotations

from celery import Celery
from celery.utils.imports import symbol_by_name


def site_app() -> Celery:
    from django.conf import settings

    return symbol_by_name(settings.LATENCY_CELERY_APP)
