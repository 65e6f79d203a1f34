"""An objective's charts (its page, /slos/<id>/): the error budget's burn-down over the window and goodput over
time per region, each with the incidents of its targets shaded as the target page's over-time chart shades them.
Plain functions of probes.readings.slos' rows, returning the figures as plain JSON (latency.charts.plain_figure_json):
plotly's figure objects, which check and copy every property and point, cost the page most of its time."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from django.utils.translation import gettext as _

from latency.charts import label_text, plain_figure_json
from latency.charts.over_time import OKABE_ITO, incident_marks, plotly_time, time_meta

BUDGET_COLOR = "#0072B2"
EXHAUSTED_COLOR = "#D55E00"


def _no_data(text: str) -> dict:
    """latency.charts.no_data's figure, as plain JSON."""
    return plain_figure_json(
        [],
        {
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
            "annotations": [{"text": text, "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}],
        },
    )


def _figure(lines: list[dict], layout: dict, incidents: Sequence, window: tuple[datetime, datetime]) -> dict:
    """The lines and the layout with the incidents shaded (latency.charts.over_time.incident_marks)."""
    shapes, marks, more = incident_marks(incidents, window)
    layout = {**layout, **more, "shapes": [*layout.get("shapes", ()), *shapes]}
    return plain_figure_json([*lines, *marks], layout)


def burn_down_figure(points: Sequence, incidents: Sequence, window: tuple[datetime, datetime]) -> dict:
    """The budget left (a share of the window's budget so far, 100 % untouched, below 0 overspent) after each hour
    of the window. points: probes.readings.slos.burn_down."""
    shown = [p for p in points if p.remaining_ratio is not None]
    if not shown:
        return _no_data(_("No eligible calls in this window yet."))
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
    exhausted = {
        "type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": 0, "y1": 0,
        "line": {"color": EXHAUSTED_COLOR, "width": 1, "dash": "dash"},
    }  # fmt: skip
    layout = {
        "height": 300,
        "showlegend": False,
        "xaxis": {"type": "date", "title": {"text": _("time, UTC")}, "range": [plotly_time(w) for w in window]},
        "meta": time_meta(),
        "yaxis": {"title": {"text": _("error budget left (%)")}, "ticksuffix": " %"},
        "shapes": [exhausted],
    }
    return _figure([line], layout, incidents, window)


def goodput_figure(rows: Sequence, incidents: Sequence, window: tuple[datetime, datetime]) -> dict:
    """Good calls per hour (lines) and the share of eligible calls that were good (hover) per region and bucket.
    rows: probes.readings.slos.goodput by region."""
    by_region: dict[str, list] = defaultdict(list)
    for row in rows:
        by_region[row.region_slug].append(row)
    if not any(row.counts.eligible for row in rows):
        return _no_data(_("No eligible calls in this window yet."))
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
    layout = {
        "height": 320,
        "hovermode": "x unified",
        "xaxis": {"type": "date", "title": {"text": _("time, UTC")}, "range": [plotly_time(w) for w in window]},
        "meta": time_meta(),
        "yaxis": {"title": {"text": _("good calls per hour")}, "rangemode": "tozero"},
        "legend": {"title": {"text": _("region")}},
    }
    return _figure(lines, layout, incidents, window)
