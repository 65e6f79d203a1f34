"""The web layer's names for probes.readings: Filters is
probes.readings.Selection (built by latency.forms from query parameters);
the other names are kept for callers of the old module (tests, scripts).
Pages and the API call probes.readings directly."""

from __future__ import annotations

from probes.readings import PHASE_METRICS, SEGMENTS, bucket_size, distribution, phases, ranking, series, summary, table
from probes.readings.recent import RECENT_FIELDS, recent_failures, recent_measurements
from probes.readings.selection import (
    DEFAULT_METRIC,
    DEFAULT_PERCENTILE,
    DEFAULT_WINDOW,
    MAX_WINDOW,
    METRIC_CHOICES,
    PERCENTILES,
    RAW_MAX,
    TPS,
    UNITS,
    WINDOW_CHOICES,
    WINDOWS,
    BadParameter,
)
from probes.readings.selection import Selection as Filters

# The old names of the readers.
region_summary = summary
histograms = distribution
timeseries = series
region_ranking = ranking

__all__ = [
    "DEFAULT_METRIC",
    "DEFAULT_PERCENTILE",
    "DEFAULT_WINDOW",
    "MAX_WINDOW",
    "METRIC_CHOICES",
    "PERCENTILES",
    "PHASE_METRICS",
    "RAW_MAX",
    "RECENT_FIELDS",
    "SEGMENTS",
    "TPS",
    "UNITS",
    "WINDOWS",
    "WINDOW_CHOICES",
    "BadParameter",
    "Filters",
    "bucket_size",
    "histograms",
    "phases",
    "recent_failures",
    "recent_measurements",
    "region_ranking",
    "region_summary",
    "table",
    "timeseries",
]
