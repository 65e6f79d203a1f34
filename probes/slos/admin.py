"""Objectives in the admin (Configuration), and their hourly counts as a read-only record (Records).

The form is also what `atlas apply` judges an objective with (probes.config_as_code.apply): the model's
full_clean() (probes.slos.rules.clean_objective) and what only a form holding the many-to-many fields can check
(rules.check_scope). A save is followed, once committed, by services.objective_saved, which empties the counts
made under a condition that changed."""

from __future__ import annotations

from decimal import Decimal
from functools import partial

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from probes.admin_base import WrittenByCodeAdmin
from probes.forms import BoundedJSONField, follow_model_bounds
from probes.slos import rules, services
from probes.slos.models import ServiceLevelObjective, SLOHourCount

SCOPE_FIELDS = ("targets", "model_group", "regions", "mix")


class ObjectiveAdminForm(forms.ModelForm):
    class Meta:
        model = ServiceLevelObjective
        fields = rules.EDITABLE_FIELDS
        field_classes = {"mix": BoundedJSONField}
        widgets = {"regions": forms.CheckboxSelectMultiple, "channels": forms.CheckboxSelectMultiple}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        follow_model_bounds(self)

    def clean_mix(self):
        # An empty box (or {} from a file) is no mix, stored as the model's default rather than null.
        return self.cleaned_data.get("mix") or {}

    def clean(self):
        data = super().clean()
        if any(name in self.errors for name in SCOPE_FIELDS):
            # Judged without a value the form could not read, the reason would be about another objective.
            return data
        try:
            rules.check_scope(
                targets=data.get("targets") or (),
                model_group=data.get("model_group"),
                regions=data.get("regions") or (),
                mix=data.get("mix"),
            )
        except ValidationError as exc:
            self.add_error(None, exc)
        return data


def _ms(value: float) -> str:
    return f"{value:g}"


@admin.register(ServiceLevelObjective)
class ServiceLevelObjectiveAdmin(admin.ModelAdmin):
    form = ObjectiveAdminForm
    list_display = ("name", "enabled", "covers", "where", "thresholds", "objective", "window", "exact_since")
    list_filter = ("enabled", "window")
    search_fields = ("name",)
    list_select_related = ("model_group",)
    filter_horizontal = ("targets",)
    readonly_fields = ("exact_since", "created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "enabled")}),
        (
            gettext_lazy("What it covers"),
            {
                "description": gettext_lazy(
                    "Targets or a model group; the regions whose calls count, or a mix of users weighing the "
                    "regions by their shares (neither: every region)."
                ),
                "fields": ("targets", "model_group", "regions", "mix"),
            },
        ),
        (
            gettext_lazy("The good call"),
            {
                "description": gettext_lazy(
                    "A call is good when it succeeded and every threshold given holds; a call exactly at a "
                    "threshold is good."
                ),
                "fields": (
                    "ttft_threshold_ms",
                    "tpot_threshold_ms",
                    "total_threshold_ms",
                    "degraded_ttft_threshold_ms",
                ),
            },
        ),
        (
            gettext_lazy("Objective"),
            {"fields": ("objective_percent", "window", "exclude_silences", "exclude_rate_limited")},
        ),
        (
            gettext_lazy("Burn-rate alerts"),
            {
                "description": gettext_lazy(
                    "A page when the budget burns 14.4 times too fast over 1 hour and 5 minutes, or 6 times over "
                    "6 hours and 30 minutes; a ticket at once over 3 days and 6 hours. Incidents open whatever the "
                    "channels; these channels are told."
                ),
                "fields": ("channels",),
            },
        ),
        (
            gettext_lazy("Counts"),
            {
                "description": gettext_lazy(
                    "Calls are counted as they are stored; a new objective, or a changed good call, is counted "
                    "again from the raw rows kept. Until then the counts are exact from no hour."
                ),
                "fields": ("exact_since", "created_at", "updated_at"),
            },
        ),
    )

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("targets", "regions", "channels")

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        transaction.on_commit(partial(services.objective_saved, obj.pk))

    @admin.display(description=gettext_lazy("covers"))
    def covers(self, obj: ServiceLevelObjective) -> str:
        if obj.model_group is not None:
            return _("model group %(name)s") % {"name": obj.model_group.name}
        return ", ".join(target.name for target in obj.targets.all())

    @admin.display(description=gettext_lazy("regions or mix"))
    def where(self, obj: ServiceLevelObjective) -> str:
        if obj.mix:
            return _("mix: %(shares)s") % {
                "shares": ", ".join(f"{slug} {share:g}" for slug, share in sorted(obj.mix.items()))
            }
        regions = sorted(region.slug for region in obj.regions.all())
        return ", ".join(regions) if regions else _("every region")

    @admin.display(description=gettext_lazy("good call"))
    def thresholds(self, obj: ServiceLevelObjective) -> str:
        parts = [_("TTFT ≤ %(ms)s ms") % {"ms": _ms(obj.ttft_threshold_ms)}]
        if obj.tpot_threshold_ms is not None:
            parts.append(_("TPOT ≤ %(ms)s ms") % {"ms": _ms(obj.tpot_threshold_ms)})
        if obj.total_threshold_ms is not None:
            parts.append(_("total ≤ %(ms)s ms") % {"ms": _ms(obj.total_threshold_ms)})
        text = ", ".join(parts)
        if obj.degraded_ttft_threshold_ms is not None:
            text += "; " + _("degraded above %(ms)s ms") % {"ms": _ms(obj.degraded_ttft_threshold_ms)}
        return text

    @admin.display(description=gettext_lazy("objective (%)"), ordering="objective_percent")
    def objective(self, obj: ServiceLevelObjective) -> str:
        # 99.9000 as 99.9: the stored decimal places are the column's, not the objective's.
        value = Decimal(obj.objective_percent).normalize()
        return f"{value:f}"


@admin.register(SLOHourCount)
class SLOHourCountAdmin(WrittenByCodeAdmin):
    """Written by ingest and the rebuild, never by hand: an edited count would make every figure read from it
    wrong without anything saying so. Shown so an administrator can see what an objective's figures add up."""

    list_display = ("hour", "objective", "target", "region", "good", "degraded", "bad", "missed", "excluded")
    list_filter = ("objective", "region")
    list_select_related = ("objective", "target", "region")
    date_hierarchy = "hour"
    ordering = ("-hour",)
    show_full_result_count = False
    list_per_page = 100
