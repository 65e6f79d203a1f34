"""CSV exports of measurements, as domain code: what to select, how to make
each cell safe for a spreadsheet, and how PostgreSQL streams it.

Nothing here knows about requests: the site's views (latency.export_views)
and the admin's "Export selected as CSV" action both hand these generators
a selection (ExportFilters, or a queryset) and stream what they yield, so the
two can never drift apart in columns, quoting or neutralisation.

- csvsafe: the formula neutralisation (OWASP's leading quote), in Python and in SQL;
- pgcopy: COPY (query) TO STDOUT on a connection of its own, in blocks;
- measurements: measurements.csv, by filters or by an admin selection;
- regions: regions.csv, read through probes.readings (the dashboard's own
  numbers) and only laid out here;
- responses: the streaming response holding one of a bounded number of slots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

BUCKETS = {"5m": timedelta(minutes=5), "1h": timedelta(hours=1), "1d": timedelta(days=1), "all": None}
DEFAULT_BUCKET = "1h"
DEFAULT_RANGE = timedelta(hours=24)


@dataclass
class ExportFilters:
    """Empty id/slug/outcome lists mean all; [since, until) is half-open. workload: one of
    probes.engine.workloads, or empty for every workload (probes.readings.workload says which rows and rollups
    count)."""

    since: datetime
    until: datetime
    target_ids: list[int] = field(default_factory=list)
    probe_ids: list[int] = field(default_factory=list)
    region_ids: list[int] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    bucket: str = DEFAULT_BUCKET
    workload: str = ""


def _utc(when: datetime) -> datetime:
    # A naive time is taken as UTC, like probes.timeparse does for input.
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def stamp(when: datetime) -> str:
    return _utc(when).strftime("%Y%m%dT%H%MZ")


def filename(what: str, f: ExportFilters) -> str:
    # Two downloads of one window but different workloads must not take each other's name.
    of = f"-{f.workload}" if f.workload else ""
    return f"latency-{what}{of}_{stamp(f.since)}_{stamp(f.until)}.csv"
