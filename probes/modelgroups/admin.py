"""The model groups' admin: edited like targets, with the groups suggested from the targets' model names
(probes.modelgroups.suggest) above the list, each created only by a click on its button."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from probes.modelgroups import suggest
from probes.models import ModelGroup


@admin.register(ModelGroup)
class ModelGroupAdmin(admin.ModelAdmin):
    list_display = ("name", "target_list")
    search_fields = ("name", "targets__name", "targets__model")
    filter_horizontal = ("targets",)
    change_list_template = "admin/probes/modelgroup/change_list.html"

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # Objectives over this group count its targets: once committed, those whose coverage changed are
        # emptied and rebuilt (probes.slos.services).
        from probes.slos.services import reconcile

        transaction.on_commit(reconcile)

    @admin.display(description=_("targets"))
    def target_list(self, obj: ModelGroup) -> str:
        return ", ".join(t.name for t in obj.targets.all())

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("targets")

    def get_urls(self):
        own = [
            path(
                "suggested/",
                self.admin_site.admin_view(self.create_suggested),
                name="probes_modelgroup_create_suggested",
            )
        ]
        return own + super().get_urls()

    def changelist_view(self, request, extra_context=None):
        extra = {"suggested_groups": suggest.suggestions() if self.has_add_permission(request) else []}
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def create_suggested(self, request):
        """POST key=<a suggestion's key>: the group, made now; back to the list either way."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_add_permission(request):
            raise PermissionDenied
        group = suggest.create(request.POST.get("key", ""))
        if group is None:
            self.message_user(request, gettext("That suggestion is no longer offered."), messages.WARNING)
        else:
            self.log_addition(request, group, [{"added": {}}])
            self.message_user(
                request, gettext("Created the model group %(name)s.") % {"name": group.name}, messages.SUCCESS
            )
        return HttpResponseRedirect(reverse("admin:probes_modelgroup_changelist"))
