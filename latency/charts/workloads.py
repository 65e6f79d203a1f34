"""The target page's workload charts, from probes.readings.workloads: each region's median TTFT of each workload
class against its median input tokens (log x) with the fitted prefill line, and the rate-limited share and the
headroom over time. A region's name says which target it is of when the reading holds several."""

from __future__ import annotations

import math
from datetime import timedelta

import plotly.graph_objects as go
from django.utils.translation import gettext as _

from latency.charts import _style, figure_json, label_text, no_data
from latency.charts.over_time import OKABE_ITO, _with_gaps, plotly_time, time_meta
from probes.engine.workloads import CACHED_PAIR
from probes.readings.workloads import RateBucket, RegionWorkloads, Workloads


def _names(read: Workloads) -> list[str]:
    several = len({r.target_id for r in read.regions}) > 1
    return [label_text(f"{r.target} · {r.region_name}" if several else r.region_name) for r in read.regions]


def _fit_line(region: RegionWorkloads, xs: list[float]) -> tuple[list[float], list[float]] | None:
    fit = region.fit
    if fit.slope_ms_per_1k is None or fit.intercept_ms is None or fit.prefill_tokens_per_s is None or not xs:
        return None
    # Straight in linear terms: on the log axis it is drawn through enough points to bend as it should.
    low, high = math.log10(min(xs)), math.log10(max(xs))
    steps = 24 if high > low else 1
    line_x = [10 ** (low + (high - low) * i / steps) for i in range(steps + 1)]
    return line_x, [fit.intercept_ms + fit.slope_ms_per_1k * x / 1000 for x in line_x]


def prefill_points(region: RegionWorkloads) -> list[tuple[float, float, str, int]]:
    """(input tokens p50, TTFT p50 ms, class, ok calls) of each class the chart draws: cached pairs apart, they
    answer from the cache."""
    return [
        (c.input_tokens_p50, c.ttft_p50_ms, c.workload, c.ok)
        for c in region.classes
        if c.workload != CACHED_PAIR
        and c.input_tokens_p50 is not None
        and c.input_tokens_p50 > 0
        and c.ttft_p50_ms is not None
    ]


def prefill_figure(read: Workloads) -> dict:
    """Median TTFT against median input tokens, a marker per workload class, a colour per region, each region's
    fitted line dashed (only where it rises: a prefill rate exists)."""
    fig = go.Figure()
    drawn = False
    for i, (region, name) in enumerate(zip(read.regions, _names(read), strict=True)):
        points = prefill_points(region)
        if not points:
            continue
        drawn = True
        color = OKABE_ITO[i % len(OKABE_ITO)]
        xs = [p[0] for p in points]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[p[1] for p in points],
                mode="markers",
                name=name,
                legendgroup=name,
                marker={"color": color, "size": 9},
                customdata=[[p[2], p[3]] for p in points],
                hovertemplate=(
                    f"{name} · %{{customdata[0]}}<br>"
                    + _("input %(x)s tokens, TTFT p50 %(y)s ms, %(n)s ok calls")
                    % {"x": "%{x:,.0f}", "y": "%{y:,.0f}", "n": "%{customdata[1]}"}
                    + "<extra></extra>"
                ),
                meta={"region": region.region, "target": region.target_id, "role": "classes"},
            )
        )
        line = _fit_line(region, xs)
        if line is not None:
            fig.add_trace(
                go.Scatter(
                    x=line[0],
                    y=line[1],
                    mode="lines",
                    name=_("%(region)s: %(slope).0f ms per 1k input tokens")
                    % {"region": name, "slope": region.fit.slope_ms_per_1k},
                    legendgroup=name,
                    line={"color": color, "dash": "dash", "width": 1.5},
                    hoverinfo="skip",
                    meta={"region": region.region, "target": region.target_id, "role": "fit"},
                )
            )
    if not drawn:
        return figure_json(no_data(fig, _("No workload class has ok calls with a reported input count.")))
    _style(
        fig,
        xaxis={"type": "log", "title": {"text": _("input tokens, median per workload class (log scale)")}},
        yaxis={"title": {"text": _("TTFT p50 (ms)")}, "rangemode": "tozero"},
        legend={"title": {"text": _("per region")}},
    )
    return figure_json(fig)


def _panel_value(panel: str, bucket: RateBucket) -> float | None:
    if panel == "ratio":
        return 100 * bucket.rate_limited_ratio
    return bucket.remaining_requests_min if panel == "requests" else bucket.remaining_tokens_min


def rate_limits_figure(read: Workloads) -> dict:
    """The rate-limited share per time bucket (top), and under it the least requests and tokens remaining that
    the provider reported, each panel only when some call reported it."""
    if not any(r.rate_limits for r in read.regions):
        return figure_json(no_data(go.Figure(), _("No calls in this window.")))
    panels = [("ratio", _("rate-limited (%)"))]
    if any(b.remaining_requests_min is not None for r in read.regions for b in r.rate_limits):
        panels.append(("requests", _("requests remaining, least")))
    if any(b.remaining_tokens_min is not None for r in read.regions for b in r.rate_limits):
        panels.append(("tokens", _("tokens remaining, least")))
    # One time axis, the panels stacked on it (a y axis each): static/js/time.js redraws one date axis in the
    # reader's zone, and every panel follows it.
    fig = go.Figure()
    gap = 0.06
    height = (1 - gap * (len(panels) - 1)) / len(panels)
    step_s = read.bucket.total_seconds()
    for i, (region, name) in enumerate(zip(read.regions, _names(read), strict=True)):
        color = OKABE_ITO[i % len(OKABE_ITO)]
        for row, (panel, _title) in enumerate(panels):
            xs, ys = _with_gaps(
                [(plotly_time(b.bucket_start), b.bucket_start, _panel_value(panel, b)) for b in region.rate_limits],
                step_s,
            )
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    yaxis=f"y{row + 1 if row else ''}",
                    mode="lines+markers",
                    marker={"size": 4},
                    line={"color": color, "width": 1.5},
                    name=name,
                    legendgroup=name,
                    showlegend=row == 0,
                    connectgaps=False,
                    hovertemplate=f"{name}: %{{y:,.1f}}<extra></extra>",
                    meta={"region": region.region, "target": region.target_id, "panel": panel},
                )
            )
    axes = {}
    for row, (_panel, title) in enumerate(panels):
        top = 1 - row * (height + gap)
        axes[f"yaxis{row + 1 if row else ''}"] = {
            "title": {"text": title},
            "rangemode": "tozero",
            "domain": [max(0.0, top - height), top],
            "anchor": "x",
        }
    _style(
        fig,
        hovermode="x unified",
        meta=time_meta(),
        height=180 + 140 * len(panels),
        xaxis={
            # Its ticks and title under the lowest panel.
            "anchor": f"y{len(panels) if len(panels) > 1 else ''}",
            "type": "date",
            "title": {"text": _("time, UTC")},
            "range": [plotly_time(read.since), plotly_time(read.until)],
        },
        legend={"title": {"text": _("per region")}},
        **axes,
    )
    return figure_json(fig)


def bucket_text(size: timedelta) -> str:
    minutes = int(size.total_seconds() // 60)
    if minutes % 60 == 0:
        return _("%(n)d h") % {"n": minutes // 60}
    return _("%(n)d min") % {"n": minutes}
