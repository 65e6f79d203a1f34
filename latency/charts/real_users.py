"""The map's real-users layer: one marker per city where real users called from (probes.readings.real_users
rows by place), beside the regions' probe markers. Diamonds, so they never pass for a region's circle;
sized by calls and coloured by p50 TTFT (the first metric of probes.metrics.REAL_USERS)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from django.utils.translation import gettext as _

from latency import labels
from latency.charts import MARKER_MAX, MARKER_MIN, colorscale, label_text, map_colorbar
from latency.real_users import duration
from probes import metrics
from probes.readings.realusers import RealUserRow

REAL_USERS_SYMBOL = "diamond"


def _size(samples: int, most: int) -> float:
    # As the regions' markers: area grows with the count, bounded both ways.
    return MARKER_MIN + (MARKER_MAX - MARKER_MIN) * math.sqrt(samples / most) if most > 0 else MARKER_MIN


def hover(row: RealUserRow) -> str:
    """ "your users near Lagos: p50 TTFT 1.9 s, p95 3.1 s, 42 calls" and the same of every other metric."""
    where = label_text(row.city or row.country or _("an unknown place"))
    lines = []
    for n, m in enumerate(metrics.REAL_USERS):
        words = {
            "where": where,
            "metric": labels.short(m.name),
            "p50": duration(row.figures[f"{m.name}_p50"]),
            "p95": duration(row.figures[f"{m.name}_p95"]),
            "calls": row.samples,
        }
        if n == 0:
            lines.append(_("your users near %(where)s: p50 %(metric)s %(p50)s, p95 %(p95)s, %(calls)s calls") % words)
        else:
            lines.append(_("p50 %(metric)s %(p50)s, p95 %(p95)s") % words)
    if row.errors:
        lines.append(_("errors: %(errors)s") % {"errors": row.errors})
    return "<br>".join(lines)


def real_users_trace(rows: list[RealUserRow], *, scale: bool) -> go.Scattergeo | None:
    """The layer's markers, or None without a placed city; scale: draw its colour bar (the real layer alone)."""
    first = metrics.REAL_USERS[0].name
    placed = [r for r in rows if r.latitude is not None and r.longitude is not None]
    valued = [r.figures[f"{first}_p50"] for r in placed if r.figures[f"{first}_p50"] is not None]
    if not placed:
        return None
    most = max(r.samples for r in placed)
    marker: dict = {
        "symbol": REAL_USERS_SYMBOL,
        "size": [_size(r.samples, most) for r in placed],
        "line": {"width": 1, "color": "rgba(30, 30, 30, 0.8)"},
        "opacity": 0.9,
    }
    if valued:
        marker.update(
            color=[r.figures[f"{first}_p50"] for r in placed],
            colorscale=colorscale(first),
            cmin=min(valued),
            cmax=max(valued),
            showscale=scale,
        )
        if scale:
            marker["colorbar"] = map_colorbar(_("real users, p50 %(metric)s (ms)") % {"metric": labels.short(first)})
    return go.Scattergeo(
        lat=[r.latitude for r in placed],
        lon=[r.longitude for r in placed],
        mode="markers",
        marker=marker,
        text=[hover(r) for r in placed],
        hovertemplate="%{text}<extra></extra>",
        customdata=[r.city or r.country for r in placed],
        name=_("real users"),
        showlegend=False,
        meta={"role": "real-users"},
    )
