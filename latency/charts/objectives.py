"""An objective's charts (its page, /slos/<id>/): the error budget's burn-down over the window and goodput over
time per region, each with the incidents of its targets shaded as the target page's over-time chart shades them.
Plain functions of probes.readings.slos' rows, returning the figures as JSON (latency.charts.figure_json): their
lines of many points are plain trace dicts, not plotly objects that check every point."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

import plotly.graph_objects as go
from django.utils.translation import gettext as _

from latency.charts import _style, figure_json, label_text, no_data
from latency.charts.over_time import OKABE_ITO, plotly_time, shade_incidents, time_meta

BUDGET_COLOR = "#0072B2"
EXHAUSTED_COLOR = "#D55E00"


def burn_down_figure(points: Sequence, incidents: Sequence, window: tuple[datetime, datetime]) -> dict:
    """The budget left (a share of the window's budget so far, 100 % untouched, below 0 overspent) after each hour
    of the window. points: probes.readings.slos.burn_down."""
    fig = go.Figure()
    shown = [p for p in points if p.remaining_ratio is not None]
    if not shown:
        return figure_json(no_data(fig, _("No eligible calls in this window yet.")))
    line = {
        "type": "scatter",
        "x": [plotly_time(p.hour) for p in shown],
        "y": [p.remaining_ratio * 100 for p in shown],
        "mode": "lines",
        "line": {"color": BUDGET_COLOR, "width": 2, "shape": "hv"},
        "name": _("budget left"),
        "hovertemplate": "%{y:.1f} %<extra></extra>",
        "meta": {"role": "burn-down"},
    }
    # Where the budget runs out: the line a burn-down falls through.
    fig.add_hline(y=0, line={"color": EXHAUSTED_COLOR, "width": 1, "dash": "dash"})
    _style(
        fig,
        height=300,
        showlegend=False,
        xaxis={"type": "date", "title": {"text": _("time, UTC")}, "range": [plotly_time(w) for w in window]},
        meta=time_meta(),
        yaxis={"title": {"text": _("error budget left (%)")}, "ticksuffix": " %"},
    )
    return figure_json(shade_incidents(fig, incidents, window), traces=[line])


def goodput_figure(rows: Sequence, incidents: Sequence, window: tuple[datetime, datetime]) -> dict:
    """Good calls per hour (lines) and the share of eligible calls that were good (hover) per region and bucket.
    rows: probes.readings.slos.goodput by region."""
    fig = go.Figure()
    by_region: dict[str, list] = defaultdict(list)
    for row in rows:
        by_region[row.region_slug].append(row)
    if not any(row.counts.eligible for row in rows):
        return figure_json(no_data(fig, _("No eligible calls in this window yet.")))
    hover = (
        "%{fullData.name}: %{y:.0f} "
        + _("good calls per hour")
        + "<br>"
        + _("attainment")
        + " %{customdata[0]} ("
        + _("eligible")
        + " %{customdata[1]})<extra></extra>"
    )
    lines = [
        {
            "type": "scatter",
            "x": [plotly_time(r.bucket) for r in series],
            "y": [r.goodput_per_hour for r in series],
            "customdata": [
                ["–" if r.attainment is None else f"{r.attainment * 100:.2f} %", r.counts.eligible] for r in series
            ],
            "mode": "lines+markers",
            "marker": {"size": 4},
            "line": {"color": color, "width": 2},
            "name": label_text(slug),
            "hovertemplate": hover,
            "meta": {"region": slug},
        }
        for (slug, series), color in zip(sorted(by_region.items()), OKABE_ITO * 4, strict=False)
    ]
    _style(
        fig,
        height=320,
        hovermode="x unified",
        xaxis={"type": "date", "title": {"text": _("time, UTC")}, "range": [plotly_time(w) for w in window]},
        meta=time_meta(),
        yaxis={"title": {"text": _("good calls per hour")}, "rangemode": "tozero"},
        legend={"title": {"text": _("region")}},
    )
    return figure_json(shade_incidents(fig, incidents, window), traces=lines)
