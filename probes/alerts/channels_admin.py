"""Notification channels in the admin. The Apprise URL is write-only: typed
in, checked with Apprise and against the address policy
(probes.alerts.addresses), stored encrypted (probes.alerts.secrets), never
shown back, not even in part; only its service is. The list flags a channel
that keeps failing; "Send test notification" tries the selected channels.
Deliveries are listed read-only, their errors scrubbed of the URL when they
were stored (probes.alerts.notify). Registered from probes.admin."""

from __future__ import annotations

import apprise
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from probes.admin_base import WrittenByCodeAdmin
from probes.alerts.addresses import check_url, refusal
from probes.alerts.models import Delivery, NotificationChannel
from probes.alerts.notify import send_test
from probes.alerts.secrets import encrypt_url, service_of


class NotificationChannelForm(forms.ModelForm):
    apprise_url = forms.CharField(
        label=gettext_lazy("Apprise URL"),
        required=False,
        # Never rendered back: the page would carry the secret.
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off", "size": 80}),
        help_text=gettext_lazy(
            "Where to send, as an Apprise URL: slack://…, discord://…, mailtos://…, ntfy://…, json://… "
            "(see Apprise's documentation). Stored encrypted and never shown again; "
            "leave it empty to keep the stored one."
        ),
    )

    class Meta:
        model = NotificationChannel
        fields = ("name", "enabled", "language")

    def clean_apprise_url(self) -> str:
        url = self.cleaned_data["apprise_url"].strip()
        if not url:
            if self.instance.pk is None:
                raise forms.ValidationError(_("A new channel needs its Apprise URL."), code="required")
            return ""
        service = service_of(url)
        if not service:
            raise forms.ValidationError(
                _("This is not an Apprise URL: it starts with the service, as in slack:// or mailtos://."),
                code="invalid",
            )
        # Apprise logs the URL it refuses, secrets and all; its logger writes nowhere (settings.LOGGING).
        if not apprise.Apprise().add(url):
            raise forms.ValidationError(
                _(
                    "Apprise does not understand this %(service)s:// URL: a part of it is missing or has the "
                    "wrong form. Check the service's page in Apprise's documentation."
                ),
                code="invalid",
                params={"service": service},
            )
        # Where the service would connect, checked now; the same check runs again when it sends.
        rule = check_url(url)
        if rule:
            raise forms.ValidationError(capfirst(refusal(rule)), code="internal_address")
        return url

    def save(self, commit: bool = True) -> NotificationChannel:
        url = self.cleaned_data.get("apprise_url")
        if url:
            self.instance.apprise_url = encrypt_url(url)
            self.instance.service = service_of(url)
            # Typed here, the URL no longer comes from that variable: the next `atlas apply` says so in its plan.
            self.instance.url_env = ""
        return super().save(commit=commit)


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    form = NotificationChannelForm
    list_display = (
        "name",
        "service",
        "enabled",
        "health",
        "consecutive_failures",
        "last_failure_at",
        "last_success_at",
    )
    list_filter = ("enabled", "service")
    search_fields = ("name", "service")
    readonly_fields = (
        "service",
        "url_env",
        "health",
        "consecutive_failures",
        "last_success_at",
        "last_failure_at",
        "last_error",
    )
    fieldsets = (
        (None, {"fields": ("name", "apprise_url", "service", "url_env", "enabled", "language")}),
        (
            gettext_lazy("Health"),
            {"fields": ("health", "consecutive_failures", "last_success_at", "last_failure_at", "last_error")},
        ),
    )
    actions = ("send_test_notification",)
    change_form_template = "admin/probes/notificationchannel/change_form.html"

    def get_urls(self):
        # Before the admin's own: its catch-all <object_id>/ would take the URL.
        name = f"{self.opts.app_label}_{self.opts.model_name}_send_test"
        view = self.admin_site.admin_view(require_POST(self.send_test_view))
        return [path("<path:object_id>/send-test/", view, name=name), *super().get_urls()]

    def send_test_view(self, request, object_id: str):
        channel = self.get_object(request, unquote(object_id))
        if channel is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request, channel):
            raise PermissionDenied
        ok, detail = send_test(channel)
        self.message_user(request, detail, messages.SUCCESS if ok else messages.ERROR)
        return HttpResponseRedirect(reverse("admin:probes_notificationchannel_change", args=[channel.pk]))

    def get_form(self, request, obj=None, change=False, **kwargs):
        # The form's own apprise_url (the URL typed in) is no model field: the model's apprise_url is the
        # ciphertext, not editable, and the admin would refuse it among the fieldsets' fields.
        kwargs["fields"] = NotificationChannelForm.Meta.fields
        return super().get_form(request, obj, change=change, **kwargs)

    @admin.display(description=gettext_lazy("health"))
    def health(self, obj: NotificationChannel):
        if obj.failing:
            return format_html('<strong class="channel-failing">{}</strong>', _("failing"))
        if obj.consecutive_failures:
            return _("recent failures")
        return _("ok") if obj.last_success_at else "—"

    @admin.action(description=gettext_lazy("Send test notification"), permissions=["change"])
    def send_test_notification(self, request, queryset) -> None:
        for channel in queryset:
            ok, detail = send_test(channel)
            self.message_user(request, detail, messages.SUCCESS if ok else messages.ERROR)


@admin.register(Delivery)
class DeliveryAdmin(WrittenByCodeAdmin):
    """Each notification of an incident's transition to a channel: written by the evaluator and the
    delivery task only."""

    list_display = ("incident", "transition", "channel", "state", "attempts", "created_at", "sent_at", "last_error")
    list_filter = ("state", "transition", "channel")
    list_select_related = ("incident__rule", "incident__target", "channel")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    fields = ("incident", "transition", "channel", "state", "attempts", "created_at", "sent_at", "last_error")
    readonly_fields = fields
