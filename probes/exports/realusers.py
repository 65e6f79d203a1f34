"""real-users.csv: real users' calls per bucket x place x target (or host and model for other providers), with
samples and the p50 and p95 of each metric of probes.metrics.REAL_USERS, read through
probes.readings.realusers (the pages' own numbers, k-anonymity included: a row is written only when its
calls in its bucket reach LATENCY_REAL_USERS_MIN_SAMPLES).

Buckets are hours, days or the whole range, never 5 minutes: real users are kept by the hour (see
probes.readings.realusers). A bucket's label is its start, as in regions.csv; the whole range's is since.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async

from probes import readings
from probes.exports import BUCKETS, ExportFilters
from probes.exports.csvsafe import header_line, neutralise
from probes.exports.regions import iso_text
from probes.metrics import REAL_USERS
from probes.readings.realusers import REAL_PERCENTILES
from probes.significant import significant

# The buckets regions.csv offers that real users' hourly rollups can fill.
REAL_USER_BUCKETS = tuple(name for name, size in BUCKETS.items() if size is None or size >= BUCKETS["1h"])
REAL_USER_COLUMNS = (
    "bucket",
    "country",
    "city",
    "latitude",
    "longitude",
    "target",  # the matched target's name; empty for other providers
    "host",  # other providers' host; empty for a target
    "model",
    "samples",
    *(f"{m.name}_{p}_ms" for m in REAL_USERS for p in REAL_PERCENTILES),
)


def real_users_text(f: ExportFilters) -> str:
    read = readings.real_users.rows(f.since, f.until, target_ids=f.target_ids, bucket=BUCKETS[f.bucket])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in read.rows:
        line = [
            iso_text(row.bucket or f.since),
            row.country,
            row.city,
            row.latitude,
            row.longitude,
            row.target,
            row.host,
            row.model,
            row.samples,
            *(significant(row.figures[f"{m.name}_{p}"]) for m in REAL_USERS for p in REAL_PERCENTILES),
        ]
        writer.writerow([neutralise(v) for v in line])
    return out.getvalue()


async def real_users_csv(f: ExportFilters) -> AsyncIterator[bytes]:
    yield header_line(REAL_USER_COLUMNS)
    # One read: the rows are per place and hour at most, already merged, far fewer than raw measurements.
    text = await sync_to_async(real_users_text)(f)
    if text:
        yield text.encode()
