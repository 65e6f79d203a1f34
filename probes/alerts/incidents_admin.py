"""The admin of incidents (read-only: the evaluator writes them, people
acknowledge them on the incident page) and of silences (maintenance windows,
written by people here or from the pages)."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from django.contrib import admin
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from probes.admin_base import WrittenByCodeAdmin
from probes.alerts import wording
from probes.alerts.models import Incident, IncidentEvent, IncidentUpdate, Silence


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


class ReadOnlyInline(admin.TabularInline):
    """Rows of an incident written elsewhere (by the evaluator, or on the incident page), listed here as they are."""

    extra = 0
    can_delete = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.readonly_fields = cls.fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class IncidentEventInline(ReadOnlyInline):
    model = IncidentEvent
    fields = ("at", "kind", "region", "channel", "attempt", "user", "detail_text")
    ordering = ("at", "id")

    @admin.display(description=gettext_lazy("detail"))
    def detail_text(self, obj: IncidentEvent) -> str:
        # In the reader's language, as the incident page shows it.
        return wording.event_text(obj.detail_data, obj.detail)


class IncidentUpdateInline(ReadOnlyInline):
    """What status pages show of the incident, in order: posted from the incident page by those with the
    permission to add incident updates (latency.incident_views), read here."""

    model = IncidentUpdate
    fields = ("posted_at", "status", "text", "posted_by")
    ordering = ("posted_at", "id")


@admin.register(Incident)
class IncidentAdmin(WrittenByCodeAdmin):
    list_display = (
        "id",
        "rule",
        "objective",
        "severity",
        "target",
        "scope",
        "phase",
        "started_at",
        "resolved_at",
        "acknowledged_by",
        "silenced",
    )
    list_filter = (OpenFilter, "scope", "severity", "phase", "silenced", "rule", "objective", "target")
    list_select_related = ("rule", "objective", "target", "acknowledged_by")
    search_fields = ("summary", "rule__name", "objective__name", "target__name")
    date_hierarchy = "started_at"
    inlines = [IncidentUpdateInline, IncidentEventInline]
    # The summary in the reader's language (as the incident page shows it) in place of the English it is stored in.
    fields = (
        "rule",
        "objective",
        "severity",
        "target",
        "started_at",
        "opened_at",
        "resolved_at",
        "scope",
        "regions",
        "measured_regions",
        "summary_text",
        "phase",
        "peak_value",
        "baseline_value",
        "silenced",
        "acknowledged_at",
        "acknowledged_by",
    )
    readonly_fields = ("summary_text",)

    @admin.display(description=gettext_lazy("summary"))
    def summary_text(self, obj: Incident) -> str:
        return wording.readable(obj.summary_data, obj.summary)

    def view_on_site(self, obj: Incident) -> str:
        # The incident page: its charts and the acknowledge button.
        return reverse("incident", args=[obj.pk])


def _recount_on_commit(*spans) -> None:
    """Objectives excluding silences whose calls already counted a silence's old or new span covers are
    recounted once this commits (probes.slos.services.silence_changed)."""
    from probes.slos.services import silence_changed

    by_target: dict[int, list] = {}
    for span in spans:
        if span is not None:
            by_target.setdefault(span[0], []).append((span[1], span[2]))
    now = timezone.now()
    for target_id, target_spans in by_target.items():
        transaction.on_commit(partial(silence_changed, target_id, target_spans, now))


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ("target", "starts_at", "ends_at", "reason", "public", "created_by", "active")
    list_filter = ("target", "public")
    list_select_related = ("target", "created_by")
    search_fields = ("target__name", "reason")
    fields = ("target", "starts_at", "ends_at", "reason", "public", "created_by")
    readonly_fields = ("created_by",)

    def get_changeform_initial_data(self, request):
        now = timezone.now().replace(second=0, microsecond=0)
        return {"starts_at": now, "ends_at": now + timedelta(hours=1), **super().get_changeform_initial_data(request)}

    def save_model(self, request, obj: Silence, form, change) -> None:
        # Who silenced notifications is recorded once, by whoever created the window.
        if not change:
            obj.created_by = request.user
        before = Silence.objects.filter(pk=obj.pk).values_list("target_id", "starts_at", "ends_at").first()
        super().save_model(request, obj, form, change)
        after = (obj.target_id, obj.starts_at, obj.ends_at)
        if before != after:  # a new reason changes no call's class
            _recount_on_commit(before, after)

    def delete_model(self, request, obj: Silence) -> None:
        super().delete_model(request, obj)
        _recount_on_commit((obj.target_id, obj.starts_at, obj.ends_at))

    def delete_queryset(self, request, queryset) -> None:
        spans = list(queryset.values_list("target_id", "starts_at", "ends_at"))
        super().delete_queryset(request, queryset)
        _recount_on_commit(*spans)

    @admin.display(description=gettext_lazy("active now"), boolean=True)
    def active(self, obj: Silence) -> bool:
        return obj.starts_at <= timezone.now() < obj.ends_at
