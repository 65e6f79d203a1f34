"""Model groups over the API: list, create, update, delete (the admin's permissions, as targets), and each
group's leaderboard (probes.readings.leaderboard), its parameters parsed by latency.forms.LeaderboardForm."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from latency.api_v1.config import ByKey, ConfigViewSet, ModelRulesSerializer
from latency.api_v1.forms import parsed
from latency.api_v1.rows import number, when
from latency.forms import LeaderboardForm
from probes import readings
from probes.engine.workloads import WORKLOADS
from probes.models import ModelGroup, Target
from probes.readings.selection import METRIC_CHOICES, PERCENTILES, WINDOW_CHOICES


class ModelGroupSerializer(ModelRulesSerializer):
    """Targets named by their names, as a probe's target is."""

    targets = ByKey(slug_field="name", queryset=Target.objects.all(), many=True)

    class Meta:
        model = ModelGroup
        fields = ("id", "name", "targets")

    def _save(self, validated_data):
        group = super()._save(validated_data)
        # Objectives over this group count its targets (probes.slos.services).
        from probes.slos.services import reconcile

        transaction.on_commit(reconcile)
        return group


def _interval(**kwargs) -> serializers.ListField:
    return serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True, **kwargs)


class LeaderboardRowSerializer(serializers.Serializer):
    target = serializers.IntegerField(help_text="The target's id.")
    target_name = serializers.CharField()
    rank = serializers.IntegerField(help_text="1 for the best point estimate of the ranking metric; no gaps.")
    p50_ttft_ms = number()
    p95_ttft_ms = number()
    p50_ttft_ci_ms = _interval(help_text="[low, high]: a 95 % order-statistic interval; null when n is too small.")
    p95_ttft_ci_ms = _interval(help_text="[low, high]: a 95 % order-statistic interval; null when n is too small.")
    tokens_per_s_p50 = number()
    success_ratio = number(help_text="Calls that succeeded, 0 to 1.")
    n = serializers.IntegerField(help_text="Calls in the window, failed ones included.")
    tied_with = serializers.ListField(
        child=serializers.IntegerField(), help_text="Targets whose interval on the ranking metric overlaps this one's."
    )
    reason = serializers.CharField(required=False, help_text="Why an interval is null (absent otherwise).")

    def to_representation(self, instance):
        row = super().to_representation(instance)
        if "reason" not in instance:
            row.pop("reason", None)
        return row


class LeaderboardSerializer(serializers.Serializer):
    since = when()
    until = when()
    metric = serializers.ChoiceField(choices=METRIC_CHOICES, help_text="The ranking metric.")
    percentile = serializers.ChoiceField(choices=tuple(PERCENTILES), help_text="The ranking percentile.")
    region = serializers.CharField(allow_null=True, help_text="The region's slug; null for a mix or every region.")
    workload = serializers.CharField(allow_null=True, help_text="The workload ranked; null for every workload.")
    rows = LeaderboardRowSerializer(many=True)


def _param(name: str, description: str, enum=None) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, description=description, enum=enum)


LEADERBOARD_PARAMETERS = [
    _param("window", "A window up to now (default 1h), or custom with since and until.", WINDOW_CHOICES),
    _param("since", "Start of a custom window (ISO 8601 or relative such as 24h)."),
    _param("until", "End of a custom window (default: now)."),
    _param("region", "A region slug: the targets as seen from there. Default: every region."),
    _param("mix", "A traffic mix instead of a region: slug:share pairs, comma-separated (normalised)."),
    _param("metric", "The ranking metric (default ttft).", METRIC_CHOICES),
    _param("percentile", "The ranking percentile (default p50).", tuple(PERCENTILES)),
    _param("workload", "One workload's calls only (default: every workload).", WORKLOADS),
]


class ModelGroupViewSet(ConfigViewSet):
    queryset = ModelGroup.objects.prefetch_related("targets").order_by("name")
    serializer_class = ModelGroupSerializer

    @extend_schema(parameters=LEADERBOARD_PARAMETERS, request=None, responses=LeaderboardSerializer)
    @action(detail=True, methods=["get"], serializer_class=LeaderboardSerializer)
    def leaderboard(self, request, pk=None):
        """The group's targets ranked (probes.readings.leaderboard): one row per target."""
        group = self.get_object()
        f, region, shares = parsed(LeaderboardForm(request.query_params, now=timezone.now()))
        target_ids = [t.id for t in group.targets.all()]
        rows = readings.leaderboard(target_ids, f, region=region, shares=shares or None)
        body = {
            "since": f.since,
            "until": f.until,
            "metric": f.metric,
            "percentile": f.percentile_label,
            "region": region,
            "workload": f.workload or None,
            "rows": rows,
        }
        return Response(LeaderboardSerializer(body).data)
