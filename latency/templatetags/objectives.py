"""The objective pages' repeated figures, as HTML built here rather than by template includes: the budget bar,
the burn rates and the rows of the per region and per region x target tables (latency.slo_views lays out the
values). An objective's page holds a row per region and per target x region, each of twenty figures; an include
per part and a floatformat per figure made most of its render time.

Numbers are written as floatformat writes them (fixed): half up, no "-0", the active language's decimal mark."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django import template
from django.utils import formats
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

register = template.Library()

DASH = "–"
COUNT_FIGURES = ("eligible", "good", "degraded", "bad", "missed", "excluded")


def fixed(value: float | None, digits: int) -> str:
    """value with `digits` decimals, as {{ value|floatformat:digits }} writes it; a dash for None."""
    if value is None:
        return DASH
    if not math.isfinite(value):
        return str(value)
    number = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = f"{abs(number) if number.is_zero() else number:f}"
    mark = formats.get_format("DECIMAL_SEPARATOR")
    return text if mark == "." else text.replace(".", mark)


@register.simple_tag
def budget_bar(b: Mapping[str, Any]) -> SafeString:
    """The budget left as a meter and its share in words (latency.slo_views.budget_view's bar, overspent,
    overspent_by and remaining), or a dash without eligible calls."""
    if b["bar"] is None:
        return mark_safe(DASH)
    if b["overspent"]:
        words = format_html(
            '<strong class="overspent-text">{}</strong>',
            gettext("overspent by %(by)s %%") % {"by": fixed(b["overspent_by"], 1)},
        )
    else:
        words = format_html(
            '<span class="budget-left">{}</span>', gettext("%(left)s %% left") % {"left": fixed(b["remaining"], 1)}
        )
    return format_html(
        '<span class="budget"><meter class="budget-bar{}" min="0" max="1" low="0.25" high="0.5" optimum="1" '
        'value="{}" aria-label="{}"></meter>\n  {}</span>',
        " overspent" if b["overspent"] else "",
        f"{b['bar']:.4f}",
        gettext("Error budget left"),
        words,
    )


def _rate(burn: Mapping[str, Any]) -> str:
    return DASH if burn["rate"] is None else f"{fixed(burn['rate'], 2)}×"


@register.simple_tag
def burn_cells(burn: Iterable[Mapping[str, Any]]) -> SafeString:
    """A table cell per burn window (latency.slo_views.burn_view), flagged fast above 1."""
    return format_html_join(
        "",
        '<td class="num burn{}" data-window="{}">{}</td>',
        ((" fast" if b["fast"] else "", b["window"], _rate(b)) for b in burn),
    )


@register.simple_tag
def burn_inline(burn: Iterable[Mapping[str, Any]]) -> SafeString:
    """The burn rates as a list, window by window."""
    items = format_html_join(
        "",
        '<li class="burn{}" data-window="{}"><span class="burn-window">{}</span> {}</li>',
        ((" fast" if b["fast"] else "", b["window"], b["window"], _rate(b)) for b in burn),
    )
    return format_html('<ul class="burn-list" aria-label="{}">{}</ul>', gettext("Burn rate per window"), items)


@register.simple_tag
def counts_cells(counts: Any) -> SafeString:
    """A table cell per count (a probes.readings.slos.Counts): eligible, good, degraded, bad, missed, excluded."""
    return format_html_join(
        "", '<td class="num" data-figure="{}">{}</td>', ((name, getattr(counts, name)) for name in COUNT_FIGURES)
    )


def _percent(value: float | None, digits: int) -> str:
    return DASH if value is None else f"{fixed(value, digits)} %"


@register.simple_tag
def cell_rows(lines: Sequence[Mapping[str, Any]], per_target: bool, has_mix: bool) -> SafeString:
    """The rows of an objective's table per region (per_target False) or per region x target
    (latency.slo_views.cell_view's lines), the columns of templates/objectives/_cells.html's head."""
    rows = []
    for line in lines:
        cell, budget = line["cell"], line["budget"]
        target = format_html("<td>{}</td>", cell.target_name) if per_target else ""
        share = format_html('<td class="num">{}</td>', _percent(line["share"], 1)) if has_mix and not per_target else ""
        rows.append(
            format_html(
                '\n    <tr data-region="{}"{}>\n      <th scope="row">{}</th>{}{}'
                '<td class="num" data-figure="attainment">{}</td>{}'
                '<td class="num" data-figure="budget_used">{}</td><td class="num" data-figure="budget_allowed">{}</td>'
                "<td>{}</td>{}\n    </tr>",
                cell.region_slug,
                format_html(' data-target="{}"', cell.target_id) if per_target else "",
                cell.region_name or cell.region_slug,
                target,
                share,
                _percent(line["attainment"], 3),
                counts_cells(line["counts"]),
                fixed(budget.used, 1),
                fixed(budget.allowed, 1),
                budget_bar(line),
                burn_cells(line["burn"]),
            )
        )
    return mark_safe("".join(rows))
