"""The distribution chart: a box row per region (or per target x region, grouped by target), from its histogram."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go
from django.utils.translation import gettext as _

from latency.charts import (
    HIGHER_IS_BETTER,
    _fmt,
    _style,
    axis_title,
    label_text,
    no_data,
    percentile_name,
    percentile_q,
    row_labels,
    unit,
)
from latency.charts.over_time import OKABE_ITO
from probes.histogram import MIN_VALUE, Histogram


def tick_text(value: float, metric: str) -> str:
    """A tick's label with its unit: "200 ms", "1.5 s", "2,000 tok/s"."""
    u = unit(metric)
    if u == "ms" and value >= 1000:
        return f"{value / 1000:,g} s"
    return f"{value:,g} {u}"


# Candidate tick sets per decade, finest first. No 1.5, 4 or 7: on a log
# axis in a half-width card, 300-400-500 or 500-700 labels run into each other.
TICK_LADDERS = ((1, 2, 3, 5), (1, 2, 5), (1, 3), (1,))


def log_ticks(low: float, high: float, most: int = 7) -> tuple[list[float], tuple[float, float]]:
    """Tick values for a log axis showing [low, high] (both > 0), and the
    axis range (log10) they span: the finest of TICK_LADDERS that gives at
    most `most` ticks, so labels never bunch up; the range reaches out to
    the nearest tick on either side, so both ends are labelled."""
    first, last = math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1
    for ladder in TICK_LADDERS:
        values = sorted(float(f"{m * 10.0**e:.12g}") for e in range(first, last + 1) for m in ladder)
        below = max(v for v in values if v <= low * (1 + 1e-9))
        above = min(v for v in values if v >= high * (1 - 1e-9))
        if below == above:  # one value (or all equal): a tick either side, so the axis has a scale
            below, above = max(v for v in values if v < below), min(v for v in values if v > above)
        ticks = [v for v in values if below <= v <= above]
        if len(ticks) <= most:
            break
    else:  # even whole decades would crowd (over `most` decades): every n-th decade
        stride = math.ceil(len(ticks) / most)
        ticks = ticks[::stride]
        above = max(above, ticks[-1])
    pad = 0.02 * max(math.log10(above / below), 0.1)
    return ticks, (math.log10(below) - pad, math.log10(above) + pad)


# A box row is drawn from these percentiles of the region's histogram. The
# whiskers stop at p5 and p95 rather than Tukey's fences: here the tail is
# the subject, not outliers to hide.
BOX_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
# One neutral colour for every row: a row is named by its label, so no two
# regions can be confused by colour.
BOX_COLOR = "#4a6f94"
BOX_FILL = "rgba(74, 111, 148, 0.3)"
# Okabe-Ito vermilion: the selected percentile stands out from the boxes.
PERCENTILE_MARKER_COLOR = "#D55E00"
BOX_ROW_PX = 28


def _fill(color: str) -> str:
    """A target's box colour (#rrggbb) at the neutral fill's opacity."""
    red, green, blue = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, 0.3)"


def histogram_figure(
    hists: dict[Any, Histogram],
    metric: str,
    percentile: float | str = 0.5,
    *,
    names: dict[Any, str] | None = None,
    targets: dict[int, str] | None = None,
) -> go.Figure:
    """One horizontal box row per region, labelled with its name, sorted by
    median: the fastest at the top, or for tokens/s (higher is better) the
    highest. Box p25 to p75, line at the median, whiskers p5 to p95, and
    the selected percentile as a marker; all read from the region's
    histogram (bucket midpoints, within 1% of the exact value). One colour
    for every row, a log x axis with 1-2-5 ticks, and a height that grows
    with the rows.

    hists: probes.readings.distribution (region slug to Histogram);
    names: region slug to display name (the slug where missing).

    targets (per target, never pooled): hists keyed (target_id, region
    slug) as probes.readings.distribution_by_target gives them, names keyed
    the same, and targets mapping target_id to its name. Rows then come in
    one group per target (by target name, each group by median), every
    label and hover names target and region, and each target's boxes have
    a colour and a legend entry of their own."""
    names = names or {}
    pname = percentile_name(percentile)
    q = percentile_q(percentile)
    higher_better = metric in HIGHER_IS_BETTER
    fig = go.Figure()
    stats = []
    for key, hist in hists.items():
        if not hist.count:
            continue
        # Bucket 0 reads as 0, which a log axis cannot place: the histogram's floor instead.
        values = [max(hist.percentile(x) or 0.0, MIN_VALUE) for x in (*BOX_QUANTILES, q)]
        group = "" if targets is None else str(targets.get(key[0], key[0]))
        slug = key if targets is None else key[1]
        name = names.get(key)
        if targets is not None:
            name = f"{group} · {name or slug}"
        stats.append(
            {"key": key, "slug": slug, "name": name, "group": group, "box": values[:-1], "mark": values[-1],
             "n": hist.count}
        )  # fmt: skip
    if not stats:
        return no_data(fig, _("No values of this metric in this window."))
    # One group per target (by name; a single group when pooled), each by median.
    stats.sort(
        key=lambda s: (s["group"], -s["box"][2] if higher_better else s["box"][2], s["name"] or s["slug"], s["slug"])
    )
    labels = row_labels([(s["slug"], s["name"]) for s in stats])
    suffix = f" {unit(metric)}"
    hover = []
    for label, s in zip(labels, stats, strict=True):
        p5, p25, p50, p75, p95 = (_fmt(v, suffix) for v in s["box"])
        hover.append(
            f"<b>{label}</b><br>p5 {p5} · p25 {p25} · {_('median')} {p50} · p75 {p75} · p95 {p95}"
            f"<br><b>{pname}: {_fmt(s['mark'], suffix)}</b><br>{_('samples')}: {s['n']}"
        )
    groups = list(dict.fromkeys(s["group"] for s in stats))
    for i, group in enumerate(groups):
        rows = [(label, s) for label, s in zip(labels, stats, strict=True) if s["group"] == group]
        color = BOX_COLOR if targets is None else OKABE_ITO[i % len(OKABE_ITO)]
        # Per target, the legend names the target (short enough for a phone's width); the hover names every
        # number of the box.
        name = _("box p25–p75, line median, whiskers p5–p95") if targets is None else label_text(group)
        fig.add_trace(
            go.Box(
                y=[label for label, _s in rows],
                q1=[s["box"][1] for _label, s in rows],
                median=[s["box"][2] for _label, s in rows],
                q3=[s["box"][3] for _label, s in rows],
                lowerfence=[s["box"][0] for _label, s in rows],
                upperfence=[s["box"][4] for _label, s in rows],
                orientation="h",
                name=name,
                marker={"color": color},
                line={"color": color, "width": 1.5},
                fillcolor=BOX_FILL if targets is None else _fill(color),
                # The marker's hover names every number of the row; the box's own would repeat them.
                hoverinfo="skip",
                meta={"role": "box"} if targets is None else {"role": "box", "target": label_text(group)},
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[s["mark"] for s in stats],
            y=labels,
            mode="markers",
            marker={
                "symbol": "diamond",
                "size": 11,
                "color": PERCENTILE_MARKER_COLOR,
                "line": {"width": 1, "color": "white"},
            },
            name=_("%(percentile)s (selected percentile)") % {"percentile": pname},
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            meta={"role": "percentile", "percentile": pname},
        )
    )
    lows = [s["box"][0] for s in stats] + [s["mark"] for s in stats]
    highs = [s["box"][4] for s in stats] + [s["mark"] for s in stats]
    ticks, x_range = log_ticks(min(lows), max(highs))
    order = _("higher is better: highest at the top") if higher_better else _("fastest at the top")
    _style(
        fig,
        margin={"l": 10, "r": 20, "t": 40, "b": 50},
        # At least 300 px: on a phone the legend moves under the chart and the
        # x axis labels wrap, and a few rows must still get a plot to read.
        height=max(300, 130 + BOX_ROW_PX * len(stats)),
        # Anywhere along a row shows that row's numbers.
        hovermode="y",
        xaxis={
            "type": "log",
            "range": list(x_range),
            "tickvals": ticks,
            "ticktext": [tick_text(v, metric) for v in ticks],
            "title": {"text": f"{axis_title(metric)} · {order}"},
        },
        yaxis={"type": "category", "autorange": "reversed", "automargin": True},
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
    )
    return fig
