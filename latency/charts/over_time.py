"""The time-series chart: a region (or target x region) x time heatmap, or a line per region (or target x region)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from django.utils.translation import gettext as _

from latency.charts import (
    _fmt,
    _style,
    axis_title,
    colorscale,
    metric_label,
    no_data,
    percentile_name,
    row_labels,
    unit,
)

# Okabe & Ito's eight colours, told apart also with colour-blindness: lines
# are drawn for at most this many regions, so no two share a colour.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
MAX_LINES = len(OKABE_ITO)
OVER_TIME_FORMS = ("heatmap", "lines")
HEATMAP_ROW_PX = 24

if TYPE_CHECKING:
    from probes.readings import IncidentRow


def time_meta() -> dict:
    """The time axis' title with the zone left open: static/js/time.js names the zone it draws the times in."""
    return {"time_title": _("time, %(zone)s")}


def wants_lines(choice: str | None, selected_regions: int, *, per_target: bool = False) -> bool:
    """Lines when asked for, or by default when the reader has chosen at
    most MAX_LINES regions; otherwise the heatmap, which reads at any count.
    per_target (several targets kept apart): by default lines only for one
    chosen region, a line per target; else a heatmap row per target x region."""
    if choice in OVER_TIME_FORMS:
        return choice == "lines"
    if per_target:
        return selected_regions == 1
    return 1 <= selected_regions <= MAX_LINES


def series_value(row: dict, pname: str):
    """The chosen percentile of a series row: its `value`; from a reader
    that gives p50 and p95 only, the column of that name (else None)."""
    if "value" in row:
        return row["value"]
    return row.get(pname) if pname in ("p50", "p95") else None


def series_time(row: dict) -> datetime:
    """Where a row's point belongs: the time its samples were taken (`at`),
    else its bucket's start."""
    return row.get("at") or row["bucket_start"]


def plotly_time(when: datetime) -> str:
    """A UTC time as Plotly's date axis reads it: no offset and at most
    milliseconds (plotly.js reads "+00:00" or microseconds as no date)."""
    return when.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="milliseconds")


def _with_gaps(points: list[tuple[str, datetime, float | None]], step_s: float | None):
    """Lines break where buckets are missing instead of bridging them."""
    xs: list[str | None] = []
    ys: list[float | None] = []
    previous = None
    for when, stamp, y in points:
        if previous is not None and step_s and (stamp - previous).total_seconds() > step_s * 1.5:
            xs.append(None)
            ys.append(None)
        xs.append(when)
        ys.append(y)
        previous = stamp
    return xs, ys


def _step(rows: list[dict], step: timedelta | None) -> timedelta | None:
    if step:
        return step
    stamps = sorted({r["bucket_start"] for r in rows})
    gaps = [b - a for a, b in pairwise(stamps)]
    return min(gaps) if gaps else None


def timeseries_figure(
    rows: list[dict],
    metric: str,
    percentile: float | str = 0.5,
    *,
    lines: bool = False,
    step: timedelta | None = None,
    window: tuple[datetime, datetime] | None = None,
    incidents: Sequence[IncidentRow] = (),
) -> go.Figure:
    """The chosen percentile of the metric per region over time: a region x
    time heatmap (rows by name, a cell per time bucket, empty where a bucket
    has no data), or with lines=True and at most MAX_LINES regions one line
    per region in the Okabe-Ito colours. lines=True with more regions draws
    the heatmap and says why.

    rows: probes.readings.series. step: its bucket size
    (probes.readings.bucket_size); window: (since, until), where the first
    and last cells are cut off. incidents: probes.readings.incidents_overlapping for the window, each shaded
    over its span and named in the legend and the hover."""
    pname = percentile_name(percentile)
    # A row per region, or per target x region when the rows name their target (series_by_target): a
    # target's series is never merged with another's.
    by_region: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        by_region[(row.get("target", ""), row.get("target_id", 0), row["region"])].append(row)
    slugs = sorted(by_region, key=lambda k: (k[0], k[1], by_region[k][0].get("region_name") or k[2], k[2]))
    labels = row_labels([(k[2], _row_name(k[0], by_region[k][0].get("region_name") or k[2])) for k in slugs])
    per_target = any(k[0] for k in slugs)
    fig = go.Figure()
    if all(series_value(row, pname) is None for row in rows):
        return no_data(fig, _("No %(percentile)s values of this metric in this window.") % {"percentile": pname})
    size = _step(rows, step)
    if lines and len(slugs) <= MAX_LINES:
        return shade_incidents(_lines(fig, by_region, slugs, labels, metric, pname, size), incidents, window)
    note = None
    if lines and per_target:
        note = _("Lines show at most %(count)d targets × regions; choose one region for a line per target.") % {
            "count": MAX_LINES
        }
    elif lines:
        note = _("Lines show at most %(count)d regions; choose up to %(count)d in the region filter.") % {
            "count": MAX_LINES
        }
    return shade_incidents(
        _heatmap(fig, by_region, slugs, labels, metric, pname, size, window, note), incidents, window, above=True
    )


INCIDENT_RED = "rgb(180, 35, 24)"


def incident_marks(
    incidents: Sequence[IncidentRow], window: tuple[datetime, datetime] | None, *, above=False
) -> tuple[list[dict], list[dict], dict]:
    """Each incident's span as a translucent rectangle over the plot's height (above a heatmap, whose cells
    would hide it; below lines), and a line along its top, on an axis of its own, that names it in the legend
    and the hover. An open incident's span runs to the window's end. As plain dicts: (shapes, traces, the
    layout they need), nothing when no incident falls in the window."""
    shapes, traces = [], []
    for incident in incidents:
        start, end = incident.started_at, incident.resolved_at or (window[1] if window else incident.started_at)
        if window is not None:
            start, end = max(start, window[0]), min(end, window[1])
        if end <= start:
            continue
        x0, x1 = plotly_time(start), plotly_time(end)
        shapes.append(
            {"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1, "y0": 0, "y1": 1,
             "fillcolor": "rgba(180, 35, 24, 0.12)", "line": {"width": 1, "color": INCIDENT_RED, "dash": "dot"},
             "layer": "above" if above else "below", "name": f"incident-{incident.id}"}
        )  # fmt: skip
        regions = incident.region_names or _("all regions")
        traces.append(
            {
                "type": "scatter",
                "x": [x0, x1],
                "y": [1, 1],
                "yaxis": "y2",
                "mode": "lines",
                "line": {"color": INCIDENT_RED, "width": 4},
                "name": _("Incident: %(rule)s · %(target)s")
                % {"rule": incident.rule_name, "target": incident.target_name},
                "legendgroup": "incidents",
                "text": [regions, regions],
                "hovertemplate": "<b>%{fullData.name}</b><br>%{text}<br>%{x}<extra></extra>",
                "meta": {"role": "incident", "incident": incident.id},
            }
        )
    if not shapes:
        return [], [], {}
    layout: dict = {
        "yaxis2": {"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
        "showlegend": True,
    }
    if above:
        # Beside a heatmap the colour bar holds the right: the incidents are named in a row above the plot
        # (Plotly widens the top margin to fit it).
        layout["legend"] = {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"}
    return shapes, traces, layout


def shade_incidents(
    fig: go.Figure, incidents: Sequence[IncidentRow], window: tuple[datetime, datetime] | None, *, above=False
) -> go.Figure:
    """The figure with incident_marks added."""
    shapes, traces, layout = incident_marks(incidents, window, above=above)
    if not shapes:
        return fig
    for trace in traces:
        fig.add_trace(trace)
    fig.update_layout(shapes=[*(fig.layout.shapes or ()), *shapes], **layout)
    return fig


def _row_name(target: str, region: str) -> str:
    """A row's or line's name: the region's, or the target's and the region's."""
    return f"{target} · {region}" if target else region


def _lines(fig, by_region, slugs, labels, metric, pname, size) -> go.Figure:
    u = unit(metric)
    step_s = size.total_seconds() if size else None
    for slug, label, color in zip(slugs, labels, OKABE_ITO, strict=False):
        series = sorted(by_region[slug], key=lambda r: r["bucket_start"])
        points = [(plotly_time(series_time(r)), r["bucket_start"], series_value(r, pname)) for r in series]
        xs, ys = _with_gaps(points, step_s)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines+markers",
                marker={"size": 5},
                name=label,
                line={"color": color, "width": 2},
                connectgaps=False,
                hovertemplate=f"%{{fullData.name}}: %{{y:.1f}} {u}<extra></extra>",
                meta={"region": slug[2], "stat": pname, **({"target": slug[1]} if slug[0] else {})},
            )
        )
    _style(
        fig,
        hovermode="x unified",
        xaxis={"type": "date", "title": {"text": _("time, UTC")}},
        meta=time_meta(),
        yaxis={"title": {"text": f"{pname} {axis_title(metric)}"}, "rangemode": "tozero"},
        legend={
            "title": {
                "text": (
                    _("%(percentile)s per target and region")
                    if any(k[0] for k in slugs)
                    else _("%(percentile)s per region")
                )
                % {"percentile": pname}
            }
        },
    )
    return fig


def _span_text(start: datetime, end: datetime) -> str:
    if end - start >= timedelta(days=1) and start.hour == 0 and start.minute == 0:
        return f"{start:%Y-%m-%d} – {end:%Y-%m-%d} UTC"
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC"
    return f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} UTC"


def _heatmap(fig, by_region, slugs, labels, metric, pname, size, window, note) -> go.Figure:
    u = unit(metric)
    suffix = f" {u}"
    starts = sorted({r["bucket_start"] for series in by_region.values() for r in series})
    columns = list(starts)
    if size:
        # Every bucket of the span is a column, so a time without data is an empty one.
        columns, when = [], starts[0]
        while when <= starts[-1]:
            columns.append(when)
            when += size
        columns = sorted(set(columns) | set(starts))
    ends = [*columns[1:], columns[-1] + (size or timedelta(hours=1))]
    edges = [*columns, ends[-1]]
    if window is not None:
        edges[0] = max(edges[0], window[0])
        edges[-1] = min(edges[-1], window[1])
    index = {start: i for i, start in enumerate(columns)}
    # A column's time span is the same text in every region's row.
    spans = [_span_text(edges[i], edges[i + 1]) for i in range(len(columns))]
    z: list[list[float | None]] = []
    custom: list[list[list]] = []
    for slug in slugs:
        values: list[float | None] = [None] * len(columns)
        cells: list[list] = [["", "", ""] for _ in columns]
        for row in by_region[slug]:
            i = index[row["bucket_start"]]
            value = series_value(row, pname)
            values[i] = value
            cells[i] = [spans[i], _fmt(value, suffix), row.get("samples", 0)]
        z.append(values)
        custom.append(cells)
    present = [v for row in z for v in row if v is not None]
    title = f"{pname} {metric_label(metric)} ({u})"
    fig.add_trace(
        go.Heatmap(
            # Object arrays, not nested lists: plotly validates and deep-copies a nested list element by element
            # (twice: the trace, then the figure's copy), an array as one; the JSON is the same lists (issue 17).
            z=np.array(z, dtype=object),
            x=[plotly_time(e) for e in edges],
            y=labels,
            customdata=np.array(custom, dtype=object),
            # The map's scale and orientation (lighter is better), so a colour
            # means the same on both charts.
            colorscale=colorscale(metric),
            zmin=min(present) if present else None,
            zmax=max(present) if present else None,
            colorbar={"title": {"text": title, "side": "right"}, "thickness": 12},
            hoverongaps=False,
            xgap=1,
            ygap=1,
            hovertemplate=(
                "<b>%{y}</b><br>%{customdata[0]}<br>"
                + f"{pname} {metric_label(metric)}: %{{customdata[1]}}<br>"
                + _("samples")
                + ": %{customdata[2]}<extra></extra>"
            ),
            meta={"role": "heatmap", "stat": pname},
        )
    )
    annotations = []
    if note:
        annotations.append(
            {"text": note, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0, "y": 1.0,
             "xanchor": "left", "yanchor": "bottom"}
        )  # fmt: skip
    _style(
        fig,
        margin={"l": 10, "r": 10, "t": 40 if note else 20, "b": 50},
        # At least 300 px, as the distribution: a phone's wrapped time labels
        # take their share and a few rows still get a plot to read.
        height=max(300, 110 + HEATMAP_ROW_PX * len(slugs)),
        xaxis={"type": "date", "title": {"text": _("time, UTC")}},
        meta=time_meta(),
        yaxis={"type": "category", "autorange": "reversed", "automargin": True},
        annotations=annotations,
    )
    return fig
