"""What the read endpoints answer, as DRF serializers: the schema's description of each row, and the one place
its values are turned into JSON (timestamps in UTC, ISO 8601; a missing value null).

Measurement rows iterate the metric list (probes.metrics), never a copy of it."""

from __future__ import annotations

from datetime import UTC

from rest_framework import serializers

from probes import metrics
from probes.engine.result import OUTCOMES
from probes.readings.incidents import STATES
from probes.readings.selection import METRIC_CHOICES, PERCENTILES


def when(**kwargs) -> serializers.DateTimeField:
    return serializers.DateTimeField(default_timezone=UTC, **kwargs)


def number(**kwargs) -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, **kwargs)


# --- measurements ---------------------------------------------------------------------------------------------

_KINDS = {
    "float": number,
    "int": lambda **kw: serializers.IntegerField(allow_null=True, **kw),
    "text": lambda **kw: serializers.CharField(allow_null=True, **kw),
}
_SPECIAL = {
    "outcome": lambda: serializers.ChoiceField(choices=OUTCOMES),
    "connection": serializers.CharField,
    "tokens_estimated": lambda: serializers.BooleanField(allow_null=True),
    "started_at": lambda: when(help_text="When the call started (UTC)."),
}


def _stored_fields() -> dict[str, serializers.Field]:
    """The engine's stored fields (probes.metrics.stored_engine_fields), each typed by the list's own kind."""
    other = {f.name: f.kind for f in metrics.OTHER_FIELDS}
    fields: dict[str, serializers.Field] = {}
    for name in metrics.stored_engine_fields():
        if name in _SPECIAL:
            fields[name] = _SPECIAL[name]()
        elif name in metrics.BY_COLUMN:
            metric = metrics.BY_COLUMN[name]
            fields[name] = _KINDS[metric.kind](help_text=f"{metric.label} ({metric.unit})")
        else:
            fields[name] = _KINDS[other[name]]()
    return fields


MeasurementSerializer = type(
    "MeasurementSerializer",
    (serializers.Serializer,),
    {
        "__doc__": "One measurement as stored: what names it, then every stored field of the metric list.",
        "id": serializers.IntegerField(),
        "probe_id": serializers.IntegerField(),
        "probe": serializers.CharField(source="probe_name", help_text="The probe's name."),
        "target_id": serializers.IntegerField(),
        "target": serializers.CharField(source="target_name", help_text="The target's name."),
        "region": serializers.CharField(source="region_slug", help_text="The region's slug."),
        "scheduled_for": when(help_text="The schedule slot the run belongs to (UTC)."),
        "worker": serializers.CharField(help_text="Host name of the worker that ran the call."),
        **_stored_fields(),
    },
)


# --- the dashboard's aggregates --------------------------------------------------------------------------------


class FiguresSerializer(serializers.Serializer):
    samples = serializers.IntegerField()
    errors = serializers.IntegerField()
    error_rate = number()
    p50 = number()
    p95 = number()
    value = number(help_text="The selection's percentile of its metric.")


class RegionSummarySerializer(FiguresSerializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    city = serializers.CharField()
    country = serializers.CharField()
    lat = number()
    lon = number()
    connect_p50 = number()
    floor_ms = number()
    tax_ms = number()
    status = serializers.CharField(required=False, help_text="The region's health now: live, stale or dark.")
    last_seen = when(required=False, allow_null=True)


class TableRowSerializer(FiguresSerializer):
    region = serializers.CharField()
    region_slug = serializers.CharField()
    target = serializers.CharField()
    target_id = serializers.IntegerField()
    model = serializers.CharField()
    missed = serializers.IntegerField()


class PhaseRowSerializer(serializers.Serializer):
    region = serializers.CharField()
    region_name = serializers.CharField()
    samples = serializers.IntegerField()
    medians = serializers.DictField(child=number())
    segments = serializers.DictField(child=serializers.FloatField())


class SeriesRowSerializer(serializers.Serializer):
    bucket_start = when()
    at = when()
    region = serializers.CharField()
    region_name = serializers.CharField()
    p50 = number()
    p95 = number()
    value = number()
    samples = serializers.IntegerField()


class DistributionRowSerializer(serializers.Serializer):
    region = serializers.CharField()
    samples = serializers.IntegerField()
    p50 = number()
    p95 = number()


def aggregate_serializer(name: str, row: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """An aggregate's answer: the selection it was read for, and its rows."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "since": when(),
            "until": when(),
            "metric": serializers.ChoiceField(choices=METRIC_CHOICES),
            "percentile": serializers.ChoiceField(choices=tuple(PERCENTILES)),
            "rows": row(many=True),
        },
    )


# --- incidents and workers -------------------------------------------------------------------------------------


class RegionRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()


class IncidentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rule_id = serializers.IntegerField(allow_null=True, help_text="Null for an objective's burn-rate alert.")
    rule = serializers.CharField(source="rule_name", help_text="The rule's name, or the objective's.")
    kind = serializers.CharField(help_text='"rule", or "objective" for an objective\'s burn-rate alert.')
    objective_id = serializers.IntegerField(allow_null=True, help_text="The objective of a burn-rate alert, else null.")
    severity = serializers.CharField(help_text='"page" or "ticket" for an objective\'s alert, else empty.')
    metric = serializers.CharField()
    percentile = serializers.CharField(help_text="Empty for the rate metrics and objectives.")
    window_minutes = serializers.IntegerField()
    target_id = serializers.IntegerField()
    target = serializers.CharField(source="target_name")
    scope = serializers.CharField()
    regions = RegionRefSerializer(many=True)
    measured_regions = serializers.IntegerField()
    phase = serializers.CharField()
    summary = serializers.CharField()
    peak_value = number()
    baseline_value = number()
    unit = serializers.CharField()
    state = serializers.SerializerMethodField()
    started_at = when()
    opened_at = when()
    resolved_at = when(allow_null=True)
    acknowledged_at = when(allow_null=True)
    acknowledged_by = serializers.CharField()
    silenced = serializers.BooleanField()

    def get_state(self, row) -> str:
        return STATES[0] if row.is_open else STATES[1]


class WorkerSerializer(serializers.Serializer):
    region = serializers.CharField()
    hostname = serializers.CharField()
    release = serializers.CharField()
    last_seen = when()
    status = serializers.CharField()
    in_flight = serializers.IntegerField()
    clock_offset_ms = number()
    clock_flagged = serializers.BooleanField()
    region_name = serializers.CharField()
    region_status = serializers.CharField()
    name = serializers.CharField()
    state = serializers.CharField()
    started_at = when()
    last_run_at = when(allow_null=True)
    runs = serializers.IntegerField()
    queue_depth = serializers.IntegerField(allow_null=True)
    key_id = serializers.CharField()


class WorkersSerializer(serializers.Serializer):
    workers = WorkerSerializer(many=True)
    regions = serializers.DictField(child=serializers.CharField(), help_text="Region slug to live, stale or dark.")
    now = when()
