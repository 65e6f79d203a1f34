"""The read endpoints: measurements, the dashboard's aggregates, incidents and workers. Each parses its
parameters with a form (latency.api_v1.forms), makes one probes.readings call (or the one latency.aggregates
shares with the dashboard's JSON) and hands the rows to their serializer."""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from latency import aggregates
from latency.api_v1 import rows
from latency.api_v1.forms import AggregateForm, IncidentForm, MeasurementForm, WorkersForm, parsed
from latency.api_v1.pagination import MeasurementCursorPagination
from probes import readings
from probes.engine.result import OUTCOMES
from probes.engine.workloads import WORKLOADS
from probes.models import Incident, Measurement, Worker
from probes.readings.incidents import STATES
from probes.readings.selection import METRIC_CHOICES, PERCENTILES, WINDOW_CHOICES, Selection


def _param(name: str, description: str, *, many: bool = False, kind=OpenApiTypes.STR, enum=None):
    return OpenApiParameter(name, kind, OpenApiParameter.QUERY, description=description, many=many, enum=enum)


TIME = "ISO 8601 (UTC when no offset is given) or relative to now, such as 24h."
MEASUREMENT_PARAMETERS = [
    _param("target", "A target id (repeatable).", many=True, kind=OpenApiTypes.INT),
    _param("probe", "A probe id (repeatable).", many=True, kind=OpenApiTypes.INT),
    _param("region", "A region slug (repeatable).", many=True),
    _param("outcome", "An outcome (repeatable).", many=True, enum=OUTCOMES),
    _param("since", f"Start, inclusive (default: 24 hours before until). {TIME}"),
    _param("until", f"End, exclusive (default: now). {TIME}"),
]
SELECTION_PARAMETERS = [
    _param("target", 'A target id (repeatable); none or "all": every target.', many=True, kind=OpenApiTypes.INT),
    _param("region", 'A region slug (repeatable); none or "all": every region.', many=True),
    _param("window", "A window up to now (default 1h), or custom with since and until.", enum=WINDOW_CHOICES),
    _param("since", f"Start of a custom window. {TIME}"),
    _param("until", f"End of a custom window (default: now). {TIME}"),
    _param("metric", "The metric (default ttft).", enum=METRIC_CHOICES),
    _param("percentile", "The percentile (default p50).", enum=tuple(PERCENTILES)),
    _param("workload", "One workload's calls only (default: every workload).", enum=WORKLOADS),
]


class MeasurementViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Measurements as stored, newest first, a page at a time (follow `next`)."""

    # The model, for the permission (probes.view_measurement) and the schema; the rows come from readings.
    queryset = Measurement.objects.none()
    serializer_class = rows.MeasurementSerializer
    pagination_class = MeasurementCursorPagination

    @extend_schema(parameters=MEASUREMENT_PARAMETERS)
    def list(self, request, *args, **kwargs):
        f = parsed(MeasurementForm(request.query_params, now=timezone.now()))
        page = self.paginate_queryset(readings.stored_measurements(f))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


def _aggregate(name: str, read: Callable[[Selection], list], row: type[serializers.Serializer], doc: str):
    """The action `name`: the selection's rows from `read` (one probes.readings call)."""
    answer = rows.aggregate_serializer(f"{name.title()}Aggregate", row)

    def view(self, request):
        f = parsed(AggregateForm(request.query_params, now=timezone.now()))
        body = {"since": f.since, "until": f.until, "metric": f.metric, "percentile": f.percentile_label}
        return Response(answer({**body, "rows": read(f)}).data)

    view.__name__ = name
    view.__doc__ = doc
    return extend_schema(parameters=SELECTION_PARAMETERS, request=None, responses=answer)(
        action(detail=False, methods=["get"])(view)
    )


class AggregateViewSet(viewsets.GenericViewSet):
    """The dashboard's figures for a selection, read as its pages read them (the same form, the same calls)."""

    queryset = Measurement.objects.none()  # the permission: probes.view_measurement
    # Each action names its answer (_aggregate); this one only stands for "no request body".
    serializer_class = serializers.Serializer
    pagination_class = None

    summary = _aggregate(
        "summary",
        lambda f: aggregates.region_summary(f, timezone.now())[0],
        rows.RegionSummarySerializer,
        "Per region (the map): counts and the metric's figures, with the region's health now.",
    )
    table = _aggregate("table", readings.table, rows.TableRowSerializer, "Per region and target (the table).")
    phases = _aggregate("phases", readings.phases, rows.PhaseRowSerializer, "Phase medians per region.")
    series = _aggregate("series", readings.series, rows.SeriesRowSerializer, "Per time bucket and region.")
    distribution = _aggregate(
        "distribution",
        lambda f: readings.distribution_rows(f)[1],
        rows.DistributionRowSerializer,
        "Per region: the metric's values counted, p50 and p95 (the histogram's table).",
    )


class IncidentViewSet(viewsets.ReadOnlyModelViewSet):
    """Incidents, newest first (probes.readings' incident rows)."""

    queryset = Incident.objects.none()  # the permission: probes.view_incident
    serializer_class = rows.IncidentSerializer
    # Ids only, and no longer than a bigint's: any other path is the API's JSON 404 (latency.api_v1.urls).
    lookup_value_regex = "[0-9]{1,18}"

    @extend_schema(
        parameters=[
            _param("target", "A target id.", kind=OpenApiTypes.INT),
            _param("state", "open, resolved or all (the default).", enum=STATES),
        ]
    )
    def list(self, request, *args, **kwargs):
        target_id, state = parsed(IncidentForm(request.query_params, now=timezone.now()))
        page = self.paginate_queryset(readings.incident_history(target_id=target_id, state=state))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def retrieve(self, request, *args, **kwargs):
        row = readings.incident_detail(int(kwargs["pk"]))
        if row is None:
            raise Http404
        return Response(self.get_serializer(row).data)


class WorkerView(GenericAPIView):
    """Region workers heard in the last day, newest first per region, with each region's status."""

    queryset = Worker.objects.none()  # the permission: probes.view_worker
    serializer_class = rows.WorkersSerializer
    pagination_class = None

    @extend_schema(
        parameters=[_param("region", 'A region slug (repeatable); none or "all": every region.', many=True)],
        responses=rows.WorkersSerializer,
    )
    def get(self, request):
        region_ids = parsed(WorkersForm(request.query_params, now=timezone.now()))
        return Response(rows.WorkersSerializer(aggregates.workers(region_ids, timezone.now())).data)
