"""regions.csv's rollup path as it was written before it became one statement (probes.exports.regions
rollup_select): read_window per bucket (probes.readings.bucket_rows), each row laid out in Python and written by
csv.writer. Kept as the reference the statement's bytes are compared with.

Not app code: tests use it, nothing else.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime

from probes import readings
from probes.exports import BUCKETS, ExportFilters
from probes.exports.csvsafe import neutralise
from probes.exports.regions import REGION_PERCENTILES, iso_text, selection
from probes.metrics import REGION_CSV
from probes.models import Region, Target
from probes.significant import significant


def bucket_csv(f: readings.Selection, label: datetime, start: datetime, end: datetime, regions, targets) -> str:
    """CSV lines of one bucket read through the rollups."""
    rows = []
    for row in readings.bucket_rows(f, label, start, end):
        region, target = regions[row["region_id"]], targets[row["target_id"]]
        line = [
            iso_text(label),
            region["slug"],
            region["city"],
            region["country"],
            target["name"],
            target["model"],
            row["samples"],
            row["errors"],
            row["error_rate"],
        ]
        line += [significant(row["percentiles"][(m.name, p)]) for m in REGION_CSV for p in REGION_PERCENTILES]
        rows.append([neutralise(v) for v in line])
    rows.sort(key=lambda line: (line[1], line[4]))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def reference_csv(f: ExportFilters) -> str:
    """The rows of regions.csv (no header) through the rollups, bucket by bucket."""
    regions = {r["id"]: r for r in Region.objects.values("id", "slug", "city", "country")}
    targets = {t["id"]: t for t in Target.objects.values("id", "name", "model")}
    sel = selection(f)
    return "".join(
        bucket_csv(sel, label, start, end, regions, targets)
        for label, start, end in readings.spans(sel, BUCKETS[f.bucket])
    )
