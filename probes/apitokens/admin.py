"""API tokens in the admin. The token is shown once, in the answer to the POST that made it, and never again:
the site keeps only its SHA-256 (probes.apitokens.tokens), and neither the list, the page, the history nor a
message carries any part of it. "Revoke" stops a token at once and keeps its row. Registered from probes.admin.

A token acts with its user's permissions, so only a superuser may make one for somebody else: anyone else who
may add tokens makes them for themselves, and sees only their own."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from probes.admin_base import SecretOnceAdmin
from probes.apitokens.models import ApiToken
from probes.apitokens.tokens import hash_token, new_token, revoke


@admin.register(ApiToken)
class ApiTokenAdmin(SecretOnceAdmin):
    list_display = ("user", "name", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    list_select_related = ("user",)
    search_fields = ("name", "user__username")
    readonly_fields = ("created_at", "last_used_at", "revoked_at")
    actions = ("revoke_tokens",)

    def get_queryset(self, request):
        tokens = super().get_queryset(request)
        return tokens if request.user.is_superuser else tokens.filter(user=request.user)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("user", "name")
        return ("user", "name", "created_at", "last_used_at", "revoked_at")

    def get_readonly_fields(self, request, obj=None):
        # Whose token it is never changes: a token moved to another user would act as them.
        return self.readonly_fields if obj is None else ("user", *self.readonly_fields)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = get_user_model()._default_manager.filter(pk=request.user.pk)
            kwargs["initial"] = request.user.pk
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_changeform_initial_data(self, request):
        return {"user": request.user.pk, **super().get_changeform_initial_data(request)}

    def save_model(self, request, obj: ApiToken, form, change: bool) -> None:
        if not change:
            token = new_token()
            obj.token_hash = hash_token(token)
            # Held on the request for response_add only: the answer to this POST is the one place it appears.
            request._api_token = token
        super().save_model(request, obj, form, change)

    def response_add(self, request, obj: ApiToken, post_url_continue=None):
        token = getattr(request, "_api_token", None)
        if token is None:
            return super().response_add(request, obj, post_url_continue)
        title = _("API token for %(user)s added") % {"user": obj.user}
        return self.secret_page(request, obj, "admin/probes/apitoken/token.html", title, token=token)

    @admin.action(description=gettext_lazy("Revoke selected tokens"), permissions=["change"])
    def revoke_tokens(self, request, queryset):
        count = revoke(queryset)
        self.message_user(
            request,
            ngettext("Revoked %(count)d token.", "Revoked %(count)d tokens.", count) % {"count": count},
            messages.SUCCESS,
        )
