"""/export/*.csv: async views streaming CSV (see latency.exports).

Async so that under uvicorn the response is an async iterator: the ASGI
handler forwards each block as it comes, without pinning a worker thread
for the length of the download.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.auth.views import redirect_to_login
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseForbidden,
    JsonResponse,
    StreamingHttpResponse,
)
from django.utils import timezone
from django.views.decorators.http import require_safe

from latency.export_regions import region_csv
from latency.exports import (
    MEASUREMENT_COLUMNS,
    ExportFilters,
    copy_csv,
    filename,
    header_line,
    measurements_select,
    parse_export_filters,
    where_clause,
)
from latency.stats import BadParameter

PERMISSION = "probes.view_measurement"


async def forbidden(request: HttpRequest) -> HttpResponse | None:
    """Login and the view permission on measurements, or the answer saying which is missing."""
    user = await request.auser()
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not await user.ahas_perm(PERMISSION):
        return HttpResponseForbidden("Exports need the permission to view measurements.", content_type="text/plain")
    return None


def csv_response(chunks, name: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    # Live data, and possibly large: never cached by a proxy.
    response["Cache-Control"] = "no-store"
    # Tells nginx-style proxies to pass the stream through as it comes.
    response["X-Accel-Buffering"] = "no"
    return response


async def measurement_csv(where) -> object:
    """The header at once (before the database is even reached), then COPY's blocks."""
    yield header_line(MEASUREMENT_COLUMNS)
    async for block in copy_csv(measurements_select(where)):
        yield block


async def _filters(request: HttpRequest) -> ExportFilters:
    return await sync_to_async(parse_export_filters)(request.GET, timezone.now())


def bad_parameter(exc: BadParameter) -> JsonResponse:
    return JsonResponse({"error": str(exc), "param": exc.param}, status=400)


@require_safe
async def measurements(request: HttpRequest) -> HttpResponse:
    if denied := await forbidden(request):
        return denied
    try:
        f = await _filters(request)
    except BadParameter as exc:
        return bad_parameter(exc)
    return csv_response(measurement_csv(where_clause(f)), filename("measurements", f))


@require_safe
async def regions(request: HttpRequest) -> HttpResponse:
    if denied := await forbidden(request):
        return denied
    try:
        f = await _filters(request)
    except BadParameter as exc:
        return bad_parameter(exc)
    return csv_response(region_csv(f), filename(f"regions-{f.bucket}", f))
