"""Writing rollups: building (build.py), the advisory locks that keep them
consistent with ingest (locks.py), retention (prune.py), and the UTC periods
both writers and readers cut time into (periods.py).

Reading them is probes.readings' job alone: this package knows how rollups
are made, not how a figure is drawn from them.
"""

from probes.rollups.build import rebuild_hour, rebuild_range, rollup_stale_hours
from probes.rollups.locks import LockSpace, count_ingest, lock_day, read_versions, unchanged_hours
from probes.rollups.periods import DAY, HOUR, ceil_hour, floor_day, floor_hour, hour_runs, hours_between
from probes.rollups.prune import prune_raw

__all__ = [
    "DAY",
    "HOUR",
    "LockSpace",
    "ceil_hour",
    "count_ingest",
    "floor_day",
    "floor_hour",
    "hour_runs",
    "hours_between",
    "lock_day",
    "prune_raw",
    "read_versions",
    "rebuild_hour",
    "rebuild_range",
    "rollup_stale_hours",
    "unchanged_hours",
]
