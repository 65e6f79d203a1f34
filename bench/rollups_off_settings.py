"""Django settings for bench/dashboard.py --without: the site's settings with the rollup kinds named in
DASHBENCH_ROLLUPS_OFF (comma-separated names of probes.rollups.catalogue.SWITCHABLE) switched off for readers, so a
uvicorn started with DJANGO_SETTINGS_MODULE=bench.rollups_off_settings answers as if those kinds did not exist. Bench
tooling: the site never reads DASHBENCH_ROLLUPS_OFF."""

import os

from latency.settings import *  # noqa: F403

LATENCY_ROLLUPS_OFF = tuple(name for name in os.environ.get("DASHBENCH_ROLLUPS_OFF", "").split(",") if name)
