"""A model group: the targets that serve one model. Registered with the app from probes.models."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class ModelGroup(models.Model):
    """Targets serving the same model, so their latency can be compared like for like (the leaderboard). A
    target may belong to several groups; a group never changes what is probed."""

    name = models.CharField(_("name"), max_length=100, unique=True, help_text=_("The model, e.g. Llama 3.1 70B."))
    targets = models.ManyToManyField(
        "probes.Target",
        related_name="model_groups",
        blank=True,
        verbose_name=_("targets"),
        help_text=_("The targets that serve this model."),
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("model group")
        verbose_name_plural = _("model groups")

    def __str__(self) -> str:
        return str(self.name)
