"""/export/*.csv: thin async views over the domain's CSV generators.

Each view reads its filters through latency.forms.ExportFilterForm (workloads.csv: WorkloadsForm, /api/workloads'
own), hands them to a generator (probes.exports.measurements, .regions, .realusers or .workloads)
and streams what it yields within
the export slots' cap (probes.exports.responses). Who may export is
latency.access's rule.

Async so that under uvicorn the response is an async iterator: the ASGI
handler forwards each block as it comes, without pinning a worker thread
for the length of the download.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from latency.access import measurement_export
from latency.forms import ExportFilterForm, RealUsersExportForm, WorkloadQuery, WorkloadsForm
from probes.exports import ExportFilters, filename
from probes.exports.measurements import filtered_csv
from probes.exports.realusers import real_users_csv
from probes.exports.regions import region_csv
from probes.exports.responses import csv_response
from probes.exports.workloads import workloads_csv
from probes.readings import BadParameter


def _filters(request: HttpRequest, form=ExportFilterForm) -> ExportFilters:
    # Sync: the form looks ids and slugs up in the database.
    return form(request.GET, now=timezone.now()).result()


def bad_parameter(exc: BadParameter) -> JsonResponse:
    return JsonResponse({"error": str(exc), "param": exc.param}, status=400)


@measurement_export
async def measurements(request: HttpRequest) -> HttpResponse:
    try:
        f = await sync_to_async(_filters)(request)
    except BadParameter as exc:
        return bad_parameter(exc)
    return csv_response(filtered_csv(f), filename("measurements", f))


@measurement_export
async def regions(request: HttpRequest) -> HttpResponse:
    try:
        f = await sync_to_async(_filters)(request)
    except BadParameter as exc:
        return bad_parameter(exc)
    return csv_response(region_csv(f), filename(f"regions-{f.bucket}", f))


@measurement_export
async def real_users(request: HttpRequest) -> HttpResponse:
    try:
        f = await sync_to_async(_filters)(request, RealUsersExportForm)
    except BadParameter as exc:
        return bad_parameter(exc)
    return csv_response(real_users_csv(f), filename(f"real-users-{f.bucket}", f))


def _workload_query(request: HttpRequest) -> WorkloadQuery:
    return WorkloadsForm(request.GET, now=timezone.now()).result()


@measurement_export
async def workloads(request: HttpRequest) -> HttpResponse:
    """/api/workloads' parameters (latency.forms.WorkloadsForm): a row per target x region x workload class."""
    try:
        q = await sync_to_async(_workload_query)(request)
    except BadParameter as exc:
        return bad_parameter(exc)
    name = filename("workloads", ExportFilters(since=q.since, until=q.until))
    return csv_response(workloads_csv(q.target_ids, q.since, q.until, q.region_ids), name)
