"""Plotly figures from the rows of probes.readings: plain functions, no ORM,
no HTTP. Every value put into a figure is a plain Python number or string
(times as ISO 8601), so fig.to_plotly_json() is JSON as it stands.
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from itertools import pairwise

import plotly.graph_objects as go
import plotly.io as pio

from probes import metrics
from probes.histogram import BUCKETS, Histogram, bucket_bounds

METRIC_LABELS = {m.name: m.short for m in metrics.METRICS}
PERCENTILE_LABELS = {0.5: "p50", 0.9: "p90", 0.95: "p95", 0.99: "p99"}
# System fonts only: the dashboard loads nothing from third parties.
FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif", "size": 12}
TEMPLATE = "plotly_white"
# Qualitative, distinguishable on white; regions beyond its length reuse colours.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
)  # fmt: skip
NO_DATA_COLOR = "#b0b0b0"
ERROR_OUTLINE = "rgba(214, 39, 40, 0.9)"
PATH_COLOR = "rgba(60, 90, 150, 0.45)"
TARGET_COLOR = "#f2b705"
MARKER_MIN, MARKER_MAX = 8, 24
PATH_POINTS = 48
# Fine histogram buckets are 2% wide: far too thin to see as bars. Ten of
# them make one drawn bar (about 22% wide, ~12 per decade).
DISPLAY_GROUP = 10
# Okabe-Ito colours: every pair stays apart for protanopia and deuteranopia too (the network's three in
# blues and purple, the server's two in orange and vermillion, streaming in bluish green).
SEGMENT_COLORS = {
    "dns": "#56b4e9",
    "connect": "#0072b2",
    "tls": "#cc79a7",
    "server_wait": "#e69f00",
    "first_token": "#d55e00",
    "streaming": "#009e73",
}
SEGMENT_LABELS = {
    "dns": "DNS",
    "connect": "TCP connect",
    "tls": "TLS",
    "server_wait": "server wait",
    "first_token": "first token",
    "streaming": "streaming",
}


def label_text(value) -> str:
    """A name (region, city, target, model, location) as plain text inside a
    figure. Plotly renders a subset of HTML in text, hover text, legend
    entries and tick labels (<a href>, <b>, <br>, entities): an admin-typed
    name must show as typed, never become a link or markup. Plotly decodes
    &lt; &gt; &amp; back to the characters when it draws (not &quot;, so
    quotes stay as they are: without a "<" they cannot open a tag)."""
    return html.escape("" if value is None else str(value), quote=False)


def unit(metric: str) -> str:
    return metrics.BY_NAME[metric].unit if metric in metrics.BY_NAME else "ms"


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def axis_title(metric: str) -> str:
    m = metrics.BY_NAME.get(metric)
    return m.axis_title if m is not None else f"{metric} (ms)"


def percentile_name(percentile: float | str) -> str:
    """'p50' from 0.5 or from 'p50'."""
    if isinstance(percentile, str):
        return percentile
    return PERCENTILE_LABELS.get(percentile, f"p{percentile * 100:g}")


def region_colors(slugs: Iterable[str]) -> dict[str, str]:
    """A colour per region slug, by sorted slug: pass the same mapping to
    several figures to keep a region's colour the same in each."""
    return {slug: PALETTE[i % len(PALETTE)] for i, slug in enumerate(sorted(set(slugs)))}


def _layout(**extra) -> dict:
    return {"template": TEMPLATE, "font": FONT, "margin": {"l": 50, "r": 20, "t": 30, "b": 40}, **extra}


def _fmt(value: float | None, suffix: str = " ms") -> str:
    if value is None:
        return "–"
    return f"{value:.0f}{suffix}" if abs(value) >= 100 else f"{value:.1f}{suffix}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f} %"


# The map -------------------------------------------------------------------------


def great_circle_points(lat1: float, lon1: float, lat2: float, lon2: float, n: int = PATH_POINTS):
    """n points along the shorter great circle from one place to another, as
    (lats, lons); interpolated here so the path is geodesic in any renderer."""
    p1, l1, p2, l2 = map(math.radians, (lat1, lon1, lat2, lon2))
    a = (math.cos(p1) * math.cos(l1), math.cos(p1) * math.sin(l1), math.sin(p1))
    b = (math.cos(p2) * math.cos(l2), math.cos(p2) * math.sin(l2), math.sin(p2))
    dot = max(-1.0, min(1.0, sum(x * y for x, y in zip(a, b, strict=True))))
    omega = math.acos(dot)
    lats, lons = [], []
    for i in range(n):
        t = i / (n - 1)
        if omega < 1e-9:
            point = a
        else:
            # Spherical linear interpolation; antipodes (sin omega = 0) have
            # no unique great circle and fall back to the straight chord.
            s = math.sin(omega)
            if s < 1e-12:
                point = tuple(x + (y - x) * t for x, y in zip(a, b, strict=True))
            else:
                wa, wb = math.sin((1 - t) * omega) / s, math.sin(t * omega) / s
                point = tuple(wa * x + wb * y for x, y in zip(a, b, strict=True))
        x, y, z = point
        lats.append(math.degrees(math.atan2(z, math.hypot(x, y))))
        lons.append(math.degrees(math.atan2(y, x)))
    return lats, lons


def _marker_size(samples: int, most: int) -> float:
    # By square root, so the area grows with the sample count; bounded so a
    # busy region does not cover its neighbours and a quiet one stays visible.
    if most <= 0:
        return MARKER_MIN
    return MARKER_MIN + (MARKER_MAX - MARKER_MIN) * math.sqrt(samples / most)


def _outline_width(error_rate: float | None) -> float:
    if not error_rate:
        return 1.0
    # 1.5 px for any error at all, up to 6 px from a 50% error rate on.
    return 1.5 + 4.5 * min(error_rate, 0.5) / 0.5


def _region_hover(row: dict, metric: str, pname: str) -> str:
    u = unit(metric)
    suffix = f" {u}"
    label = metric_label(metric)
    lines = [f"<b>{label_text(row['name'])}</b>"]
    if row.get("city") or row.get("country"):
        lines[0] += f" ({', '.join(label_text(x) for x in (row.get('city'), row.get('country')) if x)})"
    if row.get("value_kind") == "mean":
        lines.append(f"mean {label}: {_fmt(row.get('value'), suffix)}")
    else:
        lines.append(f"p50 {label}: {_fmt(row.get('p50'), suffix)}")
        lines.append(f"p95 {label}: {_fmt(row.get('p95'), suffix)}")
        if pname not in ("p50", "p95"):
            lines.append(f"{pname} {label}: {_fmt(row.get('value'), suffix)}")
    lines.append(f"samples: {row.get('samples', 0)}")
    lines.append(f"error rate: {_percent(row.get('error_rate'))}")
    floor = row.get("floor_ms")
    lines.append(
        "physical floor (fiber, round trip): "
        + (_fmt(floor) if floor is not None else "n/a (one target with a location)")
    )
    lines.append(f"measured connect p50: {_fmt(row.get('connect_p50'))}")
    lines.append(f"latency tax: {_fmt(row.get('tax_ms')) if row.get('tax_ms') is not None else 'n/a'}")
    return "<br>".join(lines)


def world_map(regions: list[dict], target: dict | None, metric: str, percentile_label: str | float) -> go.Figure:
    """Regions as markers coloured by their `value`, sized by samples and
    outlined in red by error rate; grey where the window has no data. With a
    target that has a location: a star there and a great-circle path to it
    from every region with data.

    regions: probes.readings.summary rows. target: {"name", "location_name",
    "lat", "lon"} or None. percentile_label: "p50" or 0.5."""
    pname = percentile_name(percentile_label)
    u = unit(metric)
    label = metric_label(metric)
    with_data = [r for r in regions if r.get("samples") and r.get("value") is not None]
    without = [r for r in regions if not (r.get("samples") and r.get("value") is not None)]
    has_target = bool(target) and target.get("lat") is not None and target.get("lon") is not None
    fig = go.Figure()

    if has_target:
        for row in with_data:
            lats, lons = great_circle_points(row["lat"], row["lon"], target["lat"], target["lon"])
            fig.add_trace(
                go.Scattergeo(
                    lat=lats,
                    lon=lons,
                    mode="lines",
                    line={"width": 1.2, "color": PATH_COLOR},
                    hoverinfo="skip",
                    showlegend=False,
                    name=f"path {label_text(row['slug'])}",
                    meta={"role": "path", "region": row["slug"]},
                )
            )

    if without:
        hover = []
        for row in without:
            if row.get("samples"):
                hover.append(
                    f"<b>{label_text(row['name'])}</b><br>{row['samples']} samples,"
                    f" error rate {_percent(row.get('error_rate'))}"
                    f"<br>no {label} value in this window"
                )
            else:
                hover.append(f"<b>{label_text(row['name'])}</b><br>no data in this window")
        fig.add_trace(
            go.Scattergeo(
                lat=[r["lat"] for r in without],
                lon=[r["lon"] for r in without],
                mode="markers",
                marker={
                    "size": MARKER_MIN,
                    "color": NO_DATA_COLOR,
                    "line": {
                        "width": [_outline_width(r.get("error_rate")) for r in without],
                        "color": [ERROR_OUTLINE if r.get("error_rate") else "white" for r in without],
                    },
                },
                text=hover,
                hovertemplate="%{text}<extra></extra>",
                customdata=[r["slug"] for r in without],
                name="no data",
                showlegend=False,
                meta={"role": "no-data"},
            )
        )

    if with_data:
        most = max(r["samples"] for r in with_data)
        kind = "mean" if any(r.get("value_kind") == "mean" for r in with_data) else pname
        fig.add_trace(
            go.Scattergeo(
                lat=[r["lat"] for r in with_data],
                lon=[r["lon"] for r in with_data],
                mode="markers",
                marker={
                    "size": [_marker_size(r["samples"], most) for r in with_data],
                    "color": [r["value"] for r in with_data],
                    # Green is good: short latencies, or many tokens per second.
                    "colorscale": "RdYlGn" if metric == "tokens_per_s" else "RdYlGn_r",
                    "cmin": min(r["value"] for r in with_data),
                    "cmax": max(r["value"] for r in with_data),
                    "colorbar": {"title": {"text": f"{kind} {label} ({u})"}, "thickness": 12, "len": 0.7},
                    "line": {
                        "width": [_outline_width(r.get("error_rate")) for r in with_data],
                        "color": [ERROR_OUTLINE if r.get("error_rate") else "white" for r in with_data],
                    },
                    "opacity": 0.95,
                },
                text=[_region_hover(r, metric, pname) for r in with_data],
                hovertemplate="%{text}<extra></extra>",
                customdata=[r["slug"] for r in with_data],
                name="regions",
                showlegend=False,
                meta={"role": "regions"},
            )
        )

    if has_target:
        where = label_text(target.get("location_name") or "hosting location")
        target_name = label_text(target.get("name") or "target")
        fig.add_trace(
            go.Scattergeo(
                lat=[target["lat"]],
                lon=[target["lon"]],
                mode="markers+text",
                marker={"symbol": "star", "size": 18, "color": TARGET_COLOR, "line": {"width": 1, "color": "#333"}},
                text=[where],
                textposition="top center",
                textfont={"size": 11},
                # Names travel in text/name, never in the template itself, where
                # a "%{...}" in a name would be read as a placeholder.
                hovertext=[f"<b>{target_name}</b><br>{where}"],
                hovertemplate="%{hovertext}<extra></extra>",
                name=target_name,
                showlegend=False,
                meta={"role": "target"},
            )
        )

    fig.update_layout(
        **_layout(margin={"l": 0, "r": 0, "t": 10, "b": 0}),
        showlegend=False,
        geo={
            "projection": {"type": "natural earth"},
            "showland": True,
            "landcolor": "#eef0f2",
            "showcountries": True,
            "countrycolor": "#c9ced4",
            "showcoastlines": True,
            "coastlinecolor": "#b8bec6",
            "showocean": True,
            "oceancolor": "#f8fafc",
            "showframe": False,
        },
    )
    return fig


# Distributions -------------------------------------------------------------------


def _display_bins(hist: Histogram) -> list[tuple[float, float, int]]:
    """(centre, width, count) of the drawn bars, from the sparse buckets."""
    grouped: dict[int, int] = defaultdict(int)
    for key, count in hist.to_sparse().items():
        index = int(key)
        grouped[max(0, index - 1) // DISPLAY_GROUP] += count
    bins = []
    for group in sorted(grouped):
        first = 1 + group * DISPLAY_GROUP
        last = min(first + DISPLAY_GROUP - 1, BUCKETS - 1)
        lower, upper = bucket_bounds(first)[0], bucket_bounds(last)[1]
        # The geometric centre, where the bar sits in the middle on a log axis.
        bins.append((math.sqrt(lower * upper), upper - lower, grouped[group]))
    return bins


def histogram_figure(
    hists: dict[str, Histogram], metric: str, *, share: bool = True, colors: dict[str, str] | None = None
) -> go.Figure:
    """One overlaid bar trace per region: the distribution of the metric on
    a log axis, as the share of the region's samples (share=False: counts).
    hists: probes.readings.distribution (region slug to Histogram)."""
    colors = colors or region_colors(hists)
    fig = go.Figure()
    for slug, hist in hists.items():
        if not hist.count:
            continue
        bins = _display_bins(hist)
        ys = [c / hist.count if share else c for _, _, c in bins]
        fig.add_trace(
            go.Bar(
                x=[b[0] for b in bins],
                y=ys,
                width=[b[1] for b in bins],
                name=label_text(slug),
                marker={"color": colors.get(slug, PALETTE[0]), "line": {"width": 0}},
                opacity=0.55,
                hovertemplate=(
                    f"%{{fullData.name}}<br>~%{{x:.1f}} {unit(metric)}<br>"
                    + ("%{y:.1%} of samples" if share else "%{y} samples")
                    + "<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        **_layout(),
        barmode="overlay",
        bargap=0,
        xaxis={"type": "log", "title": {"text": axis_title(metric)}},
        yaxis={"title": {"text": "share of samples" if share else "samples"}, "tickformat": ".0%" if share else ""},
        legend={"title": {"text": "region"}},
    )
    return fig


# Over time -----------------------------------------------------------------------


def _with_gaps(points: list[tuple[str, object, float | None]], step_s: float | None):
    """Lines break where buckets are missing instead of bridging them."""
    xs, ys = [], []
    previous = None
    for when, stamp, y in points:
        if previous is not None and step_s and (stamp - previous).total_seconds() > step_s * 1.5:
            xs.append(None)
            ys.append(None)
        xs.append(when)
        ys.append(y)
        previous = stamp
    return xs, ys


def timeseries_figure(rows: list[dict], metric: str, *, colors: dict[str, str] | None = None) -> go.Figure:
    """Per region a solid p50 line and a dashed p95 line in the same colour,
    grouped in the legend. For tokens_per_s over long windows (rows carry a
    mean but no percentiles) one solid mean line per region instead.
    rows: probes.readings.series."""
    by_region: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_region[row["region"]].append(row)
    colors = colors or region_colors(by_region)
    steps = []
    for series in by_region.values():
        stamps = sorted(r["bucket_start"] for r in series)
        steps += [(b - a).total_seconds() for a, b in pairwise(stamps) if b > a]
    step_s = min(steps) if steps else None
    u = unit(metric)
    fig = go.Figure()
    for slug in sorted(by_region, key=lambda s: (by_region[s][0].get("region_name") or s, s)):
        series = sorted(by_region[slug], key=lambda r: r["bucket_start"])
        name = label_text(series[0].get("region_name") or slug)
        color = colors.get(slug, PALETTE[0])
        lines = [("p50", "solid"), ("p95", "dash")]
        if all(r.get("p50") is None for r in series) and any(r.get("mean") is not None for r in series):
            lines = [("mean", "solid")]
        for i, (key, dash) in enumerate(lines):
            points = [(r["bucket_start"].isoformat(), r["bucket_start"], r.get(key)) for r in series]
            xs, ys = _with_gaps(points, step_s)
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines+markers" if len(series) == 1 else "lines",
                    name=f"{name} {key}",
                    legendgroup=slug,
                    showlegend=i == 0,
                    line={"color": color, "dash": dash, "width": 2 if dash == "solid" else 1.5},
                    connectgaps=False,
                    hovertemplate=f"%{{fullData.name}}: %{{y:.1f}} {u}<extra></extra>",
                    meta={"region": slug, "stat": key},
                )
            )
    fig.update_layout(
        **_layout(),
        hovermode="x unified",
        xaxis={"type": "date", "title": {"text": "time (UTC)"}},
        yaxis={"title": {"text": axis_title(metric)}, "rangemode": "tozero"},
        legend={"title": {"text": "solid p50, dashed p95"}},
    )
    return fig


# Phases --------------------------------------------------------------------------


def phases_figure(rows: list[dict]) -> go.Figure:
    """Horizontal stacked bars, one per region, of the six segments of a
    call in fixed colours. rows: probes.readings.phases."""
    names = [label_text(row.get("region_name") or row["region"]) for row in rows]
    fig = go.Figure()
    for segment, color in SEGMENT_COLORS.items():
        fig.add_trace(
            go.Bar(
                y=names,
                x=[row["segments"][segment] for row in rows],
                orientation="h",
                name=SEGMENT_LABELS[segment],
                marker={"color": color},
                customdata=[row["region"] for row in rows],
                hovertemplate=f"%{{y}}<br>{SEGMENT_LABELS[segment]}: %{{x:.1f}} ms<extra></extra>",
                meta={"segment": segment},
            )
        )
    fig.update_layout(
        **_layout(margin={"l": 140, "r": 20, "t": 60, "b": 40}),
        barmode="stack",
        xaxis={"title": {"text": "median time (ms); segments are differences of medians"}},
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        height=max(290, 90 + 28 * len(rows)),
    )
    return fig


def figure_json(fig: go.Figure) -> dict:
    """The figure as plain JSON types ({"data": [...], "layout": {...}}),
    ready for JsonResponse. Through plotly's own encoder, which writes NaN
    and infinities as null rather than the bare NaN browsers reject."""
    return json.loads(pio.to_json(fig, validate=False))
