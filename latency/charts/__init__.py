"""Plotly figures from the rows of probes.readings: plain functions, no ORM,
no HTTP. Every value put into a figure is a plain Python number or string
(times as ISO 8601), or a numpy object array of them (the time series'
heatmap: plotly copies an array whole, a list element by element), so
figure_json is plain JSON lists throughout.

Here: the shared helpers, the map and the phases. The distribution
(latency.charts.distribution) and the time series
(latency.charts.over_time) have modules of their own.
"""

from __future__ import annotations

import functools
import html
import json
import math
from collections import defaultdict

import plotly.graph_objects as go
import plotly.io as pio
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from latency import labels
from probes import metrics
from probes.compat.plotly import unvalidated
from probes.geo import great_circle_km

PERCENTILE_LABELS = {0.5: "p50", 0.9: "p90", 0.95: "p95", 0.99: "p99"}
# System fonts only: the dashboard loads nothing from third parties.
FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif", "size": 12}
TEMPLATE = "plotly_white"
NO_DATA_COLOR = "#b0b0b0"
ERROR_OUTLINE = "rgba(214, 39, 40, 0.9)"
# Around a marker without errors: dark enough to outline the scale's light end on the light map.
CLEAN_OUTLINE = "rgba(60, 70, 85, 0.55)"
PATH_COLOR = "rgba(60, 90, 150, 0.45)"
# A dark region (no worker heard): a hollow grey ring, so it never reads as a slow region's colour.
DARK_COLOR = "#6b7280"
DARK_SIZE = 14
# A stale region (its workers late): an amber ring around its usual marker (Okabe-Ito orange).
STALE_COLOR = "#e69f00"
TARGET_COLOR = "#f2b705"
MARKER_MIN, MARKER_MAX = 8, 24
# Larger than any marker, so its points show around a region marker drawn on it.
STAR_SIZE = MARKER_MAX + 12
# A region this close to the target's hosting location is "in its city".
SAME_PLACE_KM = 100.0
PATH_POINTS = 48
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
    "dns": gettext_lazy("DNS"),
    "connect": gettext_lazy("TCP connect"),
    "tls": gettext_lazy("TLS"),
    "server_wait": gettext_lazy("server wait"),
    "first_token": gettext_lazy("first token"),
    "streaming": gettext_lazy("streaming"),
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
    return labels.unit(metric)


def metric_label(metric: str) -> str:
    """The metric's short name in the reader's language ("TTFT", "tokens/s")."""
    return labels.short(metric)


def axis_title(metric: str) -> str:
    return labels.axis_title(metric)


def percentile_name(percentile: float | str) -> str:
    """'p50' from 0.5 or from 'p50'."""
    if isinstance(percentile, str):
        return percentile
    return PERCENTILE_LABELS.get(percentile, f"p{percentile * 100:g}")


def with_template(fig: go.Figure) -> go.Figure:
    """The figure with plotly's own TEMPLATE in its layout, set as plotly sets
    its default template in go.Figure(): without validating it again. Naming
    it (template=TEMPLATE) made plotly deep-copy and validate the whole
    template on every figure, a large share of each figure's build
    (bench/figures.py; issue 17). The
    layout keeps a copy of the registered template's properties, so the JSON
    is the same (a test compares it) and no figure shares, or can change,
    plotly's registered one."""
    with unvalidated(fig.layout) as layout:
        layout.template = pio.templates[TEMPLATE]
    return fig


MARGIN = {"l": 50, "r": 20, "t": 30, "b": 40}


def _style(fig: go.Figure, *, margin: dict | None = None, **layout) -> go.Figure:
    """The dashboard's look (template, system fonts, margins) and the figure's own layout."""
    with_template(fig)
    fig.update_layout(font=FONT, margin=margin or MARGIN, **layout)
    return fig


@functools.cache
def template_json() -> dict:
    """plotly's registered TEMPLATE as plain JSON types, read once: what with_template puts in a layout."""
    return json.loads(json.dumps(pio.templates[TEMPLATE].to_plotly_json()))


def plain_figure_json(data: list[dict], layout: dict) -> dict:
    """figure_json of a figure given as plain dicts in plotly's JSON schema, styled as _style styles one: for
    charts whose every property is known when they are drawn (the objective page's), built without plotly's
    figure objects, which check and copy each property and point. The tests hold them to the schema
    (go.Figure(figure) refuses what it does not know)."""
    figure = {"data": data, "layout": {"template": template_json(), "font": FONT, "margin": MARGIN, **layout}}
    return json.loads(pio.to_json(figure, validate=False))


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


def error_ring_ratio() -> float:
    """The share of failed calls from which a region's marker is ringed in red (LATENCY_MAP_ERROR_RING_RATIO)."""
    return float(settings.LATENCY_MAP_ERROR_RING_RATIO)


def error_ring_text(ratio: float | None = None) -> str:
    """What the ring means, as the map's legend says it ("ring: 5 % or more of calls failed")."""
    percent = f"{100 * (error_ring_ratio() if ratio is None else ratio):g}"
    return _("Red ring: %(percent)s %% or more of calls failed (thicker up to 50 %% or more)") % {"percent": percent}


def _ringed(error_rate: float | None) -> bool:
    # A rate, not a count: one failure in a hundred calls is noise, and a ring for it would cry wolf.
    return error_rate is not None and error_rate > 0 and error_rate >= error_ring_ratio()


def _outline_width(error_rate: float | None) -> float:
    if not _ringed(error_rate):
        return 1.0
    # 2 px at the threshold, up to 6 px from a 50% error rate on (the legend under the map says so).
    threshold = min(error_ring_ratio(), 0.5)
    span = 0.5 - threshold
    share = 1.0 if span <= 0 else (min(error_rate or 0.0, 0.5) - threshold) / span
    return 2.0 + 4.0 * share


def _outline_color(error_rate: float | None) -> str:
    return ERROR_OUTLINE if _ringed(error_rate) else CLEAN_OUTLINE


def floor_note(target: dict | None) -> str:
    """Why the hover has no physical floor, when it has none."""
    if target is None:
        return _("choose one target with a known location")
    return _("unknown: this target has no location set")


def _near_target(row: dict, target: dict | None) -> bool:
    if not target or target.get("lat") is None or target.get("lon") is None:
        return False
    return great_circle_km(row["lat"], row["lon"], target["lat"], target["lon"]) <= SAME_PLACE_KM


def _region_hover(row: dict, metric: str, pname: str, target: dict | None = None) -> str:
    """target: the map's target (None unless exactly one is selected; its
    lat/lon None when it has no location)."""
    u = unit(metric)
    suffix = f" {u}"
    label = metric_label(metric)
    lines = [f"<b>{label_text(row['name'])}</b>"]
    if row.get("city") or row.get("country"):
        lines[0] += f" ({', '.join(label_text(x) for x in (row.get('city'), row.get('country')) if x)})"
    if row.get("target"):
        # Several targets kept apart: the hover names whose numbers these are.
        text = _("best target here: %(target)s") if row.get("best_target") else _("target: %(target)s")
        lines.append(text % {"target": label_text(row["target"])})
    lines.append(f"p50 {label}: {_fmt(row.get('p50'), suffix)}")
    lines.append(f"p95 {label}: {_fmt(row.get('p95'), suffix)}")
    if pname not in ("p50", "p95"):
        lines.append(f"{pname} {label}: {_fmt(row.get('value'), suffix)}")
    lines.append(_("samples: %(count)s") % {"count": row.get("samples", 0)})
    lines.append(_("error rate: %(rate)s") % {"rate": _percent(row.get("error_rate"))})
    if _ringed(row.get("error_rate")):
        lines.append(
            _("red ring: %(percent)s %% or more of calls failed") % {"percent": f"{100 * error_ring_ratio():g}"}
        )
    floor = row.get("floor_ms")
    lines.append(
        _("physical floor (fiber, round trip): %(floor)s")
        % {"floor": _fmt(floor) if floor is not None else floor_note(target)}
    )
    lines.append(_("measured connect p50: %(connect)s") % {"connect": _fmt(row.get("connect_p50"))})
    tax = row.get("tax_ms")
    lines.append(_("latency tax: %(tax)s") % {"tax": _fmt(tax) if tax is not None else _("n/a")})
    if _near_target(row, target):
        # The star sits under this marker: say so where the reader is looking.
        where = label_text(target.get("location_name") or target.get("name") or "")
        lines.append(_("the target is hosted here (★ %(where)s)") % {"where": where})
    return "<br>".join(lines)


def _when(value) -> str:
    return f"{value:%Y-%m-%d %H:%M} UTC"


def health_line(health) -> str:
    """What the hover says about a region's workers (health: a RegionHealth, or None when unknown)."""
    if health is None or health.status == "live":
        return ""
    if health.status == "stale":
        return _("stale: the latest heartbeat came at %(when)s") % {"when": _when(health.last_seen)}
    if health.last_seen is None:
        return _("dark: no worker has ever reported")
    return _("dark: no worker seen since %(when)s") % {"when": _when(health.last_seen)}


def _dark_trace(rows: list[dict], health: dict) -> go.Scattergeo:
    hover = []
    for row in rows:
        lines = [f"<b>{label_text(row['name'])}</b>", health_line(health.get(row["id"]))]
        if row.get("samples"):
            lines.append(
                _("%(samples)s samples, error rate %(rate)s")
                % {"samples": row["samples"], "rate": _percent(row.get("error_rate"))}
            )
        hover.append("<br>".join(lines))
    return go.Scattergeo(
        lat=[r["lat"] for r in rows],
        lon=[r["lon"] for r in rows],
        mode="markers",
        marker={"symbol": "circle-open", "size": DARK_SIZE, "color": DARK_COLOR, "line": {"width": 2.5}},
        text=hover,
        hovertemplate="%{text}<extra></extra>",
        customdata=[r["slug"] for r in rows],
        name=_("dark regions"),
        showlegend=False,
        meta={"role": "dark"},
    )


def _stale_rings(rows: list[dict], sizes: list[float]) -> go.Scattergeo:
    # Over the markers, without a hover of its own: the marker's hover says "stale".
    return go.Scattergeo(
        lat=[r["lat"] for r in rows],
        lon=[r["lon"] for r in rows],
        mode="markers",
        marker={
            "symbol": "circle-open",
            "size": [size + 8 for size in sizes],
            "color": STALE_COLOR,
            "line": {"width": 3},
        },
        hoverinfo="skip",
        customdata=[r["slug"] for r in rows],
        name=_("stale regions"),
        showlegend=False,
        meta={"role": "stale"},
    )


def world_map(
    regions: list[dict],
    target: dict | None,
    metric: str,
    percentile_label: str | float,
    health: dict | None = None,
) -> go.Figure:
    """Regions as markers coloured by their `value` (the chosen percentile),
    sized by samples and ringed in red by error rate; grey where the window
    has no data. With a target that has a location: a star there and a
    great-circle path to it from every region with data. The legend is the
    page's (templates/dashboard/overview.html), under the map.

    Layers, bottom up: paths, the star, grey markers, coloured markers. The
    star is drawn larger than the largest marker and beneath the markers, so
    a region in the target's own city stays visible and hoverable on top of
    it while the star's points still show around it.

    With `health` ({region_id: probes.readings.RegionHealth}): a dark region
    (no worker heard) is a hollow grey ring whatever its window holds, so an
    absent region never passes for a slow one, and a stale region keeps its
    colour inside an amber ring; both say so in the hover. Above the grey
    markers, beneath the coloured ones; the amber rings on top.

    regions: probes.readings.summary rows. target: {"name", "location_name",
    "lat", "lon"} when exactly one target is selected (lat/lon None when it
    has no location), else None. percentile_label: "p50" or 0.5."""
    pname = percentile_name(percentile_label)
    u = unit(metric)
    label = metric_label(metric)
    health = health or {}
    status = {rid: h.status for rid, h in health.items()}
    dark = [r for r in regions if status.get(r.get("id")) == "dark"]
    regions = [r for r in regions if status.get(r.get("id")) != "dark"]
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
                    name=_("path %(region)s") % {"region": label_text(row["slug"])},
                    meta={"role": "path", "region": row["slug"]},
                )
            )
        where = label_text(target.get("location_name") or _("hosting location"))
        target_name = label_text(target.get("name") or _("target"))
        fig.add_trace(
            go.Scattergeo(
                lat=[target["lat"]],
                lon=[target["lon"]],
                mode="markers+text",
                marker={
                    "symbol": "star",
                    "size": STAR_SIZE,
                    "color": TARGET_COLOR,
                    "line": {"width": 1, "color": "#333"},
                },
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

    if without:
        hover = []
        for row in without:
            if row.get("samples"):
                hover.append(
                    f"<b>{label_text(row['name'])}</b><br>"
                    + _("%(samples)s samples, error rate %(rate)s")
                    % {"samples": row["samples"], "rate": _percent(row.get("error_rate"))}
                    + "<br>"
                    + _("no %(metric)s value in this window") % {"metric": label}
                )
            else:
                hover.append(f"<b>{label_text(row['name'])}</b><br>" + _("no data in this window"))
            if note := health_line(health.get(row.get("id"))):
                hover[-1] += "<br>" + note
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
                        "color": [_outline_color(r.get("error_rate")) for r in without],
                    },
                },
                text=hover,
                hovertemplate="%{text}<extra></extra>",
                customdata=[r["slug"] for r in without],
                name=_("no data"),
                showlegend=False,
                meta={"role": "no-data"},
            )
        )

    if dark:
        fig.add_trace(_dark_trace(dark, health))

    most = max((r["samples"] for r in with_data), default=0)
    if with_data:
        fig.add_trace(
            go.Scattergeo(
                lat=[r["lat"] for r in with_data],
                lon=[r["lon"] for r in with_data],
                mode="markers",
                marker={
                    "size": [_marker_size(r["samples"], most) for r in with_data],
                    "color": [r["value"] for r in with_data],
                    "colorscale": colorscale(metric),
                    "cmin": min(r["value"] for r in with_data),
                    "cmax": max(r["value"] for r in with_data),
                    "colorbar": map_colorbar(f"{pname} {label} ({u})"),
                    "line": {
                        "width": [_outline_width(r.get("error_rate")) for r in with_data],
                        "color": [_outline_color(r.get("error_rate")) for r in with_data],
                    },
                    "opacity": 0.95,
                },
                text=[
                    _region_hover(r, metric, pname, target)
                    + (f"<br>{note}" if (note := health_line(health.get(r.get("id")))) else "")
                    for r in with_data
                ],
                hovertemplate="%{text}<extra></extra>",
                customdata=[r["slug"] for r in with_data],
                name=_("regions"),
                showlegend=False,
                meta={"role": "regions"},
            )
        )
    stale = [(r, _marker_size(r["samples"], most)) for r in with_data if status.get(r.get("id")) == "stale"]
    stale += [(r, MARKER_MIN) for r in without if status.get(r.get("id")) == "stale"]
    if stale:
        fig.add_trace(_stale_rings([r for r, _size in stale], [size for _r, size in stale]))

    _style(
        fig,
        margin={"l": 0, "r": 0, "t": 0, "b": 0},
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


# Rows of regions (the distribution and the time series) --------------------------

# Metrics where a larger number is the better one.
HIGHER_IS_BETTER = frozenset(m.name for m in metrics.METRICS if m.higher_is_better)


def map_colorbar(title: str) -> dict:
    """A map's colour bar: under the map, not beside it, so the map keeps the card's whole width, on a phone
    too (the probes' markers and the real users' diamonds alike)."""
    return {
        "title": {"text": title, "side": "top"},
        "orientation": "h",
        "x": 0.5,
        "xanchor": "center",
        "y": 0,
        "yanchor": "top",
        "len": 0.5,
        "thickness": 10,
    }


def colorscale(metric: str) -> str:
    """Cividis (readable with any colour vision, and in greyscale), oriented
    so that lighter is always better: low latencies, many tokens per second."""
    return "Cividis" if metric in HIGHER_IS_BETTER else "Cividis_r"


def percentile_q(percentile: float | str) -> float:
    return metrics.PERCENTILES[percentile] if isinstance(percentile, str) else float(percentile)


def row_labels(rows: list[tuple[str, str | None]]) -> list[str]:
    """Escaped display names for (slug, name) pairs, one per row. Names are
    not unique (two regions may both be "Frankfurt"), and a categorical
    axis would fold equal labels into one row, so a repeated name carries
    its slug."""
    counts: dict[str, int] = defaultdict(int)
    for slug, name in rows:
        counts[name or slug] += 1
    return [
        label_text(name or slug) + (f" ({label_text(slug)})" if counts[name or slug] > 1 else "") for slug, name in rows
    ]


def no_data(fig: go.Figure, text: str) -> go.Figure:
    _style(
        fig,
        xaxis={"visible": False},
        yaxis={"visible": False},
        annotations=[{"text": text, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}],
    )
    return fig


# Phases --------------------------------------------------------------------------


def phases_figure(rows: list[dict]) -> go.Figure:
    """Horizontal stacked bars, one per region, of the six segments of a
    call in fixed colours. rows: probes.readings.phases."""
    # Per target (rows with a target): the target's name with the region's, so no bar stands for two targets.
    names = [
        label_text(" · ".join(x for x in (row.get("target"), row.get("region_name") or row["region"]) if x))
        for row in rows
    ]
    fig = go.Figure()
    for segment, color in SEGMENT_COLORS.items():
        fig.add_trace(
            go.Bar(
                y=names,
                x=[row["segments"][segment] for row in rows],
                orientation="h",
                name=str(SEGMENT_LABELS[segment]),
                marker={"color": color},
                customdata=[row["region"] for row in rows],
                hovertemplate=f"%{{y}}<br>{SEGMENT_LABELS[segment]}: %{{x:.1f}} ms<extra></extra>",
                meta={"segment": segment},
            )
        )
    _style(
        fig,
        margin={"l": 140, "r": 20, "t": 60, "b": 40},
        barmode="stack",
        xaxis={"title": {"text": _("median time (ms); segments are differences of medians")}},
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
