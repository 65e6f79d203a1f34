from __future__ import annotations

import json
from datetime import UTC
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import Count
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy, ngettext
from django.utils.translation import gettext_lazy as _

from probes import geo
from probes.admin_base import WrittenByCodeAdmin
from probes.exports import stamp
from probes.exports.measurements import selection_csv
from probes.exports.responses import csv_response
from probes.fleet.credentials_admin import CentralKeyAdmin, RegionCredentialsAdmin, RegionKeyAdmin
from probes.forms import ProbeAdminForm, TargetAdminForm
from probes.models import (
    CentralKey,
    DeadLetter,
    HourlyRollup,
    Measurement,
    Probe,
    Region,
    RegionKey,
    Target,
)
from probes.readings.slots import slot_lookups

admin.site.register(RegionKey, RegionKeyAdmin)
admin.site.register(CentralKey, CentralKeyAdmin)


@admin.register(Region)
class RegionAdmin(RegionCredentialsAdmin):
    # Its credentials: the keys inline and the "New credential" page (probes.fleet.credentials_admin).
    list_display = ("name", "slug", "city", "country", "latitude", "longitude", "active")
    list_editable = ("active",)
    list_filter = ("active", "country")
    search_fields = ("name", "slug", "city", "country")


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    # The preset comes first: choosing one fills style, URL, key variable and HTTP version
    # (static/js/provider-presets.js), and Target.clean() holds the target to what the preset needs.
    form = TargetAdminForm
    list_display = ("name", "provider", "api_style", "model", "host", "api_key_env", "location_name", "probe_count")
    list_filter = ("provider", "api_style")
    search_fields = ("name", "url", "model", "location_name")
    readonly_fields = ("created_at",)
    fieldsets = (
        (None, {"fields": ("provider", "name", "api_style", "url", "model")}),
        (
            _("Credentials and TLS"),
            {
                "description": _(
                    "Secrets are never stored: name the environment variable that holds the key "
                    "on the workers, and write secret header values as ${VAR}."
                ),
                "fields": ("api_key_env", "headers", "ca_bundle", "http_version"),
            },
        ),
        (_("Where the endpoint is served from"), {"fields": ("location_name", "latitude", "longitude")}),
        (None, {"fields": ("created_at",)}),
    )

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_probe_count=Count("probes"))

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if not settings.LATENCY_EMULATED_GEOGRAPHY:
            return fieldsets
        # Emulated geography places a target without coordinates somewhere: the form says where, before it is
        # saved without them (probes.scheduling.region_spec).
        note = _(
            "Geography is emulated on this site: every region pays the round trip to these coordinates. A target "
            "without them is emulated as hosted in {place}."
        ).format(place=geo.DEFAULT_HOSTING_NAME)
        return tuple(
            (name, {**options, "description": note}) if "latitude" in options.get("fields", ()) else (name, options)
            for name, options in fieldsets
        )

    @admin.display(description=_("host"))
    def host(self, obj: Target) -> str:
        # The full URL is long and mostly path; the host is what tells targets apart.
        return urlsplit(obj.url).netloc

    @admin.display(description=_("probes"), ordering="_probe_count")
    def probe_count(self, obj: Target) -> int:
        return obj._probe_count

    def response_add(self, request, obj, post_url_continue=None):
        # A target measures nothing until a probe runs it: the next step is offered at once, with the target
        # chosen on the probe's form.
        if self.admin_site.is_registered(Probe) and request.user.has_perm("probes.add_probe"):
            url = f"{reverse('admin:probes_probe_add')}?{urlencode({'target': obj.pk})}"
            self.message_user(
                request,
                format_html(
                    _('“{target}” is measured once a probe runs it: <a href="{url}">add a probe for it</a>.'),
                    target=obj.name,
                    url=url,
                ),
                messages.INFO,
            )
        return super().response_add(request, obj, post_url_continue)


@admin.register(Probe)
class ProbeAdmin(admin.ModelAdmin):
    form = ProbeAdminForm
    list_display = (
        "name",
        "target",
        "interval_seconds",
        "timeout_seconds",
        "connection",
        "region_count",
        "enabled",
        "updated_at",
    )
    list_filter = ("target", "enabled", "connection")
    search_fields = ("name", "target__name")
    list_select_related = ("target",)
    readonly_fields = ("created_at", "updated_at")
    actions = ("run_now",)
    fieldsets = (
        (None, {"fields": ("target", "name", "enabled")}),
        (_("Request"), {"fields": ("prompt", "workload", "max_tokens", "connection")}),
        (_("Schedule"), {"fields": ("interval_seconds", "timeout_seconds", "regions")}),
        (None, {"fields": ("created_at", "updated_at")}),
    )

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_region_count=Count("regions"))

    @admin.display(description=_("regions"), ordering="_region_count")
    def region_count(self, obj: Probe) -> int:
        return obj._region_count

    @admin.action(description=_("Run now"), permissions=["change"])
    def run_now(self, request, queryset):
        # Imported here so the admin loads even while scheduling is being
        # changed, and so tests can substitute it.
        from probes.scheduling import run_now

        queued = run_now(list(queryset.values_list("pk", flat=True)))
        self.message_user(
            request,
            ngettext("Queued %(count)d run", "Queued %(count)d runs", queued) % {"count": queued},
            messages.SUCCESS,
        )


class StartedFilter(admin.DateFieldListFilter):
    """The started_at filter, with the slot bounds its dates imply (probes.readings.slots), so a day's rows are
    read from the partitions of the days around it only."""

    def queryset(self, request, queryset):
        queryset = super().queryset(request, queryset)
        bounds = slot_lookups(self.used_parameters)
        return queryset.filter(**{lookup: values[0] for lookup, values in bounds.items()})


class MeasurementChangeList(ChangeList):
    """The date hierarchy's (and a URL's) started_at range, with its slot bounds."""

    def get_filters(self, request):
        specs, has_filters, lookups, duplicates, active = super().get_filters(request)
        return specs, has_filters, {**lookups, **slot_lookups(lookups)}, duplicates, active


@admin.register(Measurement)
class MeasurementAdmin(WrittenByCodeAdmin):
    # Measurements are evidence: only the probes write them.
    superuser_may_delete = True
    # What tells one call from another, then the milestones a reader compares, in the order a call reaches
    # them; the network phases (DNS, connect, TLS) and tokens are on each row's page. Eight columns fit
    # 1440 px beside the admin's menu and filters with the targets' names on two lines
    # (tests/browser/test_browser_admin_fits_and_is_styled.py).
    list_display = ("started", "region_name", "target_name", "outcome", "ttfb", "ttft", "total", "http")
    list_filter = ("region", "target", "outcome", "connection", ("started_at", StartedFilter))
    list_select_related = ("region", "target")
    date_hierarchy = "started_at"
    search_fields = ("error",)
    search_help_text = _("Search the error text.")
    ordering = ("-started_at",)
    # A COUNT(*) over the whole table on every page view is the slowest part
    # of a large changelist; the filtered count is enough.
    show_full_result_count = False
    list_per_page = 100
    actions = ("export_csv",)
    fieldsets = (
        (None, {"fields": ("probe", "target", "region", "worker", "scheduled_for", "started_at", "ingested_at")}),
        (
            _("Outcome"),
            {
                "fields": (
                    "outcome",
                    "error",
                    "error_type",
                    "retry_after_s",
                    "ratelimit_remaining_requests",
                    "ratelimit_remaining_tokens",
                )
            },
        ),
        (_("Connection"), {"fields": ("connection", "http_status", "http_version", "remote_addr")}),
        (
            _("Timings (ms from the start of the call)"),
            {
                "fields": (
                    "dns_ms",
                    "connect_ms",
                    "tls_ms",
                    "request_sent_ms",
                    "ttfb_ms",
                    "first_event_ms",
                    "ttft_ms",
                    "ttfat_ms",
                    "total_ms",
                )
            },
        ),
        (
            _("Tokens"),
            {
                "fields": (
                    "input_tokens",
                    "cached_input_tokens",
                    "cache_write_tokens",
                    "output_tokens",
                    "reasoning_tokens",
                    "tokens_estimated",
                    "tokens_per_s",
                    "itl_p50_ms",
                    "itl_p95_ms",
                    "itl_max_ms",
                    "response_bytes",
                )
            },
        ),
    )

    def get_changelist(self, request, **kwargs):
        return MeasurementChangeList

    @admin.display(description=_("started (UTC)"), ordering="started_at")
    def started(self, obj: Measurement) -> str:
        # Compact and sortable by eye, instead of the admin's "Nov. 30, 2026, 10:27 p.m.".
        return obj.started_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")

    # Names through methods, not the foreign keys themselves: the admin keeps a foreign key's cell on one
    # line, and a target's name is long.
    @admin.display(description=_("region"), ordering="region__name")
    def region_name(self, obj: Measurement) -> str:
        return obj.region.name

    @admin.display(description=_("target"), ordering="target__name")
    def target_name(self, obj: Measurement) -> str:
        return obj.target.name

    @admin.display(description=_("TTFB (ms)"), ordering="ttfb_ms")
    def ttfb(self, obj: Measurement) -> str | None:
        return _milliseconds(obj.ttfb_ms)

    @admin.display(description=_("TTFT (ms)"), ordering="ttft_ms")
    def ttft(self, obj: Measurement) -> str | None:
        return _milliseconds(obj.ttft_ms)

    @admin.display(description=_("total (ms)"), ordering="total_ms")
    def total(self, obj: Measurement) -> str | None:
        return _milliseconds(obj.total_ms)

    @admin.display(description=_("HTTP"), ordering="http_status")
    def http(self, obj: Measurement) -> int | None:
        return obj.http_status

    @admin.action(description=_("Export selected as CSV"), permissions=["view"])
    def export_csv(self, request, queryset):
        # Same columns, query and neutralisation as /export/measurements.csv:
        # only the WHERE differs (the changelist's selection).
        name = f"latency-measurements-selected_{stamp(timezone.now())}.csv"
        return csv_response(selection_csv(queryset), name)


def _milliseconds(value: float | None) -> str | None:
    # One decimal: the stored microseconds are noise at a glance; None shows as the admin's empty value.
    return None if value is None else f"{value:.1f}"


def _percentile(hist: dict, q: float) -> float | None:
    from probes.histogram import Histogram

    try:
        value = Histogram.from_sparse(hist or {}).percentile(q)
    except ValueError:
        # A malformed stored histogram should not take the changelist down.
        return None
    return None if value is None else round(value, 1)


@admin.register(HourlyRollup)
class HourlyRollupAdmin(WrittenByCodeAdmin):
    # Rollups are derived from measurements and rebuilt by code, never edited.
    list_display = ("hour", "probe", "region", "samples", "errors", "ttft_p50", "ttft_p95", "tokens_per_s")
    list_filter = ("region", "target")
    list_select_related = ("probe__target", "region")
    date_hierarchy = "hour"
    search_fields = ("probe__name", "target__name", "region__slug")
    ordering = ("-hour",)
    show_full_result_count = False

    @admin.display(description=_("TTFT p50 (ms)"))
    def ttft_p50(self, obj: HourlyRollup):
        return _percentile(obj.ttft_hist, 0.5)

    @admin.display(description=_("TTFT p95 (ms)"))
    def ttft_p95(self, obj: HourlyRollup):
        return _percentile(obj.ttft_hist, 0.95)

    @admin.display(description=gettext_lazy("tokens/s p50"))
    def tokens_per_s(self, obj: HourlyRollup):
        return _percentile(obj.tokens_per_s_hist, 0.5)


@admin.register(DeadLetter)
class DeadLetterAdmin(WrittenByCodeAdmin):
    """What the ingest rejected, as received. Read-only for everyone: these
    rows are evidence, removed only by retention (LATENCY_RETENTION_DAYS)."""

    list_display = ("received_at", "source", "short_reason", "probe_id", "target_id", "region_id", "worker")
    list_filter = ("source", "received_at")
    date_hierarchy = "received_at"
    search_fields = ("reason", "worker")
    search_help_text = _("Search the reason and the worker.")
    ordering = ("-received_at",)
    show_full_result_count = False
    list_per_page = 100
    fields = (
        "received_at",
        "source",
        "reason",
        ("probe_id", "target_id", "region_id"),
        "worker",
        ("message_id", "payload_index"),
        "received",
    )
    readonly_fields = (
        "received_at",
        "source",
        "reason",
        "probe_id",
        "target_id",
        "region_id",
        "worker",
        "message_id",
        "payload_index",
        "received",
    )

    @admin.display(description=_("reason"))
    def short_reason(self, obj: DeadLetter) -> str:
        return obj.reason if len(obj.reason) <= 120 else obj.reason[:119] + "…"

    @admin.display(description=_("as received"))
    def received(self, obj: DeadLetter):
        text = json.dumps(obj.payload, indent=2, ensure_ascii=False) if obj.payload is not None else obj.payload_text
        return format_html('<pre class="dead-letter">{}</pre>', text)


# Users and groups (probes/admin_users.py): Django's admins, with rights (superuser, staff, groups,
# permissions) kept to superusers. Region workers: an admin module of their own (probes/fleet/admin_workers.py).
# Alert rules, incidents, silences and notification channels (write-only Apprise URLs, health, "Send test
# notification"): admin modules of their own, registered on import.
from probes import admin_users  # noqa: E402, F401
from probes.alerts import channels_admin, incidents_admin, rules_admin  # noqa: E402, F401

# API tokens for /api/v1/ (shown once, revocable): their own admin module.
from probes.apitokens import admin as apitokens_admin  # noqa: E402, F401
from probes.fleet import admin_workers  # noqa: E402, F401
from probes.modelgroups import admin as modelgroups_admin  # noqa: E402, F401

# Ingest sources of real users' calls (a token shown once, "Rotate token"): their own admin module.
from probes.realusers import admin as realusers_admin  # noqa: E402, F401

# Service level objectives (Configuration) and their hourly counts (Records, read-only): their own admin module.
from probes.slos import admin as slos_admin  # noqa: E402, F401

# Status pages (Configuration): their own admin module.
from probes.statuspages import admin as statuspages_admin  # noqa: E402, F401
