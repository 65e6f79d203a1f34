"""JSON for the dashboard's charts: same query parameters as the pages,
numbers from probes.readings.

Every chart endpoint answers {"figure": <Plotly figure dict or null>,
"rows": [...], "no_data": "<why there is nothing to draw>" or ""} so the
page draws the figure (or says why it has none) and can show the numbers
behind it; a bad parameter is a 400 naming it, never a guess. The parameters are
the pages' own form (latency.forms.DashboardFilterForm), and so is the access
rule (latency.access), answered in JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from datetime import date, datetime
from decimal import Decimal
from functools import partial, wraps

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from latency import aggregates, charts, per_target
from latency.access import dashboard_api, may_see_workers
from latency.charts.distribution import histogram_figure
from latency.charts.over_time import timeseries_figure, wants_lines
from latency.charts.real_users import real_users_trace
from latency.charts.workloads import prefill_figure, rate_limits_figure
from latency.forms import DashboardFilterForm, WorkersForm, WorkloadQuery, WorkloadsForm
from latency.views import (
    METRICS,
    PERCENTILES,
    WINDOWS,
    empty_window_message,
    no_data_message,
    table_columns,
    window_phrase,
)
from probes import readings
from probes.models import Region, Target
from probes.readings.selection import UNITS, BadParameter, Selection


def _key(key) -> str:
    # As json writes a key itself (False as "false"), so that respond's two paths write the same text.
    return json.dumps(key) if key is None or isinstance(key, bool) else str(key)


def json_safe(value):
    """Plain JSON types only. NaN and infinities become null: Python's json
    writes them as bare NaN, which the browser's JSON.parse rejects."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_key(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return json_safe(float(value))
    if hasattr(value, "tolist"):  # numpy arrays and scalars inside a figure
        return json_safe(value.tolist())
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class _PlainEncoder(json.JSONEncoder):
    """json_safe's conversions of the values json cannot write itself, done by json's own encoder as it meets
    them, so a payload that needs nothing else is written in one pass (respond)."""

    def default(self, o):
        if isinstance(o, date):  # datetimes too
            return o.isoformat()
        if isinstance(o, Decimal):
            return float(o)
        if isinstance(o, (set, frozenset)):
            return list(o)
        if hasattr(o, "tolist"):
            return o.tolist()
        return super().default(o)


def respond(payload: dict, status: int = 200) -> HttpResponse:
    # Written by json's C encoder in one pass; json_safe's walk (a large share of the time of writing a long time
    # series) only when that pass refuses a value: NaN or an infinity (null here, which JSON.parse reads), or a key
    # json cannot write. Both give the same text: json_safe's conversions are _PlainEncoder's.
    try:
        body = json.dumps(payload, cls=_PlainEncoder, allow_nan=False)
    except (TypeError, ValueError):
        body = json.dumps(json_safe(payload), allow_nan=False)
    response = HttpResponse(body, content_type="application/json", status=status)
    # Live numbers: a cached answer would be a wrong one.
    response["Cache-Control"] = "no-store"
    return response


def chart_endpoint(build, *, with_form: bool = False):
    """Parse the filters once, answer 400 on a bad one, else build(filters)
    (with_form: build(filters, form), for a chart with options of its own)."""

    @dashboard_api
    @wraps(build)
    def view(request: HttpRequest):
        form = DashboardFilterForm(request.GET, now=timezone.now())
        try:
            f = form.result()
        except BadParameter as exc:
            return respond({"error": str(exc), "param": exc.param}, status=400)
        return respond(build(f, form) if with_form else build(f))

    return view


def _map_target(f: Selection) -> dict | None:
    """The one selected target and its location (None when it has none) for
    the map; None unless exactly one target is selected."""
    if len(f.target_ids or ()) != 1:
        return None
    return per_target.map_target_json(f.target_ids[0])


def _has_value(row: dict) -> bool:
    """A time-series row with a percentile of the metric in it."""
    return any(row.get(key) is not None for key in ("p50", "p95", "value"))


def real_user_places(f: Selection) -> readings.real_users.Rows:
    """Real users by city over the window, for the chosen targets (every call, other providers included,
    when none is chosen)."""
    return readings.real_users.rows(f.since, f.until, target_ids=f.target_ids, by_target=False)


def _real_no_data(f: Selection, places: readings.real_users.Rows) -> str:
    if places.rows:
        return ""
    if places.withheld:
        return _(
            "No city of real users reached the minimum of %(k)s calls %(window)s: none is shown, so no single "
            "user can be identified."
        ) % {"k": readings.real_users.min_samples(), "window": window_phrase(f)}
    return _("No real users' calls %(window)s.") % {"window": window_phrase(f)}


def overview_body(f: Selection, form: DashboardFilterForm) -> dict:
    """The map's figure, rows and notes for the filters: /api/overview's answer, and the first map the overview
    page carries with it (views.overview), so the map draws without waiting for a round trip."""
    layer = form.cleaned_data["layer"]
    if layer == "real":
        places = real_user_places(f)
        figure = charts.world_map([], None, f.metric, f.percentile_label)
        if trace := real_users_trace(places.rows, scale=True):
            figure.add_trace(trace)
        return {
            "figure": charts.figure_json(figure),
            "rows": [],
            "real_users": [real_user_json(r) for r in places.rows],
            "samples": 0,
            "empty": "",
            "no_data": _real_no_data(f, places),
        }
    apart = per_target.keeps_apart(f, form.cleaned_data)
    extra: dict = {"per_target": apart}
    if apart:
        shown = per_target.map_rows(f, form.cleaned_data.get("map_target"), timezone.now())
        rows, health, map_target = shown.rows, shown.health, shown.target
        extra |= {"map_target": shown.chosen, "map_targets": shown.ranked}
    else:
        rows, health = aggregates.region_summary(f, timezone.now())
        map_target = _map_target(f)
    samples = sum(row["samples"] for row in rows)
    figure = charts.world_map(rows, map_target, f.metric, f.percentile_label, health)
    real = real_user_places(f).rows if layer == "both" else []
    if trace := real_users_trace(real, scale=False):
        # Beneath the regions' markers: a city with a region of its own keeps the region's marker visible and
        # hoverable on top, the diamond's corners showing around it.
        figure.add_trace(trace)
        figure.data = (figure.data[-1], *figure.data[:-1])
    return {
        "figure": charts.figure_json(figure),
        "rows": rows,
        "real_users": [real_user_json(r) for r in real],
        "samples": samples,
        "empty": "" if samples else empty_window_message(f),
        "no_data": no_data_message(f, has_values=any(row["value"] is not None for row in rows)),
        **extra,
    }


overview = chart_endpoint(overview_body, with_form=True)


@partial(chart_endpoint, with_form=True)
def histograms(f: Selection, form: DashboardFilterForm) -> dict:
    if per_target.keeps_apart(f, form.cleaned_data):
        by_target, target_rows = readings.distribution_by_target(f)
        targets = {row["target_id"]: row["target"] for row in target_rows}
        region_names = {(row["target_id"], row["region"]): row["region_name"] for row in target_rows}
        figure = histogram_figure(by_target, f.metric, f.percentile, names=region_names, targets=targets)
        return {
            "figure": charts.figure_json(figure),
            "rows": target_rows,
            "per_target": True,
            "no_data": no_data_message(f, has_values=bool(by_target)),
        }
    hists, rows = readings.distribution_rows(f)
    names = dict(Region.objects.filter(slug__in=list(hists)).values_list("slug", "name"))
    figure = histogram_figure(hists, f.metric, f.percentile, names=names)
    return {
        "figure": charts.figure_json(figure),
        "rows": rows,
        "per_target": False,
        "no_data": no_data_message(f, has_values=bool(hists)),
    }


@partial(chart_endpoint, with_form=True)
def timeseries(f: Selection, form: DashboardFilterForm) -> dict:
    apart = per_target.keeps_apart(f, form.cleaned_data)
    rows = readings.series_by_target(f) if apart else readings.series(f)
    lines = wants_lines(form.cleaned_data.get("over_time"), len(f.region_ids), per_target=apart)
    figure = timeseries_figure(
        rows,
        f.metric,
        f.percentile,
        lines=lines,
        step=readings.bucket_size(f),
        window=(f.since, f.until),
        incidents=readings.incidents_overlapping(f.since, f.until, target_ids=f.target_ids, region_ids=f.region_ids),
    )
    return {
        "figure": charts.figure_json(figure),
        "rows": rows,
        "lines": lines,
        "per_target": apart,
        "no_data": no_data_message(f, has_values=any(_has_value(row) for row in rows)),
    }


@partial(chart_endpoint, with_form=True)
def phases(f: Selection, form: DashboardFilterForm) -> dict:
    apart = per_target.keeps_apart(f, form.cleaned_data)
    rows = readings.phases(f, by_target=apart)
    return {"figure": charts.figure_json(charts.phases_figure(rows)), "rows": rows, "per_target": apart}


@chart_endpoint
def table(f: Selection) -> dict:
    # A table has no figure; the key stays so every chart endpoint has one shape.
    rows = readings.table(f)
    return {
        "figure": None,
        "rows": rows,
        "columns": table_columns(f.metric, f.percentile_label),
        "no_data": no_data_message(f, has_values=any(row["value"] is not None for row in rows)),
    }


def real_user_json(row: readings.real_users.RealUserRow) -> dict:
    return {
        "country": row.country,
        "city": row.city,
        "lat": row.latitude,
        "lon": row.longitude,
        "target_id": row.target_id,
        "target": row.target,
        "host": row.host,
        "model": row.model,
        "samples": row.samples,
        "errors": row.errors,
        **row.figures,
    }


@chart_endpoint
def real_users(f: Selection) -> dict:
    """Real users by city and target (or provider host and model) over the window, for the chosen targets;
    only rows that reach the minimum of calls. Figures in ms."""
    read = readings.real_users.rows(f.since, f.until, target_ids=f.target_ids)
    places = real_user_places(f)
    return {
        "figure": None,
        "rows": [real_user_json(r) for r in read.rows],
        "places": [real_user_json(r) for r in places.rows],
        "min_samples": readings.real_users.min_samples(),
        "withheld": read.withheld,
        "no_data": _real_no_data(f, places),
    }


@dashboard_api
def meta(request: HttpRequest):
    targets = [
        {
            "id": t.id,
            "name": t.name,
            "model": t.model,
            "api_style": t.api_style,
            "location_name": t.location_name,
            "lat": t.latitude,
            "lon": t.longitude,
        }
        for t in Target.objects.order_by("name")
    ]
    regions = [
        {
            "slug": r.slug,
            "name": r.name,
            "city": r.city,
            "country": r.country,
            "lat": r.latitude,
            "lon": r.longitude,
            "active": r.active,
        }
        for r in Region.objects.order_by("name")
    ]
    return respond(
        {
            "targets": targets,
            "regions": regions,
            "windows": [value for value, _ in WINDOWS],
            "percentiles": PERCENTILES,
            "metrics": [{"value": value, "label": str(label), "unit": UNITS[value]} for value, label in METRICS],
        }
    )


@dashboard_api
def workers(request: HttpRequest):
    """Region workers heard in the last day (stopped ones briefly), newest first per region; ?region=<slug>
    (repeatable) for some regions only. Each with its region's status (live, stale or dark). Whoever may not
    see the workers themselves (latency.access.may_see_workers) gets the regions' status and last heartbeat
    only, with an empty worker list."""
    form = WorkersForm(request.GET, now=timezone.now())
    try:
        region_ids = form.result()
    except BadParameter as exc:
        return respond({"error": str(exc), "param": exc.param}, status=400)
    if may_see_workers(request.user):
        return respond(aggregates.workers(region_ids, timezone.now()))
    return respond(aggregates.region_statuses(region_ids, timezone.now()))


def workloads_no_data(q: WorkloadQuery, read: readings.Workloads) -> str:
    if read.regions:
        return ""
    # Not empty_window_message: its advice (workers, probes) is the page's own to give, in its other sections.
    f = Selection(target_ids=q.target_ids, region_ids=q.region_ids, since=q.since, until=q.until, window=q.window)
    return _("No measurements %(window)s, so no workload figures.") % {"window": window_phrase(f)}


def workloads_body(q: WorkloadQuery) -> dict:
    """/api/workloads' answer: the readings of probes.readings.workloads as they are (rows per target x region,
    each with its workload classes, prefill fit, cache figures and rate-limit buckets) and the target page's two
    figures."""
    read = readings.workloads(q.target_ids, q.since, q.until, region_ids=q.region_ids)
    return {
        "since": read.since,
        "until": read.until,
        "bucket_s": int(read.bucket.total_seconds()),
        "regions": [asdict(region) for region in read.regions],
        "figures": {"prefill": prefill_figure(read), "rate_limits": rate_limits_figure(read)},
        "no_data": workloads_no_data(q, read),
    }


@dashboard_api
def workloads(request: HttpRequest):
    """Workload readings per target x region: ?target=<id> (repeatable, required), region=<slug> (repeatable),
    window or since / until as the dashboard's, at most 7 days (raw rows)."""
    form = WorkloadsForm(request.GET, now=timezone.now())
    try:
        q = form.result()
    except BadParameter as exc:
        return respond({"error": str(exc), "param": exc.param}, status=400)
    return respond(workloads_body(q))
