"""Storing real users' calls: raw rows for spans and beacons, and the hourly rollups they and the OTLP metric
histograms add to, in one transaction, so a rollup always holds every stored observation.

Rollups are merged in SQL (INSERT ... ON CONFLICT DO UPDATE adding bucket counts) rather than rebuilt from raw
rows like the probes' rollups: OTLP metrics arrive as histograms with no raw rows to rebuild from, and two web
processes adding to the same hour must both be counted, which the row lock of ON CONFLICT guarantees."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime

from django.db import connection, transaction

from probes import partitions
from probes.histogram import Histogram
from probes.metrics import REAL_USERS
from probes.realusers import matching
from probes.realusers.types import Observed, ObservedHistogram, Place, Stored
from probes.rollups.periods import floor_hour

_HIST_COLUMNS = tuple(f"{m.name}_hist" for m in REAL_USERS)
_COLUMN_OF = {m.name: m.column for m in REAL_USERS}  # "ttft" -> "ttft_ms" (Observed's attribute)
_OBSERVATION_COLUMNS = (
    "source_id", "kind", "observed_at", "received_at", "target_id", "provider", "host", "model", "operation",
    "service", "country", "city", "latitude", "longitude", "place_from", "ttft_ms", "ttft_from", "total_ms",
    "output_tokens", "error_type",
)  # fmt: skip
# The rollups' samples and errors are PostgreSQL integers.
INT_MAX = 2**31 - 1
_KEY_COLUMNS = ("hour", "target_id", "host", "model", "country", "city", "latitude", "longitude")


def _merged(column: str) -> str:
    return (
        "(SELECT coalesce(jsonb_object_agg(e.key, e.n), '{}'::jsonb) FROM ("
        "SELECT key, sum(value::bigint) AS n FROM ("
        f"SELECT * FROM jsonb_each_text(r.{column}) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.{column})"
        ") u GROUP BY key) e)"
    )


def _upsert_sql(table: str, rows: int) -> str:
    columns = (*_KEY_COLUMNS, "samples", "errors", *_HIST_COLUMNS, "updated_at")
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    updates = ", ".join(
        [
            # Saturated rather than overflowing: a sum past the integer column's range would fail the whole
            # batch with a 500, and no real hour and place comes near it.
            f"samples = LEAST(r.samples::bigint + EXCLUDED.samples, {INT_MAX})",
            f"errors = LEAST(r.errors::bigint + EXCLUDED.errors, {INT_MAX})",
            *(f"{c} = {_merged(c)}" for c in _HIST_COLUMNS),
            "updated_at = EXCLUDED.updated_at",
        ]
    )
    return (
        f"INSERT INTO {table} AS r ({', '.join(columns)}) VALUES {', '.join([one] * rows)} "
        f"ON CONFLICT ON CONSTRAINT obs_rollup_one_per_key DO UPDATE SET {updates}"
    )


class _Group:
    __slots__ = ("errors", "hists", "samples")

    def __init__(self) -> None:
        self.samples = 0
        self.errors = 0
        self.hists = {m.name: Histogram() for m in REAL_USERS}


def _key(hour: datetime, target_id: int | None, host: str, model: str, place: Place) -> tuple:
    return (hour, target_id, host, model, place.country, place.city, place.latitude, place.longitude)


def _sort_key(key: tuple) -> tuple:
    # The same order in every process, so two transactions upserting the same rows lock them in one order
    # (no deadlock); None sorts first.
    return tuple((v is not None, v) for v in key)


def record(
    source_id: int,
    observed: Iterable[Observed] = (),
    histograms: Iterable[ObservedHistogram] = (),
    *,
    now: datetime | None = None,
) -> Stored:
    """Store calls of one source: each Observed as a raw row, and everything (raw rows and histogram points) in
    the hourly rollups. Targets are matched here (probes.realusers.matching) unless a receiver named one."""
    from probes.models import Observation, ObservationRollup

    now = now or datetime.now(UTC)
    observed = list(observed)
    histograms = [h for h in histograms if h.count > 0]
    stored = Stored()
    if not observed and not histograms:
        return stored
    match = matching.matcher()
    groups: dict[tuple, _Group] = defaultdict(_Group)
    rows = []
    for o in observed:
        if o.target_id is None:
            o.target_id = match(o.host, o.model, o.provider)
        stored.matched += o.target_id is not None
        g = groups[_key(floor_hour(o.observed_at), o.target_id, o.host, o.model, o.place)]
        g.samples += 1
        g.errors += bool(o.error_type)
        for name, column in _COLUMN_OF.items():
            value = getattr(o, column)
            if value is not None:
                g.hists[name].add(value)
        rows.append(
            (
                source_id, o.kind, o.observed_at, now, o.target_id, o.provider, o.host, o.model, o.operation,
                o.service, o.place.country, o.place.city, o.place.latitude, o.place.longitude, o.place.source,
                o.ttft_ms, o.ttft_from, o.total_ms, o.output_tokens, o.error_type,
            )
        )  # fmt: skip
    stored.observations = len(rows)
    for h in histograms:
        if h.target_id is None:
            h.target_id = match(h.host, h.model, h.provider)
        g = groups[_key(floor_hour(h.hour_of), h.target_id, h.host, h.model, h.place)]
        # Calls are counted once, from the duration histogram; a TTFT histogram adds only its values.
        if h.metric == "total":
            g.samples += h.count
            g.errors += h.errors
            stored.histogram_calls += h.count
        for value, n in h.counts:
            g.hists[h.metric].add(value, n)
    keys = sorted(groups, key=_sort_key)
    params: list = []
    for key in keys:
        g = groups[key]
        params.extend(key)
        params.extend([min(g.samples, INT_MAX), min(g.errors, INT_MAX)])
        params.extend(json.dumps(g.hists[m.name].to_sparse()) for m in REAL_USERS)
        params.append(now)
    if rows:
        # Before the batch's transaction: a day without a partition yet (a late span) gets one; steady state, the
        # scheduler made it and this costs no query.
        partitions.ensure_for_rows(partitions.OBSERVATIONS, (row[2] for row in rows), now)
    with transaction.atomic(), connection.cursor() as cur:
        if rows:
            # COPY rather than bulk_create: an OTLP batch is hundreds of rows, and Django's per-field
            # preparation of each was a large share of the receiver's time (bench/otlp.py).
            table = Observation._meta.db_table
            with cur.cursor.copy(f"COPY {table} ({', '.join(_OBSERVATION_COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        cur.execute(_upsert_sql(ObservationRollup._meta.db_table, len(keys)), params)
    return stored
