"""Measurements as stored, one row each (the REST API's /api/v1/measurements/): no statistics, so nothing here
competes with the percentile readers; only which rows, and which of their fields.

The fields are the metric list's (probes.metrics: every stored engine field, metrics and the others), plus
what names the row: its probe, target (by name) and region (by slug), the slot and the worker."""

from __future__ import annotations

from typing import Any

from django.db.models import F, QuerySet

from probes.exports import ExportFilters
from probes.metrics import stored_engine_fields
from probes.models import Measurement
from probes.readings.slots import started_in
from probes.readings.workload import row_q

# What names a row besides the engine's fields; keys of the dicts rows() yields.
IDENTITY_FIELDS = (
    "id",
    "probe_id",
    "probe_name",
    "target_id",
    "target_name",
    "region_slug",
    "scheduled_for",
    "worker",
)


def stored_fields() -> tuple[str, ...]:
    """Every key of a stored row, in order: identity, then the engine's stored fields."""
    return (*IDENTITY_FIELDS, *stored_engine_fields())


def stored_measurements(f: ExportFilters) -> QuerySet[Measurement, dict[str, Any]]:
    """Rows of [f.since, f.until) narrowed by f's targets, probes, regions, outcomes and workload, as dicts of
    stored_fields(); unordered (the caller pages through them in its own order)."""
    rows = Measurement.objects.filter(started_in(f.since, f.until))
    if f.target_ids:
        rows = rows.filter(target_id__in=f.target_ids)
    if f.probe_ids:
        rows = rows.filter(probe_id__in=f.probe_ids)
    if f.region_ids:
        rows = rows.filter(region_id__in=f.region_ids)
    if f.outcomes:
        rows = rows.filter(outcome__in=f.outcomes)
    if f.workload:
        rows = rows.filter(row_q(f.workload))  # the workload it was sent with (probes.readings.workload)
    names = {"probe_name": F("probe__name"), "target_name": F("target__name"), "region_slug": F("region__slug")}
    return rows.values(*(name for name in stored_fields() if name not in names), **names)
