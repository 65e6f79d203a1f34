"""A region host has the package but not the site: the worker's modules
import without DJANGO_SETTINGS_MODULE, read no Django settings and load
nothing of the central side (latency.*, the models, the database)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT

SCRIPT = """
import sys
import probes.worker.cli, probes.worker.app, probes.worker.tasks, probes.worker.heartbeat, probes.worker.broker
from probes.worker.app import configure
from probes.worker.config import load
configure(load(region="af-lagos", env={"LATENCY_BROKER_URL": "redis://127.0.0.1:1/0",
                                       "LATENCY_REGION_KEY": "la2_" + "C" * 43 + "." + "A" * 43}))
from django.conf import settings
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "latency" or m in (
    "probes.models", "probes.deadletters", "probes.ingest", "django.db.models", "django.conf.urls"))
print("configured" if settings.configured else "not configured", loaded)
"""


def test_the_region_workers_modules_need_no_django_settings():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "not configured []", done.stdout
