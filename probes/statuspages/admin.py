"""The status pages' admin (Configuration): what each page shows and who may read it."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from probes.models import StatusPage
from probes.statuspages.services import forget_on_commit


@admin.register(StatusPage)
class StatusPageAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "public", "language", "address", "hostname")
    list_filter = ("public", "language")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    filter_horizontal = ("targets", "model_groups", "regions", "slos")
    fieldsets = (
        (None, {"fields": ("title", "slug", "description", "language")}),
        (_("What it shows"), {"fields": ("targets", "model_groups", "regions", "slos", "show_latency")}),
        (_("Who reads it, where"), {"fields": ("public", "hostname")}),
    )

    def save_model(self, request, obj: StatusPage, form, change) -> None:
        before = StatusPage.objects.filter(pk=obj.pk).values_list("slug", flat=True).first()
        super().save_model(request, obj, form, change)
        forget_on_commit(before, obj.slug)

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        forget_on_commit(form.instance.slug)

    def delete_model(self, request, obj: StatusPage) -> None:
        super().delete_model(request, obj)
        forget_on_commit(obj.slug)

    def delete_queryset(self, request, queryset) -> None:
        slugs = list(queryset.values_list("slug", flat=True))
        super().delete_queryset(request, queryset)
        forget_on_commit(*slugs)

    @admin.display(description=_("address"))
    def address(self, obj: StatusPage) -> str:
        path = reverse("status-page", args=[obj.slug])
        return format_html('<a href="{}">{}</a>', path, path)
