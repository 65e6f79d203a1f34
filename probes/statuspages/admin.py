"""The status pages' admin (Configuration): what each page shows and who may read it."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from probes.models import StatusPage


@admin.register(StatusPage)
class StatusPageAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "public", "hostname", "language", "address")
    list_filter = ("public", "language")
    search_fields = ("title", "slug", "hostname")
    prepopulated_fields = {"slug": ("title",)}
    filter_horizontal = ("targets", "model_groups", "regions", "slos")
    fieldsets = (
        (None, {"fields": ("title", "slug", "description", "language")}),
        (_("What it shows"), {"fields": ("targets", "model_groups", "regions", "slos", "show_latency")}),
        (_("Who reads it"), {"fields": ("public", "hostname")}),
    )

    @admin.display(description=_("address"))
    def address(self, obj: StatusPage) -> str:
        path = reverse("status-page", args=[obj.slug])
        return format_html('<a href="{}">{}</a>', path, path)
