"""StatusPage: a page of some targets' status, latency by region, daily uptime and incidents (/status/<slug>/).
Registered with the app from probes.models."""

from __future__ import annotations

import re
from collections.abc import Collection
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.http.request import validate_host
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# A DNS name of letters, digits and hyphens, at least two labels, no port: what a Host header names.
HOSTNAME = re.compile(r"^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$")


# An address's last label is digits; a domain's top-level label never is.
NUMERIC_TLD = re.compile(r"\.[0-9]+$")


def is_hostname(value: str) -> bool:
    """A name a page could be served at: not an address, not `localhost`."""
    return bool(HOSTNAME.match(value)) and not NUMERIC_TLD.search(value)


def validate_hostname(value: str) -> None:
    if value and not is_hostname(value):
        raise ValidationError(
            _("Enter a domain name such as status.example.com: lower-case letters, digits, hyphens and dots, no port."),
            code="invalid",
        )


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
    hostname = models.CharField(
        _("hostname"),
        max_length=253,
        blank=True,
        default="",
        validators=[validate_hostname],
        help_text=_(
            "A domain of its own (status.example.com), pointed at this site and listed in ALLOWED_HOSTS: "
            "requests for it are answered with this page at its root. Empty: /status/<slug>/ only."
        ),
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
        constraints = [
            # One page per domain; the Host lookup (probes.statuspages.hosts) reads the rows with one.
            models.UniqueConstraint(
                fields=["hostname"], condition=~models.Q(hostname=""), name="statuspage_hostname_unique"
            )
        ]

    def __str__(self) -> str:
        return str(self.title)

    def clean_fields(self, exclude: Collection[str] | None = None) -> None:
        # As people type it (Status.Example.com.): one spelling, the one a Host header is compared with.
        self.hostname = (self.hostname or "").strip().lower().rstrip(".")
        super().clean_fields(exclude)

    def clean(self) -> None:
        # No domain name: the field's validator has said so under hostname (clean_fields); said again here, the
        # message would be a second copy under no field.
        if not self.hostname or not is_hostname(self.hostname):
            return
        if not self.public:
            # Signing in happens at the site's own address; its session is not sent to another domain.
            raise ValidationError(
                {"hostname": gettext("Only a public page can have a domain of its own: readers there cannot sign in.")}
            )
        # Django answers 400 to a Host not in ALLOWED_HOSTS before any page is looked up: say so now.
        if not validate_host(self.hostname, settings.ALLOWED_HOSTS):
            raise ValidationError(
                {
                    "hostname": gettext(
                        "%(host)s is not in ALLOWED_HOSTS: add it there (the ALLOWED_HOSTS setting) and restart "
                        "the site, or requests for it are refused."
                    )
                    % {"host": self.hostname}
                }
            )
        site = urlsplit(settings.LATENCY_SITE_URL).hostname if settings.LATENCY_SITE_URL else None
        if site and site.lower() == self.hostname:
            raise ValidationError({"hostname": gettext("This is the site's own address (LATENCY_SITE_URL).")})
        # The constraint (statuspage_hostname_unique) would say so too, but under no field: a form, the API and
        # `atlas apply` name the field.
        if StatusPage.objects.filter(hostname=self.hostname).exclude(pk=self.pk).exists():
            raise ValidationError({"hostname": gettext("Another status page already has this hostname.")})
