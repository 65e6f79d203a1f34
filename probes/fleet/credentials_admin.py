"""Region credentials in the admin: the region page lists its keys and has a
"New credential" button; the credential is shown once, on the answer to that
POST, and never again (the site keeps only the public key). Keys are
retired here, never edited or added by hand. Registered from probes.admin."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.urls import path
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from probes.admin_base import SecretOnceAdmin, WrittenByCodeAdmin
from probes.fleet.keys import DEFAULT_OVERLAP, issue_key
from probes.models import CentralKey, RegionKey

# The overlaps offered on the page (manage.py region_key takes any duration).
OVERLAPS = {
    "0": timedelta(0),
    "1h": timedelta(hours=1),
    "24h": DEFAULT_OVERLAP,
    "7d": timedelta(days=7),
}


def in_force(key: RegionKey, now: datetime | None = None) -> bool:
    return key.retires_at is None or key.retires_at > (now or datetime.now(UTC))


class NewCredentialForm(forms.Form):
    overlap = forms.ChoiceField(
        label=_("Earlier credentials of this region"),
        choices=[
            ("0", _("stop working at once")),
            ("1h", _("keep working for 1 hour")),
            ("24h", _("keep working for 24 hours")),
            ("7d", _("keep working for 7 days")),
        ],
        initial="24h",
        widget=forms.RadioSelect,
        help_text=_("Time to put the new credential on the region's hosts and restart their workers."),
    )
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=200,
        help_text=_("Kept with the key, e.g. which hosts get it. Not secret."),
    )


class RegionKeyInline(admin.TabularInline):
    """The region's keys on its page, read-only: no secret, only the public key's id."""

    model = RegionKey
    fields = ("key_id", "created_at", "retires_at", "key_in_force", "note")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True
    ordering = ("-created_at",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description=_("in force"), boolean=True)
    def key_in_force(self, obj: RegionKey) -> bool:
        return in_force(obj)


class RegionCredentialsAdmin(SecretOnceAdmin):
    """The base of RegionAdmin: the keys inline, the "New credential" button
    and its page."""

    inlines = [RegionKeyInline]
    change_form_template = "admin/probes/region/change_form.html"

    def get_urls(self):
        # Before the admin's own: its catch-all <object_id>/ would take the URL.
        name = f"{self.opts.app_label}_{self.opts.model_name}_credential"
        view = self.admin_site.admin_view(self.new_credential_view)
        return [path("<path:object_id>/credential/", view, name=name), *super().get_urls()]

    def new_credential_view(self, request, object_id: str):
        region = self.get_object(request, unquote(object_id))
        if region is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request, region):
            raise PermissionDenied
        issued = None
        form = NewCredentialForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            issued = issue_key(region, overlap=OVERLAPS[form.cleaned_data["overlap"]], note=form.cleaned_data["note"])
            # The history names the key, never the credential.
            added = {"name": str(RegionKey._meta.verbose_name), "object": f"{region.slug} key {issued.key_id}"}
            self.log_change(request, region, [{"added": added}])
        now = datetime.now(UTC)
        keys = [
            (key, in_force(key, now))
            for key in RegionKey.objects.filter(region=region).order_by("-created_at")
            if issued is None or key.key_id != issued.key_id
        ]
        # When the last of the earlier keys still accepted stops being accepted.
        ends = [key.retires_at for key, live in keys if live and key.retires_at is not None]
        return self.secret_page(
            request,
            region,
            "admin/probes/region/new_credential.html",
            _("New credential for %(region)s") % {"region": region.name},
            form=form,
            issued=issued,
            keys=keys,
            earlier_until=max(ends) if ends else None,
            setting="LATENCY_REGION_KEY",
            setting_of_region="LATENCY_REGION_KEY_" + region.slug.upper().replace("-", "_"),
        )


class RegionKeyAdmin(WrittenByCodeAdmin):
    """Every region's keys. Made only by the "New credential" button (or
    manage.py region_key); never edited; retired with the action; never
    deleted: a retired key stays, the record of what was once accepted."""

    list_display = ("key_id", "region", "created_at", "retires_at", "key_in_force", "note")
    list_filter = ("region",)
    list_select_related = ("region",)
    search_fields = ("key_id", "region__slug", "region__name", "note")
    ordering = ("-created_at",)
    fields = ("region", "key_id", "public_key", "created_at", "retires_at", "note")
    readonly_fields = fields
    actions = ("retire_now",)

    def has_retire_permission(self, request) -> bool:
        return request.user.has_perm("probes.change_regionkey") or request.user.has_perm("probes.change_region")

    @admin.display(description=_("in force"), boolean=True)
    def key_in_force(self, obj: RegionKey) -> bool:
        return in_force(obj)

    @admin.action(description=_("Retire now: stop accepting the selected keys"), permissions=["retire"])
    def retire_now(self, request, queryset) -> None:
        now = datetime.now(UTC)
        retired = list(queryset.exclude(retires_at__lte=now).select_related("region"))
        RegionKey.objects.filter(pk__in=[key.pk for key in retired]).exclude(retires_at__lte=now).update(retires_at=now)
        for key in retired:
            self.log_change(request, key, [{"changed": {"fields": ["retires_at"]}}])
        self.message_user(
            request,
            ngettext("Retired %(count)d key.", "Retired %(count)d keys.", len(retired)) % {"count": len(retired)},
            messages.SUCCESS,
        )


class CentralKeyAdmin(WrittenByCodeAdmin):
    """The central site's signing keys (probes.fleet.central), by id: made and rotated by
    `manage.py central_key`, never edited here. The private key, even encrypted, is not shown."""

    list_display = ("key_id", "created_at", "retires_at", "key_in_force")
    ordering = ("-created_at",)
    fields = ("key_id", "public_key", "created_at", "retires_at")
    readonly_fields = fields

    @admin.display(description=_("in force"), boolean=True)
    def key_in_force(self, obj: CentralKey) -> bool:
        return obj.retires_at is None or obj.retires_at > datetime.now(UTC)
