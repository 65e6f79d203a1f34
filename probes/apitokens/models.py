"""A user's token for the REST API (/api/v1/). Registered with the app from probes.models."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ApiToken(models.Model):
    """Acts as its user, with that user's permissions: `Authorization: Bearer <token>`. Only the token's SHA-256
    is stored (probes.apitokens.tokens), so it is shown once, when made. Revoking keeps the row (when it was
    made, last used and revoked stay readable); deleting it works too."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens", verbose_name=_("user")
    )
    name = models.CharField(
        max_length=100,
        blank=True,
        help_text=_('What it is for, e.g. "deploy pipeline"; the token is not shown again.'),
        verbose_name=_("name"),
    )
    # Unique: every API request looks its token up by this hash (one indexed equality).
    token_hash = models.CharField(
        max_length=64,
        unique=True,
        editable=False,
        help_text=_("SHA-256 of the secret token; the token itself is never stored."),
        verbose_name=_("token hash"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("last used at"))
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("revoked at"))

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.user} · {self.name}" if self.name else str(self.user)

    @property
    def active(self) -> bool:
        return self.revoked_at is None
