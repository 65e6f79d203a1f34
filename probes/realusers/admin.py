"""Ingest sources in the admin. The secret token is shown once, in the answer to the POST that made it (adding a
source, or "Rotate token" on its page), and never again: the site keeps only its SHA-256
(probes.realusers.sources), and neither the list, the page, the history nor a message carries any part of it.
The browser key is public and shown on the source's page. Registered from probes.admin."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from probes.admin_base import SecretOnceAdmin
from probes.realusers.models import IngestSource
from probes.realusers.origins import clean_origins
from probes.realusers.sources import hash_token, new_browser_key, new_token, rotate


class OriginsField(forms.CharField):
    """Origins typed one per line, kept as the model's list, each normalised (probes.realusers.origins)."""

    widget = forms.Textarea(attrs={"rows": 4, "cols": 60})

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return "\n".join(value)
        return value

    def to_python(self, value) -> list[str]:
        return clean_origins((super().to_python(value) or "").splitlines())


class IngestSourceForm(forms.ModelForm):
    allowed_origins = OriginsField(
        label=gettext_lazy("Allowed origins"),
        required=False,
        help_text=gettext_lazy(
            "One per line, as scheme://host or scheme://host:port (no path), e.g. https://app.example.com: the "
            "pages that may send browser beacons with this source's key. Empty: no beacons, OTLP only."
        ),
    )

    class Meta:
        model = IngestSource
        fields = (
            "name",
            "allowed_origins",
            "enabled",
            "default_country",
            "default_city",
            "default_latitude",
            "default_longitude",
        )
        help_texts = {
            "default_country": gettext_lazy("ISO 3166-1 alpha-2 code, e.g. NG. Optional."),
            "default_city": gettext_lazy("Optional."),
        }

    def clean_default_country(self) -> str:
        country = self.cleaned_data["default_country"].strip().upper()
        if country and not (len(country) == 2 and country.isascii() and country.isalpha()):
            raise ValidationError(_("A country is its two-letter ISO code, such as NG or GB."), code="invalid")
        return country

    def clean(self):
        data = super().clean()
        lat, lon = data.get("default_latitude"), data.get("default_longitude")
        if (
            (lat is None) != (lon is None)
            and "default_latitude" not in self.errors
            and "default_longitude" not in self.errors
        ):
            raise ValidationError(_("Give both the default latitude and longitude, or neither."), code="incomplete")
        return data


@admin.register(IngestSource)
class IngestSourceAdmin(SecretOnceAdmin):
    form = IngestSourceForm
    list_display = ("name", "enabled", "origins", "calls_stored", "spans_ignored", "rejected", "last_seen_at",
                    "created_at", "rotated_at")  # fmt: skip
    list_filter = ("enabled",)
    search_fields = ("name",)
    readonly_fields = ("browser_key", "created_at", "rotated_at", "last_seen_at", "calls_stored", "spans_ignored",
                       "rejected", "last_rejection")  # fmt: skip
    change_form_template = "admin/probes/ingestsource/change_form.html"

    def get_fieldsets(self, request, obj=None):
        where = (
            gettext_lazy("Where its users are when nothing else says"),
            {"fields": ("default_country", "default_city", "default_latitude", "default_longitude")},
        )
        if obj is None:
            return ((None, {"fields": ("name", "allowed_origins", "enabled")}), where)
        return (
            (None, {"fields": ("name", "browser_key", "allowed_origins", "enabled")}),
            where,
            (None, {"fields": ("created_at", "rotated_at", "last_seen_at")}),
            (
                gettext_lazy("What it sent"),
                {"fields": ("calls_stored", "spans_ignored", "rejected", "last_rejection")},
            ),
        )

    @admin.display(description=gettext_lazy("allowed origins"))
    def origins(self, obj: IngestSource) -> str:
        return ", ".join(obj.allowed_origins) or "—"

    def get_urls(self):
        # Before the admin's own: its catch-all <object_id>/ would take the URL.
        name = f"{self.opts.app_label}_{self.opts.model_name}_rotate"
        view = self.admin_site.admin_view(require_POST(self.rotate_view))
        return [path("<path:object_id>/rotate/", view, name=name), *super().get_urls()]

    def save_model(self, request, obj: IngestSource, form, change: bool) -> None:
        if not change:
            token = new_token()
            obj.token_hash = hash_token(token)
            obj.browser_key = new_browser_key()
            # Held on the request for response_add only: the answer to this POST is the one place it appears.
            request._ingest_token = token
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj: IngestSource, post_url_continue=None):
        token = getattr(request, "_ingest_token", None)
        if token is None:
            return super().response_add(request, obj, post_url_continue)
        return self._token_page(request, obj, token, added=True)

    def rotate_view(self, request, object_id: str):
        source = self.get_object(request, unquote(object_id))
        if source is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_change_permission(request, source):
            raise PermissionDenied
        token = rotate(source)
        # The history says that it was rotated, never what to.
        self.log_change(request, source, _("Rotated the token."))
        return self._token_page(request, source, token, added=False)

    def _token_page(self, request, source: IngestSource, token: str, *, added: bool):
        title = (_("Ingest source %(name)s added") if added else _("New token for %(name)s")) % {"name": source.name}
        return self.secret_page(
            request, source, "admin/probes/ingestsource/token.html", title, added=added, token=token
        )
