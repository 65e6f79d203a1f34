"""The admin's lists of region workers, their heartbeats and the runs nobody picked up: read-only
(the heartbeat handler and probes.close_slots write these rows; nobody adds or edits them here)."""

from __future__ import annotations

from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from probes.admin_base import WrittenByCodeAdmin
from probes.models import Measurement, MissedRun, Worker, WorkerBeat
from probes.readings.fleet import clock_flagged, worker_status

STATUS_LABELS = {
    "live": _("live"),
    "stale": _("late"),
    "lost": _("lost (silent)"),
    "stopped": _("stopped"),
}


@admin.register(Worker)
class WorkerAdmin(WrittenByCodeAdmin):
    list_display = (
        "region",
        "hostname",
        "name",
        "release",
        "status",
        "last_seen",
        "in_flight",
        "queue_depth",
        "clock_offset_ms",
        "clock_off",
        "refused_orders",
        "refused_replies",
        "key_id",
    )
    list_filter = ("region", "state")
    list_select_related = ("region",)
    search_fields = ("hostname", "name", "key_id", "instance")
    search_help_text = _("Search the host name, the node name, the key id and the instance.")
    ordering = ("-last_seen",)
    date_hierarchy = "last_seen"
    list_per_page = 100
    show_full_result_count = False

    @admin.display(description=_("status"))
    def status(self, obj: Worker) -> str:
        return str(STATUS_LABELS[worker_status(obj.state, obj.last_seen, timezone.now())])

    @admin.display(description=_("clock more than 1 s off"), boolean=True)
    def clock_off(self, obj: Worker) -> bool:
        return clock_flagged(obj.clock_offset_ms)


@admin.register(WorkerBeat)
class WorkerBeatAdmin(WrittenByCodeAdmin):
    """The short history of heartbeats (pruned after LATENCY_HEARTBEAT_HISTORY_HOURS): read-only."""

    list_display = ("at", "worker", "in_flight", "runs", "queue_depth", "clock_offset_ms")
    list_filter = ("worker__region",)
    list_select_related = ("worker",)
    ordering = ("-at",)
    date_hierarchy = "at"
    list_per_page = 100
    show_full_result_count = False


@admin.register(MissedRun)
class MissedRunAdmin(WrittenByCodeAdmin):
    """Scheduled runs no worker picked up (probes.fleet.missed), recorded by probes.close_slots; a
    measurement that still arrived for the slot wins, and the dashboard then no longer counts it."""

    list_display = ("scheduled_for", "region", "probe", "target", "recorded_at", "measured_later")
    list_filter = ("region", "target")
    list_select_related = ("region", "probe", "probe__target", "target")
    ordering = ("-scheduled_for",)
    date_hierarchy = "scheduled_for"
    list_per_page = 100
    show_full_result_count = False

    @admin.display(description=_("measured later"), boolean=True)
    def measured_later(self, obj: MissedRun) -> bool:
        return Measurement.objects.filter(
            probe_id=obj.probe_id, region_id=obj.region_id, scheduled_for=obj.scheduled_for
        ).exists()
