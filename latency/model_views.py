"""/models/ (the model groups) and /models/<id>/ (a group's leaderboard and its region x target matrix),
read through probes.readings.leaderboard with latency.forms.LeaderboardForm, as the API's leaderboard is."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from latency import labels
from latency.access import dashboard_page
from latency.forms import LeaderboardForm
from latency.views import METRICS, PERCENTILES, WINDOWS, workload_context
from probes import metrics, readings
from probes.models import ModelGroup, Region
from probes.readings.selection import BadParameter, Selection


@dashboard_page
def model_groups(request: HttpRequest) -> HttpResponse:
    groups = ModelGroup.objects.prefetch_related("targets").order_by("name")
    return render(request, "dashboard/models.html", {"groups": groups})


def _shown(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


@dashboard_page
def model_group(request: HttpRequest, group_id: int) -> HttpResponse:
    group = get_object_or_404(ModelGroup.objects.prefetch_related("targets"), pk=group_id)
    form = LeaderboardForm(request.GET, now=timezone.now())
    error = None
    rows: list = []
    f: Selection | None = None
    grid: list = []
    try:
        f, region, shares = form.result()
    except BadParameter as exc:
        error = {"message": str(exc), "param": exc.param}
    else:
        target_ids = [t.id for t in group.targets.all()]
        rows = readings.leaderboard(target_ids, f, region=region, shares=shares or None)
        order = [row["target"] for row in rows]
        grid = readings.leaderboard_matrix(order, f)
    names = {row["target"]: row["target_name"] for row in rows}
    selected = form.selected
    metric = metrics.BY_NAME.get(selected["metric"], metrics.BY_NAME["ttft"])
    context = {
        "group": group,
        "form": form,
        "error": error,
        "rows": [
            {
                **row,
                "success_percent": None if row["success_ratio"] is None else row["success_ratio"] * 100,
                "tied_names": [names[t] for t in row["tied_with"]],
            }
            for row in rows
        ],
        "columns": [{"id": row["target"], "name": row["target_name"]} for row in rows],
        "matrix": [
            {**line, "cells": [{**cell, "shown": _shown(cell["value"])} for cell in line["cells"]]} for line in grid
        ],
        "windows": WINDOWS,
        "percentiles": PERCENTILES,
        "metrics": METRICS,
        "regions": Region.objects.order_by("name", "slug").values("slug", "name"),
        "region": (form.typed("region") or [""])[-1],
        "mix": (form.typed("mix") or [""])[-1],
        "metric_label": labels.label(metric.name),
        "unit": metric.unit,
        "percentile": selected["percentile"],
        **workload_context(form, f),
    }
    return render(request, "dashboard/model_group.html", context, status=400 if error else 200)
