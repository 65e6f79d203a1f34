"""A target's latest measurements and failures, as stored (no statistics)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from probes.models import Measurement, Region, Target
from probes.readings.selection import BadParameter
from probes.readings.slots import newest_first, started_params, started_q
from probes.readings.summaries import _regions

RECENT_FIELDS = (
    "id",
    "started_at",
    "probe_id",
    "outcome",
    "error_type",
    "error",
    "http_status",
    "connection",
    "dns_ms",
    "connect_ms",
    "tls_ms",
    "ttfb_ms",
    "ttft_ms",
    "ttfat_ms",
    "total_ms",
    "output_tokens",
    "tokens_per_s",
)


def _check_recent(target_id: int, limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
        raise BadParameter("limit", "limit must be an integer from 1 to 1000")
    if not Target.objects.filter(id=target_id).exists():
        raise BadParameter("target", f"unknown target id {target_id}")


def _recent_rows(records: Iterable[Sequence[Any]]) -> list[dict]:
    rows = [dict(zip(("region_id", *RECENT_FIELDS), rec, strict=True)) for rec in records]
    regions = _regions({row["region_id"] for row in rows})
    for row in rows:
        region = regions[row.pop("region_id")]
        row["region"] = region["slug"]
        row["region_name"] = region["name"]
    return rows


def _newest_first(read: Callable[[dict, int], list], limit: int, now: datetime | None) -> list:
    """The newest `limit` rows `read` finds, newest first, read a span of newest_first at a time (the last day's
    slot-time partitions, then the week's before) until `limit` are found. Every row of a span is newer than every
    row of the next, so the lists join in order."""
    rows: list = []
    for bounds in newest_first(now or timezone.now()):
        rows += read(bounds, limit - len(rows))
        if len(rows) >= limit:
            break
    return rows


def recent_measurements(target_id: int, limit: int = 100, now: datetime | None = None) -> list[dict]:
    """The target's latest measurements, newest first.

    Keys: id, started_at, region (slug), region_name, probe_id, outcome,
    error_type, error, http_status, connection, dns_ms, connect_ms, tls_ms,
    ttfb_ms, ttft_ms, ttfat_ms, total_ms, output_tokens, tokens_per_s."""
    _check_recent(target_id, limit)
    table = Measurement._meta.db_table
    columns = ", ".join(f"m.{c}" for c in RECENT_FIELDS)

    def read(bounds: dict, n: int) -> list:
        # Newest `n` per region first, each a short backward walk of the
        # (target, region, started_at) index; "newest of the target" alone has
        # no index in that order and would sort the target's whole history.
        params: dict = {"target": target_id, "n": n}
        where = started_params(params, "w", **bounds)
        sql = f"""
            SELECT r.id, {columns}
            FROM {Region._meta.db_table} r
            CROSS JOIN LATERAL (
                SELECT {", ".join(RECENT_FIELDS)} FROM {table}
                WHERE target_id = %(target)s AND region_id = r.id AND {where}
                ORDER BY started_at DESC LIMIT %(n)s
            ) m
            ORDER BY m.started_at DESC, m.id DESC
            LIMIT %(n)s
        """
        with connection.cursor() as cur:
            cur.execute(sql, params)
            rows: list = cur.fetchall()
            return rows

    return _recent_rows(_newest_first(read, limit, now))


def recent_failures(target_id: int, limit: int = 100, now: datetime | None = None) -> list[dict]:
    """The target's latest measurements whose outcome is not ok, newest
    first; same keys as recent_measurements."""
    _check_recent(target_id, limit)

    def read(bounds: dict, n: int) -> list:
        # exclude() writes NOT (outcome = 'ok'), the partial index's own
        # predicate, so the planner can walk meas_target_failures backwards.
        return list(
            Measurement.objects.filter(started_q(**bounds), target_id=target_id)
            .exclude(outcome="ok")
            .order_by("-started_at")
            .values_list("region_id", *RECENT_FIELDS)[:n]
        )

    return _recent_rows(_newest_first(read, limit, now))
