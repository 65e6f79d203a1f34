"""Status pages over the API (/api/v1/status-pages/): list, create, retrieve, update, delete, with the admin's
permissions, as model groups.

The admin's rules: the model's full_clean() (through ModelRulesSerializer), so a hostname that is no domain, is
not in ALLOWED_HOSTS or is the site's own address is a 400 naming hostname. Related objects by their stable keys,
as a probe's and a model group's: targets, model groups and objectives by name, regions by slug. Every change
forgets the page's cached copies once committed (probes.statuspages.services), as the admin's do."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from latency.api_v1.config import ByKey, ConfigViewSet, ModelRulesSerializer
from probes.models import ModelGroup, Region, ServiceLevelObjective, StatusPage, Target
from probes.statuspages.services import forget_on_commit


def _keys(field: str, queryset, help_text: str) -> ByKey:
    # The model's blank=True: a body may leave any of them out (a new page shows none, every region).
    return ByKey(slug_field=field, queryset=queryset, many=True, required=False, help_text=help_text)


class StatusPageSerializer(ModelRulesSerializer):
    """A status page: targets, model groups and objectives (slos) by name, regions by slug, each list optional
    (none; for regions, every region); path is where the page is read."""

    targets = _keys("name", Target.objects.all(), "Targets by name.")
    model_groups = _keys("name", ModelGroup.objects.all(), "Model groups by name: each one's targets are shown too.")
    regions = _keys("slug", Region.objects.all(), "Regions by slug; empty: every region.")
    slos = _keys(
        "name", ServiceLevelObjective.objects.all(), "Objectives by name: where a target's status and uptime come from."
    )
    path = serializers.SerializerMethodField(help_text="Where the page is read on this site: /status/<slug>/.")

    class Meta:
        model = StatusPage
        fields = (
            "id",
            "slug",
            "title",
            "description",
            "language",
            "targets",
            "model_groups",
            "regions",
            "slos",
            "show_latency",
            "public",
            "hostname",
            "path",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")

    def get_path(self, page: StatusPage) -> str:
        return reverse("status-page", args=[page.slug])

    def _save(self, validated_data):
        # self.instance is not the object saved (ModelRulesSerializer saves a cleaned copy): it holds the old slug.
        before = self.instance.slug if self.instance is not None else None
        page = super()._save(validated_data)
        forget_on_commit(before, page.slug)
        return page


class StatusPageViewSet(ConfigViewSet):
    queryset = StatusPage.objects.prefetch_related("targets", "model_groups", "regions", "slos").order_by("slug")
    serializer_class = StatusPageSerializer

    def perform_destroy(self, instance: StatusPage) -> None:
        super().perform_destroy(instance)
        forget_on_commit(instance.slug)
