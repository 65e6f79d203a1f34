"""Admin base for rows only the system writes."""

from __future__ import annotations

from django.contrib import admin


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
