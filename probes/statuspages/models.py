"""StatusPage: a page of some targets' status, latency by region, daily uptime and incidents (/status/<slug>/).
Registered with the app from probes.models."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class StatusPage(models.Model):
    """What a page shows: its targets (named, or those of model groups), in its regions (every region when none
    is named), their status and daily uptime from its objectives (from open incidents for a target none of them
    covers). Public pages are read without signing in; the others by signed-in users only, and answer 404, not
    403, to anyone else, so a private page's slug is not confirmed to exist."""

    slug = models.SlugField(_("slug"), max_length=60, unique=True, help_text=_("The page's address: /status/<slug>/."))
    title = models.CharField(_("title"), max_length=120)
    description = models.TextField(_("description"), blank=True, default="", help_text=_("Shown under the title."))
    targets = models.ManyToManyField(
        "probes.Target", related_name="status_pages", blank=True, verbose_name=_("targets")
    )
    model_groups = models.ManyToManyField(
        "probes.ModelGroup",
        related_name="status_pages",
        blank=True,
        verbose_name=_("model groups"),
        help_text=_("Every target of these groups is shown too."),
    )
    regions = models.ManyToManyField(
        "probes.Region",
        related_name="status_pages",
        blank=True,
        verbose_name=_("regions"),
        help_text=_("The regions shown; none: every region."),
    )
    slos = models.ManyToManyField(
        "probes.ServiceLevelObjective",
        related_name="status_pages",
        blank=True,
        verbose_name=_("objectives"),
        help_text=_("The objectives a target's status and daily uptime come from."),
    )
    public = models.BooleanField(_("public"), default=False, help_text=_("Anyone may read it without signing in."))
    language = models.CharField(
        _("language"),
        max_length=10,
        choices=settings.LANGUAGES,
        default=settings.LANGUAGE_CODE,
        help_text=_("The page's language, unless the reader chose another."),
    )
    show_latency = models.BooleanField(
        _("show latency"), default=True, help_text=_("Show TTFT p50 and p95 by region over the last 24 hours.")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["title"]
        verbose_name = _("status page")
        verbose_name_plural = _("status pages")

    def __str__(self) -> str:
        return str(self.title)
