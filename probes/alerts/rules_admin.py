"""The admin of alert rules: a rule that can never fire or always fires is
refused on save, each reason beside its field (probes.alerts.rules.refusals),
and the list shows how many regions each rule can judge now (rules.reach),
since a probe removed later makes a rule quiet without any error."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import Count, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from probes.alerts import rules
from probes.alerts.models import AlertRule

# The fields rules.refusals reads, beside the form's own names for them.
REFUSAL_FIELDS = (
    "metric",
    "percentile",
    "threshold_ms",
    "threshold_percent",
    "baseline_factor",
    "window_minutes",
    "min_samples",
    "min_regions",
    "min_regions_percent",
)


class AlertRuleAdminForm(forms.ModelForm):
    class Meta:
        model = AlertRule
        fields = (
            "name",
            "enabled",
            "target",
            "metric",
            "percentile",
            *REFUSAL_FIELDS[2:],
            "regions",
            "channels",
        )

    def clean(self):
        data = super().clean()
        metric = data.get("metric")
        if metric is None:
            return data  # the field's own error says what is wrong
        if rules.is_rate(metric):
            # A percentile means nothing for a share: cleared, not refused.
            data["percentile"] = ""
        if any(name in self.errors for name in (*REFUSAL_FIELDS, "target", "regions")):
            # Judged on values the form could not read, the reasons would be about the wrong rule.
            return data
        target = data.get("target")
        regions = data.get("regions")
        problems = rules.refusals(
            **{name: data.get(name) for name in REFUSAL_FIELDS},
            target_id=target.id if target is not None else None,
            region_ids=[r.id for r in regions] if regions is not None else None,
        )
        for field, reason in problems.items():
            self.add_error(field if field in self.fields else None, reason)
        return data


class RuleState(admin.SimpleListFilter):
    title = gettext_lazy("open incidents")
    parameter_name = "incidents"

    def lookups(self, request, model_admin):
        return [("open", gettext_lazy("with an open incident")), ("none", gettext_lazy("none open"))]

    def queryset(self, request, queryset):
        if self.value() == "open":
            return queryset.filter(_open_incidents__gt=0)
        if self.value() == "none":
            return queryset.filter(_open_incidents=0)
        return queryset


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    form = AlertRuleAdminForm
    list_display = (
        "name",
        "target_or_every",
        "metric",
        "percentile",
        "condition",
        "window_minutes",
        "quorum",
        "enabled",
        "channel_count",
        "open_incidents",
        "regions_judged",
    )
    list_filter = ("enabled", "metric", RuleState, "target")
    search_fields = ("name", "target__name")
    filter_horizontal = ("regions", "channels")
    readonly_fields = ("created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "enabled", "target", "metric", "percentile")}),
        (
            gettext_lazy("Condition"),
            {
                "description": gettext_lazy(
                    "Latency metrics take threshold_ms and/or baseline_factor (both set: both must hold); error "
                    "rate, missed runs and rate-limited calls take threshold_percent."
                ),
                "fields": ("threshold_ms", "baseline_factor", "threshold_percent", "window_minutes", "min_samples"),
            },
        ),
        (gettext_lazy("Quorum"), {"fields": ("min_regions", "min_regions_percent", "regions")}),
        (gettext_lazy("Notifications"), {"fields": ("channels",)}),
        (None, {"fields": ("created_at", "updated_at")}),
    )

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("target")
            .prefetch_related("regions")
            .annotate(
                _channels=Count("channels", distinct=True),
                _open_incidents=Count("incidents", filter=Q(incidents__resolved_at__isnull=True), distinct=True),
            )
        )

    @admin.display(description=gettext_lazy("target"), ordering="target__name")
    def target_or_every(self, obj: AlertRule) -> str:
        return obj.target.name if obj.target is not None else _("every target")

    @admin.display(description=gettext_lazy("condition"))
    def condition(self, obj: AlertRule) -> str:
        parts = []
        if obj.threshold_ms is not None:
            parts.append(_("above %(ms)s ms") % {"ms": f"{obj.threshold_ms:g}"})
        if obj.baseline_factor is not None:
            parts.append(_("above %(factor)s× baseline") % {"factor": f"{obj.baseline_factor:g}"})
        if obj.threshold_percent is not None:
            parts.append(_("above %(percent)s %%") % {"percent": f"{obj.threshold_percent:g}"})
        return _(" and ").join(parts) or "–"

    @admin.display(description=gettext_lazy("quorum"))
    def quorum(self, obj: AlertRule) -> str:
        if obj.min_regions_percent is not None:
            return _("%(n)d regions or %(percent)s %% of those measured") % {
                "n": obj.min_regions,
                "percent": f"{obj.min_regions_percent:g}",
            }
        return str(obj.min_regions)

    @admin.display(description=gettext_lazy("channels"), ordering="_channels")
    def channel_count(self, obj: AlertRule) -> int:
        return obj._channels  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("open incidents"), ordering="_open_incidents")
    def open_incidents(self, obj: AlertRule) -> int:
        return obj._open_incidents  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("regions it can judge"))
    def regions_judged(self, obj: AlertRule) -> int:
        return rules.reach(obj.target_id, [r.id for r in obj.regions.all()], obj.window_minutes).regions
