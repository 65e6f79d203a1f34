"""Regions, targets and probes over the API: list, create, update, delete.

One set of rules: DRF only turns JSON into Python values (types, choices, null and surrogate characters,
which PostgreSQL refuses); everything else is the model's full_clean(), what the admin's forms call, its
messages mapped onto the same field names. Bodies name related objects by their stable keys (a probe's target
by name, its regions by slug); URLs name objects by id."""

from __future__ import annotations

import copy

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.db import transaction
from rest_framework import serializers, viewsets
from rest_framework.fields import ProhibitSurrogateCharactersValidator, get_error_detail
from rest_framework.settings import api_settings

from latency.api_v1.errors import refuse_if_protected
from probes.forms import NO_REGION
from probes.models import Probe, Region, Target

# What DRF's fields check that a model's rules cannot: characters PostgreSQL cannot store at all.
STORABLE = (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator)


def field_errors(exc: DjangoValidationError) -> dict:
    """A model's ValidationError as DRF's error body: {field: [messages]}, non-field ones under DRF's key."""
    detail = get_error_detail(exc)
    if not isinstance(detail, dict):
        detail = {api_settings.NON_FIELD_ERRORS_KEY: detail}
    return {(api_settings.NON_FIELD_ERRORS_KEY if k == "__all__" else k): v for k, v in detail.items()}


class ByKey(serializers.SlugRelatedField):
    """A related object named by its stable key (a target's name, a region's slug)."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            # No key holds one, and PostgreSQL cannot even be asked about it.
            self.fail("does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", ""))
        return super().to_internal_value(data)


class ModelRulesSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose only rules are the model's: DRF's copies of the model's validators (lengths,
    bounds, uniqueness) are dropped, and validate() runs full_clean() on the object as it would be saved.
    The object full_clean() judged is the one saved, so what clean() fills in (a Gemini target's model, read
    from its URL) is kept."""

    def get_fields(self):
        fields = super().get_fields()
        for field in fields.values():
            field.validators = [v for v in field.validators if isinstance(v, STORABLE)]
            child = getattr(field, "child_relation", None)
            if child is not None:
                child.validators = []
        return fields

    def get_validators(self):
        # Unique-together checks: full_clean() validates the model's constraints.
        return []

    def validate(self, attrs):
        model = self.Meta.model
        obj = copy.copy(self.instance) if self.instance is not None else model()
        for name, value in attrs.items():
            if not model._meta.get_field(name).many_to_many:
                setattr(obj, name, value)
        try:
            obj.full_clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(field_errors(exc)) from None
        self._cleaned = obj
        return attrs

    def _save(self, validated_data):
        obj = self._cleaned
        with transaction.atomic():
            obj.save()
            for name, value in validated_data.items():
                if self.Meta.model._meta.get_field(name).many_to_many:
                    getattr(obj, name).set(value)
        return obj

    def create(self, validated_data):
        return self._save(validated_data)

    def update(self, instance, validated_data):
        return self._save(validated_data)


class RegionSerializer(ModelRulesSerializer):
    class Meta:
        model = Region
        fields = ("id", "slug", "name", "city", "country", "latitude", "longitude", "active", "updated_at")
        read_only_fields = ("updated_at",)


class TargetSerializer(ModelRulesSerializer):
    """No key: api_key_env names the environment variable that holds it on the workers, and a secret header
    must be a ${VAR} reference (the model's validators refuse a literal one)."""

    class Meta:
        model = Target
        fields = (
            "id",
            "name",
            "api_style",
            "provider",
            "url",
            "model",
            "api_key_env",
            "headers",
            "ca_bundle",
            "http_version",
            "location_name",
            "latitude",
            "longitude",
            "created_at",
        )
        read_only_fields = ("created_at",)


class ProbeSerializer(ModelRulesSerializer):
    target = ByKey(slug_field="name", queryset=Target.objects.all())
    # The admin's rule (probes.forms): the regions are written after the probe, so Probe.clean() cannot see them.
    regions = ByKey(
        slug_field="slug",
        queryset=Region.objects.all(),
        many=True,
        allow_empty=False,
        error_messages={"empty": NO_REGION},
    )

    class Meta:
        model = Probe
        fields = (
            "id",
            "target",
            "name",
            "enabled",
            "prompt",
            "workload",
            "max_tokens",
            "connection",
            "interval_seconds",
            "timeout_seconds",
            "regions",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("created_at", "updated_at")


class ConfigViewSet(viewsets.ModelViewSet):
    """The admin's permissions (view, add, change, delete); deleting an object rows still protect is a 409."""

    def perform_destroy(self, instance) -> None:
        refuse_if_protected(instance)
        instance.delete()


class RegionViewSet(ConfigViewSet):
    queryset = Region.objects.order_by("slug")
    serializer_class = RegionSerializer


class TargetViewSet(ConfigViewSet):
    queryset = Target.objects.order_by("name")
    serializer_class = TargetSerializer


class ProbeViewSet(ConfigViewSet):
    queryset = Probe.objects.select_related("target").prefetch_related("regions").order_by("target__name", "name")
    serializer_class = ProbeSerializer
