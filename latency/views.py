"""Dashboard pages: plain functions, each building an explicit context.

The numbers come from probes.readings; pages render what a reader needs
without JavaScript (empty states, rankings, recent rows) and leave the charts
to static/js/dashboard.js, which reads the same query parameters from
/api/*. Parameters are read by latency.forms (the page's filter form is
re-rendered from the bound form, so a mistake shows as typed) and who may
read is latency.access's rule.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.text import capfirst
from django.utils.translation import get_language, gettext_lazy, ngettext
from django.utils.translation import gettext as _

from latency import charts, labels, workloads_panel
from latency import real_users as real_user_panel
from latency.access import dashboard_page, may_read_incidents, may_see_errors, may_see_workers, visible_rows
from latency.forms import REAL_USER_MIX_WINDOWS, DashboardFilterForm, MixForm, RegionPageFilterForm
from latency.incident_views import markers, silence_context
from probes import deadletters, metrics, readings
from probes.models import Probe, Region, Target
from probes.readings.selection import DEFAULT_METRIC, DEFAULT_PERCENTILE, WINDOW_CHOICES, BadParameter, Selection
from probes.readings.selection import PERCENTILES as PERCENTILES_BY_LABEL
from probes.readings.selection import WINDOWS as WINDOWS_BY_NAME

# Display names, translated when shown; the valid values themselves are probes.readings' to decide.
WINDOW_LABELS = {
    "15m": gettext_lazy("15 min"),
    "1h": gettext_lazy("1 h"),
    "24h": gettext_lazy("24 h"),
    "7d": gettext_lazy("7 days"),
    "30d": gettext_lazy("30 days"),
    "custom": gettext_lazy("custom"),
}
WINDOWS = [(value, WINDOW_LABELS.get(value, value)) for value in WINDOW_CHOICES]
# A region worker's status (probes.readings.fleet), as the region page shows it.
WORKER_STATUS_LABELS = {
    "live": gettext_lazy("live"),
    "stale": gettext_lazy("late"),
    "lost": gettext_lazy("lost (silent)"),
    "stopped": gettext_lazy("stopped"),
}
PERCENTILES = list(PERCENTILES_BY_LABEL)
# (name, label) of the metric selector; lazy, so each request reads them in its own language.
METRICS = [(m.name, labels.LABELS.get(m.name, m.label)) for m in metrics.SELECTABLE]
# The map's layer selector (latency.forms.MAP_LAYERS), as the page names them.
MAP_LAYERS = [
    ("synthetic", gettext_lazy("probes")),
    ("real", gettext_lazy("real users")),
    ("both", gettext_lazy("probes and real users")),
]
RECENT_LIMIT = 50
# A target page's real users beside its probes: a week, since real users come by the hour and may be few.
TARGET_REAL_USERS_WINDOW = WINDOWS_BY_NAME["7d"]
# The measured columns of a target's recent calls, in the order a call goes through them.
RECENT_COLUMNS = tuple(metrics.BY_NAME[name] for name in ("ttfb", "ttft", "total", "output_tokens", "tokens_per_s"))


def window_phrase(f: Selection) -> str:
    if f.window == "custom":
        return _("between %(since)s and %(until)s UTC") % {
            "since": f"{f.since:%Y-%m-%d %H:%M}",
            "until": f"{f.until:%Y-%m-%d %H:%M}",
        }
    return _("in the last %(window)s") % {"window": WINDOW_LABELS.get(f.window, f.window)}


def empty_window_message(f: Selection) -> str:
    """What to say, and what to do, when the selection has no measurements."""
    if f.target_ids:
        targets = Target.objects.filter(id__in=f.target_ids).order_by("name")
        names = list(targets.values_list("name", flat=True))
        if names and not targets.filter(probes__isnull=False).exists():
            # Waiting or widening the window cannot help: nothing is measuring.
            return _("No probe measures %(targets)s yet: add a probe for it in the admin.") % {
                "targets": ", ".join(names)
            }
        subject = ", ".join(names)
    else:
        subject = _("any target")
    if f.region_ids:
        places = Region.objects.filter(id__in=f.region_ids).order_by("name").values_list("name", flat=True)
        subject = _("%(targets)s from %(regions)s") % {"targets": subject, "regions": ", ".join(places)}
    return _(
        "No measurements %(window)s for %(subject)s — widen the window or check that region workers are running."
    ) % {"window": window_phrase(f), "subject": subject}


def no_data_message(f: Selection, *, has_values: bool) -> str:
    """Why a chart of f.metric has nothing to draw, or "" when it has values.
    One place for every chart endpoint and the page, so they say the same.

    The reason is named when the targets' configuration makes it certain
    (every selected target is plain http://, so none has a TLS handshake);
    otherwise the message says only that the window holds no such values."""
    if has_values:
        return ""
    targets = Target.objects.filter(id__in=f.target_ids) if f.target_ids else Target.objects.all()
    urls = list(targets.values_list("url", flat=True))
    if f.metric == "tls" and urls and all(url.lower().startswith("http://") for url in urls):
        return ngettext(
            "No TLS: this target uses plain HTTP, so there is no TLS handshake to measure.",
            "No TLS: these targets use plain HTTP, so there is no TLS handshake to measure.",
            len(urls),
        )
    label = labels.label(f.metric)
    return _("No %(metric)s measurements %(window)s.") % {"metric": label, "window": window_phrase(f)}


def table_columns(metric: str, percentile: str) -> list[dict]:
    """The regions x targets table's columns (key, label, type), units in
    the labels: the chosen percentile ("value" in readings.table's rows),
    with p50 beside it when another one is chosen. The page renders them
    and /api/table sends them, so the script never names a column itself."""
    if metric not in metrics.BY_NAME:
        metric = DEFAULT_METRIC
    if percentile not in PERCENTILES_BY_LABEL:
        percentile = DEFAULT_PERCENTILE
    unit = labels.unit(metric)
    columns = [
        {"key": "region", "label": _("Region"), "type": "text"},
        {"key": "target", "label": _("Target"), "type": "text"},
        {"key": "model", "label": _("Model"), "type": "text"},
        {"key": "samples", "label": _("Samples"), "type": "num"},
        {"key": "error_rate", "label": _("Errors (%)"), "type": "num"},
        # Runs due in the window that no worker picked up: a dark region shows here, not as silence.
        {"key": "missed", "label": _("Missed"), "type": "num"},
    ]
    shown = ["p50", percentile] if percentile != "p50" else ["p50"]
    for name in shown:
        # readings.table's "value" is the chosen percentile; its "p50" the median beside it.
        key = "value" if name == percentile else "p50"
        columns.append({"key": key, "label": _("%(name)s (%(unit)s)") % {"name": name, "unit": unit}, "type": "num"})
    return columns


def _dashboard_config(f: Selection | None) -> dict:
    """Everything dashboard.js needs from the server, as one JSON blob."""
    return {
        "api": {
            "overview": reverse("api-overview"),
            "histograms": reverse("api-histograms"),
            "timeseries": reverse("api-timeseries"),
            "phases": reverse("api-phases"),
            "table": reverse("api-table"),
            "meta": reverse("api-meta"),
            "real_users": reverse("api-real-users"),
        },
        "ws_path": "/ws/measurements/",
        # Plotly fetches <topojsonURL>world_110m.json: ours, never its CDN.
        "topojson_url": static("vendor/topojson/"),
        "region_url": reverse("region", args=["__slug__"]),
        "target_url": reverse("target", args=[0]),
        # The live feed carries region ids; the filter names slugs.
        "region_ids": list(f.region_ids) if f is not None and f.region_ids else [],
        # What the selector's options mean (probes.metrics): the script takes
        # units from here rather than knowing metric names.
        "metrics": {
            m.name: {"label": labels.label(m.name), "short": labels.short(m.name), "unit": labels.unit(m.name)}
            for m in metrics.SELECTABLE
        },
        # The page's language: Plotly's locale and number separators, and the table's number format.
        "language": get_language() or settings.LANGUAGE_CODE,
        # Words the script shows itself; everything else it shows comes with the API's answers.
        "text": {
            "all_targets": _("All targets"),
            "all_regions": _("All regions"),
            "no_rows": _("No measurements in this window."),
        },
    }


def export_query(selected: dict) -> str:
    """The overview's filters as export parameters (dashboard.js keeps the
    links in step with the form): a preset window becomes a relative since."""
    query = QueryDict(mutable=True)
    query.setlist("target", [str(t) for t in selected["targets"]])
    query.setlist("region", selected["regions"])
    if selected["workload"]:
        query["workload"] = selected["workload"]
    if selected["window"] == "custom":
        query.update({name: selected[name] for name in ("since", "until") if selected[name]})
    else:
        query["since"] = selected["window"]
    return query.urlencode()


def workload_context(form: DashboardFilterForm, f: Selection | None) -> dict:
    """The workload selector's options, the workload the page shows (by name, for the "workload shown" line) and,
    when one is chosen and valid, the query part links add to keep it (latency.forms: workload)."""
    chosen = f.workload if f is not None else ""
    return {
        "workloads": labels.workload_options(),
        "workload_label": labels.workload(chosen),
        "workload_query": urlencode({"workload": chosen}) if chosen else "",
    }


def _filters(form: DashboardFilterForm) -> tuple[Selection | None, dict | None]:
    """(filters, None), or (None, the error the page shows) for a bad parameter."""
    try:
        return form.result(), None
    except BadParameter as exc:
        return None, {"message": str(exc), "param": exc.param}


@dashboard_page
def overview(request: HttpRequest) -> HttpResponse:
    form = DashboardFilterForm(request.GET, now=timezone.now())
    f, error = _filters(form)
    no_probes = not Probe.objects.exists()
    empty_message = no_data = ""
    first_map = None
    if f is not None and not no_probes:
        rows = readings.summary(f)
        if not any(row["samples"] for row in rows):
            empty_message = empty_window_message(f)
        no_data = no_data_message(f, has_values=any(row["value"] is not None for row in rows))
        # Here, not at the top: latency.api imports this module for its messages.
        from latency import api

        # The map's first figure comes with the page: drawn as soon as the script runs, never a blank box
        # waiting for /api/overview after sign-in. The script reads the same endpoint for every later change.
        first_map = api.json_safe(api.overview_body(f, form))
    selected = form.selected
    targets = list(Target.objects.order_by("name"))
    chosen = [t.name for t in targets if t.id in selected["targets"]]
    regions = list(Region.objects.filter(active=True).order_by("name"))
    context = {
        "no_probes": no_probes,
        "error": error,
        "empty_message": empty_message,
        "no_data": no_data,
        "targets": targets,
        # The target picker's closed state: what is chosen, by name.
        "targets_summary": ", ".join(chosen) or _("All targets"),
        "table_columns": table_columns(selected["metric"], selected["percentile"]),
        "regions": regions,
        # The region picker's closed state, and chosen regions it does not list (inactive ones).
        "regions_summary": ", ".join(r.name for r in regions if r.slug in selected["regions"]) or _("All regions"),
        "unlisted_regions": [slug for slug in selected["regions"] if slug not in {r.slug for r in regions}],
        "windows": WINDOWS,
        "percentiles": PERCENTILES,
        "metrics": METRICS,
        "layers": MAP_LAYERS,
        "real_users_min": readings.real_users.min_samples(),
        # The map's "colour for" choice, only while several targets are kept apart (per_target.keeps_apart):
        # with one target it would be an empty row above the map until the script hid it.
        "map_choice": not selected["pool"]
        and (len(selected["targets"]) > 1 if selected["targets"] else len(targets) > 1),
        # The map's red ring and the share of failed calls it starts at (LATENCY_MAP_ERROR_RING_RATIO).
        "error_ring_text": charts.error_ring_text(),
        # The form re-renders from the bound form: what was typed, mistakes included.
        "form": form,
        "export_query": export_query(form.selected),
        "without_regions": form.query_without("region"),
        "dashboard_config": _dashboard_config(f),
        "first_map": first_map,
        # The health line: what the ingest could not store (kept as dead letters).
        "rejected_recently": deadletters.recent_count(timezone.now()),
        "open_incidents": markers(request),
        **workload_context(form, f),
    }
    return render(request, "dashboard/overview.html", context, status=400 if error else 200)


@dashboard_page
def region_detail(request: HttpRequest, slug: str) -> HttpResponse:
    region = get_object_or_404(Region, slug=slug)
    form = RegionPageFilterForm(request.GET, now=timezone.now())
    f, error = _filters(form)
    ranking = []
    if f is not None:
        ranking = [
            {**row, "error_percent": None if row["error_rate"] is None else row["error_rate"] * 100}
            for row in readings.ranking(region.slug, f)
        ]
    selected = form.selected
    now = timezone.now()
    # Anyone else sees the region's status line only: no host, release or clock of a worker.
    workers = readings.worker_rows([region.id], now) if may_see_workers(request.user) else []
    context = {
        "region": region,
        "health": readings.region_health(now, [region.id])[region.id],
        "workers": [(w, WORKER_STATUS_LABELS[w.status]) for w in workers],
        "clock_flagged": [w for w in workers if w.clock_flagged and w.status != "stopped"],
        "stale_after": settings.LATENCY_REGION_STALE_AFTER,
        "dark_after_minutes": settings.LATENCY_REGION_DARK_AFTER // 60,
        "form": form,
        "ranking": ranking,
        "error": error,
        "windows": WINDOWS,
        "percentiles": PERCENTILES,
        "metrics": METRICS,
        "metric_label": labels.label(selected["metric"]),
        "unit": labels.unit(selected["metric"]),
        "window_phrase": window_phrase(f) if f is not None else "",
        "has_data": any(row.get("samples") for row in ranking),
        "no_probes": not Probe.objects.filter(regions=region).exists(),
        "open_incidents": markers(request, region_id=region.id),
        "real_users": (
            real_user_panel.panel(f.since, f.until, window_phrase(f), region_ids=[region.id]) if f is not None else {}
        ),
        # Every target of the region in one panel: each sentence names its target.
        "show_target": True,
        **workload_context(form, f),
    }
    return render(request, "dashboard/region.html", context, status=400 if error else 200)


def column_heading(metric: metrics.Metric) -> str:
    # A count is its own unit: "Output tokens", not "Output tokens (tokens)".
    if metric.unit == "tokens":
        return capfirst(labels.short(metric.name))
    return _("%(name)s (%(unit)s)") % {"name": capfirst(labels.short(metric.name)), "unit": metric.unit}


@dashboard_page
def where_users_are(request: HttpRequest) -> HttpResponse:
    """Every target ranked for a traffic mix (share-<region slug> parameters): probes.readings.mix."""
    form = MixForm(request.GET, now=timezone.now())
    error = None
    f, shares = None, {}
    try:
        f, shares = form.result()
    except BadParameter as exc:
        error = {"message": str(exc), "param": exc.param}
    selected = form.selected
    metric = metrics.BY_NAME.get(selected["metric"], metrics.BY_NAME["ttft"])
    rows = [
        {
            **row,
            "error_percent": None if row["error_rate"] is None else row["error_rate"] * 100,
            "coverage_percent": row["coverage"] * 100,
            "regions": [{**region, "percent": region["share"] * 100} for region in row["regions"]],
        }
        for row in (readings.mix(shares, f) if f is not None and shares else [])
    ]
    mix = readings.mix_shares(shares) if f is not None and shares else []
    percentile = selected["percentile"]
    context = {
        "form": form,
        "error": error,
        "rows": rows,
        "mix": [{**share, "percent": share["share"] * 100} for share in mix],
        "windows": WINDOWS,
        "percentiles": PERCENTILES,
        "metrics": METRICS,
        "metric_label": labels.label(metric.name),
        "unit": metric.unit,
        "higher_is_better": metric.higher_is_better,
        "percentile": percentile,
        # The chosen percentile gets a column of its own unless it is one of the two always shown.
        "extra_percentile": percentile not in ("p50", "p95"),
        "window_phrase": window_phrase(f) if f is not None else "",
        "has_data": any(row["coverage"] > 0 for row in rows),
        # The other way to give the mix: from real users' places (latency.forms.MixForm.real_users).
        "real_user_windows": [(w, WINDOW_LABELS[w]) for w in REAL_USER_MIX_WINDOWS],
        "real_users_window": WINDOW_LABELS[used] if (used := form.cleaned_data.get("real_users")) and not error else "",
        "real_users_calls": int(sum(shares.values())) if used and not error else 0,
        "real_users_min": readings.real_users.min_samples(),
        "real_users_choice": (form.typed("real_users") or ["7d"])[-1],
        **workload_context(form, f),
    }
    return render(request, "dashboard/where.html", context, status=400 if error else 200)


@dashboard_page
def target_detail(request: HttpRequest, target_id: int) -> HttpResponse:
    target = get_object_or_404(Target, pk=target_id)
    user = request.user
    now = timezone.now()
    probes = list(target.probes.order_by("name").prefetch_related("regions"))
    measurements = [
        # Whole numbers (token counts) without decimals, times and rates with one.
        {**row, "cells": [(row[m.column], 0 if m.kind == "int" else 1) for m in RECENT_COLUMNS]}
        for row in visible_rows(readings.recent(target.id, RECENT_LIMIT), user)
    ]
    context = {
        "target": target,
        "probes": probes,
        "all_probes_disabled": bool(probes) and not any(p.enabled for p in probes),
        # The admin's add form takes initial values from the query string: the probe comes pre-filled.
        "add_probe_url": (
            f"{reverse('admin:probes_probe_add')}?target={target.id}" if user.has_perm("probes.add_probe") else ""
        ),
        "columns": [column_heading(m) for m in RECENT_COLUMNS],
        "measurements": measurements,
        "failures": visible_rows(readings.recent(target.id, RECENT_LIMIT, failures=True), user),
        "show_errors": may_see_errors(user),
        "limit": RECENT_LIMIT,
        "open_incidents": markers(request, target_id=target.id),
        # No window selector on this page: real users are compared over the last TARGET_REAL_USERS_WINDOW.
        "real_users": real_user_panel.panel(
            now - TARGET_REAL_USERS_WINDOW,
            now,
            _("in the last %(window)s") % {"window": WINDOW_LABELS["7d"]},
            target_ids=[target.id],
        ),
        "show_target": False,
        "workloads": (workloads := workloads_panel.panel(request, target.id, now)),
        "workload_windows": [(w, WINDOW_LABELS[w]) for w in workloads_panel.PANEL_WINDOWS],
    }
    if may_read_incidents(user):
        context.update(silence_context(request, target.id, reverse("target", args=[target.id]), timezone.now()))
    return render(request, "dashboard/target.html", context, status=400 if workloads["error"] else 200)
