"""Objective pages: /slos/ (every objective), /slos/<id>/ (one, per region x target, with its charts), the SLA
report /slos/<id>/report and its CSV /export/slo-report.csv.

Every figure is read from probes.readings.slos and probes.readings.slo_report; here they are only laid out for
the templates (percentages, the budget bar, labels). The report's period is latency.slo_forms.ReportPeriodForm's,
the API's and the CSV's too. Who may read is latency.access's rule (objective_page, objective_export)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from latency.access import objective_export, objective_page
from latency.charts.objectives import burn_down_figure, goodput_figure
from latency.export_views import bad_parameter
from latency.slo_forms import MONTH, MONTH_SO_FAR, ReportExportForm, ReportPeriodForm
from probes.exports.responses import csv_response
from probes.exports.slo_report import read_report, report_filename, slo_report_csv
from probes.models import ServiceLevelObjective
from probes.readings import slo_history, slo_report, slos
from probes.readings.selection import BadParameter

STATUS_LABELS = {
    "ok": gettext_lazy("ok"),
    "ticket": gettext_lazy("ticket: burning too fast for the window"),
    "page": gettext_lazy("page: burning fast"),
    "exhausted": gettext_lazy("budget exhausted"),
    "no_data": gettext_lazy("no data"),
    "rebuilding": gettext_lazy("rebuilding the counts"),
    "disabled": gettext_lazy("disabled"),
}


def duration_text(span: timedelta) -> str:
    """A duration to the minute, as the report prints it: "2 d 3 h 05 min", "45 min"."""
    minutes = int(span.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return _("%(d)d d %(h)d h %(m)02d min") % {"d": days, "h": hours, "m": minutes}
    if hours:
        return _("%(h)d h %(m)02d min") % {"h": hours, "m": minutes}
    return _("%(m)d min") % {"m": minutes}


def percent(ratio: float | None) -> float | None:
    return None if ratio is None else ratio * 100.0


def budget_view(budget: slos.Budget) -> dict:
    """A budget as a page shows it: attainment and the shares in percent, the bar's value held in [0, 1]."""
    remaining = budget.remaining_ratio
    return {
        "budget": budget,
        "counts": budget.counts,
        "attainment": percent(budget.attainment),
        "remaining": percent(remaining),
        "used": percent(budget.used_ratio),
        "bar": None if remaining is None else min(max(remaining, 0.0), 1.0),
        "overspent": remaining is not None and remaining < 0,
        "overspent_by": None if remaining is None or remaining >= 0 else -remaining * 100.0,
    }


def burn_view(burn: dict[str, float | None]) -> list[dict]:
    """The burn rates, shortest window first, each flagged when above 1 (spending faster than the window)."""
    return [
        {"window": label, "rate": burn.get(label), "fast": (burn.get(label) or 0) > 1}
        for label, _span in slos.BURN_WINDOWS
    ]


def row_view(row: slos.ObjectiveRow) -> dict:
    return {
        "row": row,
        "status_label": STATUS_LABELS[row.status],
        "burn": burn_view(row.burn),
        **budget_view(row.budget),
    }


def cell_view(cell: slos.CellRow) -> dict:
    return {"cell": cell, "share": percent(cell.share), "burn": burn_view(cell.burn), **budget_view(cell.budget)}


@objective_page
def objectives(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    rows = [row_view(row) for row in slos.objective_rows(now)]
    return render(
        request, "objectives/list.html", {"rows": rows, "windows": [label for label, _span in slos.BURN_WINDOWS]}
    )


def _objective_or_404(slo_id: int) -> ServiceLevelObjective:
    objective = ServiceLevelObjective.objects.filter(id=slo_id).first()
    if objective is None:
        raise Http404(_("No such objective."))
    return objective


# Windows longer than this chart their goodput by the day.
GOODPUT_BY_DAY_FROM = timedelta(days=3)


def goodput_bucket(window: tuple[datetime, datetime]) -> Literal["hour", "day"]:
    return "day" if window[1] - window[0] > GOODPUT_BY_DAY_FROM else "hour"


@objective_page
def objective(request: HttpRequest, slo_id: int) -> HttpResponse:
    _objective_or_404(slo_id)
    now = timezone.now()
    row = slos.objective_row(slo_id, now, cells=True)
    if row is None:
        raise Http404(_("No such objective."))
    window = (row.since, now)
    incidents = slo_report.objective_incidents(slo_id, *window)
    charts = {}
    if row.counting:
        charts = {
            "burn_down": burn_down_figure(slo_history.burn_down(slo_id, now), incidents, window),
            # By the day over a long window (a month by the hour is 720 points a region); the burn-down beside it
            # and the incidents' shading keep the hours. The current day's goodput is per hour of it so far
            # (probes.readings.slos.goodput).
            "goodput": goodput_figure(slo_history.goodput(slo_id, *window, goodput_bucket(window)), incidents, window),
        }
    month_start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    summary = row_view(row)
    context = {
        **summary,
        "summary": summary,
        "previous_month": f"{month_start - timedelta(days=1):%Y-%m}",
        "cells": [cell_view(c) for c in row.cells],
        "regions": [cell_view(c) for c in row.regions],
        "windows": [label for label, _span in slos.BURN_WINDOWS],
        "incidents": incidents,
        "charts": charts,
        "now": now,
    }
    return render(request, "objectives/detail.html", context)


def report_context(report: slo_report.Report, period, now: datetime) -> dict:
    return {
        "report": report,
        "row": report.objective,
        "period": period,
        "month": period.kind in (MONTH, MONTH_SO_FAR),
        "month_so_far": period.kind == MONTH_SO_FAR,
        "rows": [{"row": r, **budget_view(r.budget)} for r in report.rows],
        "total": budget_view(report.total),
        "incidents": [
            {"incident": i, "duration": duration_text(report.incident_duration(i))} for i in report.incidents
        ],
        "silences": [{"silence": s, "duration": duration_text(s.duration)} for s in report.silences],
        "partial": report.exact_since is not None and report.exact_since > report.since,
        "csv_query": f"slo={report.objective.id}" + (f"&{period.query()}" if period.query() else ""),
        "now": now,
    }


@objective_page
def report(request: HttpRequest, slo_id: int) -> HttpResponse:
    objective = _objective_or_404(slo_id)
    now = timezone.now()
    form = ReportPeriodForm(request.GET, now=now)
    try:
        period = form.result()
    except BadParameter as exc:
        context = {"objective": objective, "error": {"message": str(exc), "param": exc.param}}
        return render(request, "objectives/report.html", context, status=400)
    found = slo_report.report(slo_id, period.since, period.until, now)
    if found is None:
        raise Http404(_("No such objective."))
    return render(request, "objectives/report.html", {"objective": objective, **report_context(found, period, now)})


def _export(request: HttpRequest):
    now = timezone.now()
    slo_id, period = ReportExportForm(request.GET, now=now).result()
    return read_report(slo_id, period.since, period.until, now)


@objective_export
async def report_csv(request: HttpRequest) -> HttpResponse:
    try:
        found = await sync_to_async(_export)(request)
    except BadParameter as exc:
        return bad_parameter(exc)
    if found is None:  # deleted between the form's look and the read
        raise Http404(_("No such objective."))
    return csv_response(slo_report_csv(found), report_filename(found))
