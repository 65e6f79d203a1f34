"""Query parameters to a probes.readings Selection (parse_filters and its
helpers); the readings themselves live in probes.readings.

Filters is probes.readings.Selection under the web layer's name. The other
names below are kept for callers of the old module (tests, scripts); pages
and the API call probes.readings directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from probes.models import Region, Target
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
from probes.readings.selection import aware as _aware
from probes.timeparse import parse_when

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
    "parse_filters",
    "parse_ids",
    "parse_region_ids",
    "phases",
    "recent_failures",
    "recent_measurements",
    "region_ranking",
    "region_summary",
    "table",
    "timeseries",
]


# Parsing ---------------------------------------------------------------------


def _values(params, name: str) -> list[str]:
    if hasattr(params, "getlist"):
        raw = params.getlist(name)
    else:
        raw = params.get(name, [])
        raw = [raw] if isinstance(raw, str) else list(raw)
    # A GET form sends `until=` for an empty input: blank means not given.
    return [v.strip() for v in raw if v is not None and v.strip()]


def _single(params, name: str) -> str | None:
    values = _values(params, name)
    if len(values) > 1:
        raise BadParameter(name, f"{name} must be given once")
    return values[0] if values else None


def parse_ids(params, name: str, model, *, allow_all: bool = False) -> list[int]:
    """Repeatable id parameter (target, probe): integers of existing rows, in
    order, without repeats; empty (or "all" where allowed) means all."""
    texts = _values(params, name)
    if allow_all and "all" in texts:
        return []
    ids: list[int] = []
    for text in texts:
        if not text.isdigit():
            also = " or all" if allow_all else ""
            raise BadParameter(name, f"{name} must be a {name} id{also}, got {text!r}")
        if int(text) not in ids:
            ids.append(int(text))
    known = set(model.objects.filter(id__in=ids).values_list("id", flat=True))
    unknown = [str(i) for i in ids if i not in known]
    if unknown:
        raise BadParameter(name, f"unknown {name} id {', '.join(unknown)}")
    return ids


def parse_region_ids(params, *, allow_all: bool = False) -> list[int]:
    """Repeatable `region` parameter: slugs of existing regions, as ids."""
    slugs = _values(params, "region")
    if allow_all and "all" in slugs:
        return []
    by_slug = dict(Region.objects.filter(slug__in=slugs).values_list("slug", "id"))
    unknown = [s for s in slugs if s not in by_slug]
    if unknown:
        raise BadParameter("region", f"unknown region {', '.join(repr(s) for s in unknown)}")
    return list(dict.fromkeys(by_slug[s] for s in slugs))


def parse_filters(params: Mapping[str, list[str]], now: datetime) -> Filters:
    """Filters from query parameters (a QueryDict or a mapping of name to
    list of values): target (ids, repeatable, or "all"), region (slugs,
    repeatable, or "all"), window (15m, 1h, 24h, 7d, 30d or custom with since
    and optional until), percentile (p50, p90, p95, p99), metric. Blank
    values count as absent; anything else unusable raises BadParameter
    naming the parameter."""
    now = _aware(now)

    target_ids = parse_ids(params, "target", Target, allow_all=True)
    region_ids = parse_region_ids(params, allow_all=True)

    since_text, until_text = _single(params, "since"), _single(params, "until")
    window = _single(params, "window") or ("custom" if since_text or until_text else DEFAULT_WINDOW)
    if window not in WINDOW_CHOICES:
        raise BadParameter("window", f"window must be one of {', '.join(WINDOW_CHOICES)}")
    if window == "custom":
        if not since_text:
            raise BadParameter("since", "a custom window needs since (ISO 8601 or relative such as 24h)")
        try:
            since = parse_when(since_text, now)
        except ValueError as exc:
            raise BadParameter("since", f"since: {exc}") from None
        try:
            until = parse_when(until_text, now) if until_text else now
        except ValueError as exc:
            raise BadParameter("until", f"until: {exc}") from None
        if since >= until:
            raise BadParameter("since", "since must be before until")
        if until - since > MAX_WINDOW:
            raise BadParameter("since", f"the window is longer than {MAX_WINDOW.days} days; choose a shorter one")
    else:
        if since_text or until_text:
            name = "since" if since_text else "until"
            raise BadParameter(name, f"{name} applies to window=custom only")
        since, until = now - WINDOWS[window], now

    label = _single(params, "percentile") or DEFAULT_PERCENTILE
    if label not in PERCENTILES:
        raise BadParameter("percentile", f"percentile must be one of {', '.join(PERCENTILES)}")
    metric = _single(params, "metric") or DEFAULT_METRIC
    if metric not in METRIC_CHOICES:
        raise BadParameter("metric", f"metric must be one of {', '.join(METRIC_CHOICES)}")

    return Filters(
        target_ids=target_ids,
        region_ids=region_ids,
        since=since,
        until=until,
        metric=metric,
        percentile=PERCENTILES[label],
        window=window,
    )
