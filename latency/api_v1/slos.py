"""Service level objectives over the API (/api/v1/slos/): list, create, retrieve, update, delete, with the
admin's permissions, as model groups.

The admin's rules: the model's full_clean() (probes.slos.rules.clean_objective, through ModelRulesSerializer)
and what only a body holding the many-to-many fields can check (rules.check_scope), each refusal a 400 naming its
field. Related objects by id (targets, regions, model_group, channels); the mix as an object of region slug to
share."""

from __future__ import annotations

from functools import partial

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from latency.api_v1.config import ConfigViewSet, ModelRulesSerializer, field_errors
from latency.api_v1.forms import parsed
from latency.api_v1.slo_reads import REPORT_PARAMETERS, ReportSerializer, StatusSerializer, report_body, status_body
from latency.slo_forms import ReportPeriodForm
from probes.readings import slo_report, slos
from probes.slos import rules, services
from probes.slos.models import ServiceLevelObjective


class ObjectiveSerializer(ModelRulesSerializer):
    mix = serializers.DictField(
        child=serializers.FloatField(),
        required=False,
        help_text=(
            'Region slug to share, e.g. {"eu-london": 60, "us-ashburn": 40} (shares above 0, normalised); '
            "{} for none. Not together with regions."
        ),
    )

    class Meta:
        model = ServiceLevelObjective
        fields = (
            "id",
            *rules.EDITABLE_FIELDS,
            "exact_since",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("exact_since", "created_at", "updated_at")
        # A number in JSON, as every other figure of the API, not DRF's default string.
        extra_kwargs = {"objective_percent": {"coerce_to_string": False}}

    def validate(self, attrs):
        errors: dict[str, list] = {}
        try:
            attrs = super().validate(attrs)
        except serializers.ValidationError as exc:
            errors.update(exc.detail)
        # A partial update keeps what the body leaves out: the scope is judged as it would be saved.
        current = self.instance
        try:
            rules.check_scope(
                targets=attrs.get("targets", current.targets.all() if current is not None else ()),
                model_group=attrs.get("model_group", current.model_group if current is not None else None),
                regions=attrs.get("regions", current.regions.all() if current is not None else ()),
                mix=attrs.get("mix", current.mix if current is not None else {}),
            )
        except DjangoValidationError as exc:
            for field, messages in field_errors(exc).items():
                errors.setdefault(field, []).extend(messages)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def _save(self, validated_data):
        objective = super()._save(validated_data)
        transaction.on_commit(partial(services.objective_saved, objective.pk))
        return objective


class ObjectiveViewSet(ConfigViewSet):
    queryset = ServiceLevelObjective.objects.select_related("model_group").prefetch_related(
        "targets", "regions", "channels"
    )
    queryset = queryset.order_by("name")
    serializer_class = ObjectiveSerializer

    @extend_schema(request=None, responses=StatusSerializer)
    @action(detail=True, methods=["get"], serializer_class=StatusSerializer)
    def status(self, request, pk=None):
        """The objective now, as /slos/ shows it: attainment and error budget over its window, the burn rate over
        5 m to 3 d, projected exhaustion, status, and each region's figures."""
        objective = self.get_object()
        row = slos.objective_row(objective.id, timezone.now(), cells=True)
        return Response(StatusSerializer(status_body(row)).data)

    @extend_schema(parameters=REPORT_PARAMETERS, request=None, responses=ReportSerializer)
    @action(detail=True, methods=["get"], serializer_class=ReportSerializer)
    def report(self, request, pk=None):
        """The SLA report over a period (the report page's and slo-report.csv's numbers): per target x region and
        in total, with the incidents and silences of the objective's targets."""
        objective = self.get_object()
        now = timezone.now()
        period = parsed(ReportPeriodForm(request.query_params, now=now))
        found = slo_report.report(objective.id, period.since, period.until, now)
        return Response(ReportSerializer(report_body(found)).data)
