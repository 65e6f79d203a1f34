"""The Python rollup builder that SQL replaced (probes.rollups.build), kept as
the reference the SQL is compared with: every raw row of an hour read into
Python, one probes.histogram.Histogram per (probe, region) and metric.

Not app code: tests and bench/rollup.py use it, nothing else. It differs from
the builder it was only in naming the target of a probe re-pointed during an
hour: its latest row's (latest started_at, then highest id), as the SQL does,
where the old code took whichever row came first.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from probes.engine.result import REFUSED
from probes.histogram import Histogram
from probes.metrics import HISTOGRAM
from probes.rollups.periods import floor_hour

# The fields of an HourlyRollup the builders write (not its id or updated_at).
FIELDS = ("target_id", "samples", "errors", "outcomes", *(m.rollup_field for m in HISTOGRAM))


def reference_rollups(since: datetime, until: datetime) -> dict[tuple[int, int, datetime], dict]:
    """{(probe_id, region_id, hour): {field: value}} for every hour of [since, until) with raw rows, as the
    ORM reads them (histograms as Histogram.to_sparse's dict, probes.rollup_models.HistogramField)."""
    from probes.models import Measurement

    cols = ["probe_id", "region_id", "target_id", "started_at", "outcome", *(m.column for m in HISTOGRAM)]
    groups: dict[tuple[int, int, datetime], dict] = {}
    rows = (
        Measurement.objects.filter(started_at__gte=since, started_at__lt=until)
        .order_by("started_at", "id")
        .values_list(*cols)
        .iterator(chunk_size=5000)
    )
    for probe_id, region_id, target_id, started_at, outcome, *values in rows:
        key = (probe_id, region_id, floor_hour(started_at))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {
                "samples": 0,
                "errors": 0,
                "outcomes": defaultdict(int),
                "hists": {m.name: Histogram() for m in HISTOGRAM},
            }
        # Rows come in time order: the last one seen is the latest.
        g["target_id"] = target_id
        g["samples"] += 1
        g["outcomes"][outcome] += 1
        if outcome != "ok":
            g["errors"] += 1
        if outcome in REFUSED:  # never a latency sample (probes.metrics.latency_row_sql)
            continue
        for metric, value in zip(HISTOGRAM, values, strict=True):
            if value is not None:
                g["hists"][metric.name].add(value)
    return {
        key: {
            "target_id": g["target_id"],
            "samples": g["samples"],
            "errors": g["errors"],
            "outcomes": dict(g["outcomes"]),
            **{m.rollup_field: g["hists"][m.name].to_sparse() for m in HISTOGRAM},
        }
        for key, g in groups.items()
    }


def stored_rollups(since: datetime, until: datetime) -> dict[tuple[int, int, datetime], dict]:
    """The HourlyRollup rows of [since, until) in reference_rollups' shape."""
    from probes.models import HourlyRollup

    return {
        (row["probe_id"], row["region_id"], row["hour"]): {f: row[f] for f in FIELDS}
        for row in HourlyRollup.objects.filter(hour__gte=since, hour__lt=until).values(
            "probe_id", "region_id", "hour", *FIELDS
        )
    }
