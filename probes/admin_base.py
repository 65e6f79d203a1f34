"""Admin bases: rows only the system writes, and pages that show a secret once."""

from __future__ import annotations

from django.contrib import admin
from django.utils.cache import add_never_cache_headers


class WrittenByCodeAdmin(admin.ModelAdmin):
    """Rows only the system writes (measurements, rollups, dead letters, workers, heartbeats, missed runs,
    region keys): nobody adds or edits them here, and only a superuser may delete, where the class allows
    it at all."""

    superuser_may_delete = False

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.superuser_may_delete and request.user.is_superuser and super().has_delete_permission(request, obj)


class SecretOnceAdmin(admin.ModelAdmin):
    """Admins whose POST answer is the one page showing a secret they just made (an API token, an ingest token, a
    region credential): the site keeps only its hash or public key, so the page is built here once for the three,
    never cached, and extends templates/admin/secret_once.html."""

    def secret_page(self, request, obj, template: str, title: str, **context):
        from django.conf import settings
        from django.template.response import TemplateResponse

        response = TemplateResponse(
            request,
            template,
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "original": obj,
                "title": title,
                # Where scripts and workers reach this site, for the page's instructions.
                "site": settings.LATENCY_SITE_URL or request.build_absolute_uri("/").rstrip("/"),
                **context,
            },
        )
        # No cache, proxy or back button may keep the one copy of the secret.
        add_never_cache_headers(response)
        return response
