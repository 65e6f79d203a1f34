"""The admin of incidents (read-only: the evaluator writes them, people
acknowledge them on the incident page) and of silences (maintenance windows,
written by people here or from the pages)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import admin
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from probes.admin_base import WrittenByCodeAdmin
from probes.alerts.models import Incident, IncidentEvent, Silence


class OpenFilter(admin.SimpleListFilter):
    title = gettext_lazy("state")
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("open", gettext_lazy("open")), ("resolved", gettext_lazy("resolved"))]

    def queryset(self, request, queryset):
        if self.value() == "open":
            return queryset.filter(resolved_at__isnull=True)
        if self.value() == "resolved":
            return queryset.filter(resolved_at__isnull=False)
        return queryset


class IncidentEventInline(admin.TabularInline):
    model = IncidentEvent
    fields = ("at", "kind", "region", "channel", "attempt", "user", "detail")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("at", "id")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Incident)
class IncidentAdmin(WrittenByCodeAdmin):
    list_display = (
        "id",
        "rule",
        "target",
        "scope",
        "phase",
        "started_at",
        "resolved_at",
        "acknowledged_by",
        "silenced",
    )
    list_filter = (OpenFilter, "scope", "phase", "silenced", "rule", "target")
    list_select_related = ("rule", "target", "acknowledged_by")
    search_fields = ("summary", "rule__name", "target__name")
    date_hierarchy = "started_at"
    inlines = [IncidentEventInline]

    def view_on_site(self, obj: Incident) -> str:
        # The incident page: its charts and the acknowledge button.
        return reverse("incident", args=[obj.pk])


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ("target", "starts_at", "ends_at", "reason", "created_by", "active")
    list_filter = ("target",)
    list_select_related = ("target", "created_by")
    search_fields = ("target__name", "reason")
    fields = ("target", "starts_at", "ends_at", "reason", "created_by")
    readonly_fields = ("created_by",)

    def get_changeform_initial_data(self, request):
        now = timezone.now().replace(second=0, microsecond=0)
        return {"starts_at": now, "ends_at": now + timedelta(hours=1), **super().get_changeform_initial_data(request)}

    def save_model(self, request, obj: Silence, form, change) -> None:
        # Who silenced notifications is recorded once, by whoever created the window.
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    @admin.display(description=gettext_lazy("active now"), boolean=True)
    def active(self, obj: Silence) -> bool:
        return obj.starts_at <= timezone.now() < obj.ends_at
