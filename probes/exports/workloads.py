"""workloads.csv: one row per target x region x workload class, read through probes.readings.workloads (the
target page's and /api/workloads' own numbers), laid out here. The figures of the region (the prefill fit, the
cache, the least headroom) are repeated on each of its rows, so a row reads alone in a spreadsheet.

Times and rates to 3 significant digits as regions.csv writes percentiles (probes.significant), ratios as
Python writes a float, counts whole; an empty cell is a figure the window does not have (never 0)."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import datetime

from asgiref.sync import sync_to_async

from probes import readings
from probes.exports.csvsafe import header_line, neutralise
from probes.significant import significant

WORKLOAD_COLUMNS = (
    "target",
    "region",
    "workload",
    "calls",
    "ok",
    "rate_limited",
    "rate_limited_ratio",
    "ttft_p50_ms",
    "input_tokens_p50",
    # The region's figures, the same on each of its rows.
    "ttft_ms_per_1k_input",
    "prefill_tokens_per_s",
    "cache_saving_p50_ms",
    "cache_hit_ratio",
    "ratelimit_remaining_requests_min",
    "ratelimit_remaining_tokens_min",
)


def _count(value: float | None) -> int | None:
    return None if value is None else round(value)


def workloads_text(target_ids: list[int], since: datetime, until: datetime, region_ids: list[int] | None = None) -> str:
    read = readings.workloads(target_ids, since, until, region_ids=region_ids)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for region in read.regions:
        shared = [
            significant(region.fit.slope_ms_per_1k),
            significant(region.fit.prefill_tokens_per_s),
            significant(region.cache.saving_p50_ms),
            region.cache.hit_ratio,
            region.remaining_requests_min,
            region.remaining_tokens_min,
        ]
        for c in region.classes:
            line = [
                region.target,
                region.region,
                c.workload,
                c.calls,
                c.ok,
                c.rate_limited,
                c.rate_limited_ratio,
                significant(c.ttft_p50_ms),
                _count(c.input_tokens_p50),
                *shared,
            ]
            writer.writerow([neutralise(v) for v in line])
    return out.getvalue()


async def workloads_csv(
    target_ids: list[int], since: datetime, until: datetime, region_ids: list[int] | None = None
) -> AsyncIterator[bytes]:
    yield header_line(WORKLOAD_COLUMNS)
    # One read: a row per target x region x class, already aggregated by PostgreSQL.
    text = await sync_to_async(workloads_text)(target_ids, since, until, region_ids)
    if text:
        yield text.encode()
