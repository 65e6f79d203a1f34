"""Status pages: /status/<slug>/ and its Atom feed, what a team publishes of its targets (probes.readings.status
reads it all; only laid out here). Who may read one is latency.access's rule (may_read_status_page); anyone else
gets 404."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.feedgenerator import Atom1Feed
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_safe

from latency.access import may_read_status_page
from probes.models import StatusPage
from probes.readings import status

STATUS_LABELS = {
    "operational": gettext_lazy("Operational"),
    "degraded": gettext_lazy("Degraded performance"),
    "outage": gettext_lazy("Outage"),
}
OVERALL_LABELS = {
    "operational": gettext_lazy("All systems operational"),
    "degraded": gettext_lazy("Some systems degraded"),
    "outage": gettext_lazy("Outage in progress"),
}


def readable_page(request: HttpRequest, slug: str) -> StatusPage:
    page = StatusPage.objects.filter(slug=slug).first()
    if page is None or not may_read_status_page(request.user, page.public):
        raise Http404(_("No such status page."))
    # The page's language, unless the reader chose one (the language switch's cookie).
    if settings.LANGUAGE_COOKIE_NAME not in request.COOKIES:
        translation.activate(page.language)
        request.LANGUAGE_CODE = translation.get_language()
    return page


def uptime_view(day: status.UptimeDay) -> dict:
    state = "none" if day.met is None else "met" if day.met else "missed"
    return {"date": day.day, "state": state, "percent": None if day.attainment is None else day.attainment * 100.0}


@require_safe
def status_page(request: HttpRequest, slug: str) -> HttpResponse:
    page = readable_page(request, slug)
    reading = status.status_reading(page.id, timezone.now())
    if reading is None:  # deleted since
        raise Http404(_("No such status page."))
    targets = [
        {
            "target": t,
            "label": STATUS_LABELS[t.status],
            "uptime": [uptime_view(d) for d in t.uptime],
            "uptime_percent": None if t.uptime_ratio is None else t.uptime_ratio * 100.0,
        }
        for t in reading.targets
    ]
    context = {
        "reading": reading,
        "overall": OVERALL_LABELS[reading.status],
        "targets": targets,
        "days": status.UPTIME_DAYS,
    }
    return render(request, "status/page.html", context)


class StatusFeed(Feed):
    """/status/<slug>/feed.atom: Atom 1.0, an entry per public update of the page's incidents, newest first, each
    linking to its update on the page. Readable by whoever may read the page (readable_page)."""

    feed_type = Atom1Feed

    def get_object(self, request: HttpRequest, slug: str) -> StatusPage:
        return readable_page(request, slug)

    def title(self, page: StatusPage) -> str:
        return page.title

    def subtitle(self, page: StatusPage) -> str:
        return page.description or _("Incident updates")

    def link(self, page: StatusPage) -> str:
        return reverse("status-page", args=[page.slug])

    def items(self, page: StatusPage) -> list[status.FeedEntry]:
        return status.feed_entries(page.id)

    def item_title(self, entry: status.FeedEntry) -> str:
        return f"{entry.target_name}: {capfirst(str(entry.update.status_label))}"

    def item_description(self, entry: status.FeedEntry) -> str:
        return entry.update.text

    def item_link(self, entry: status.FeedEntry) -> str:
        # Each update its own anchor on the page: the link is also the entry's id (unique, permanent).
        return reverse("status-page", args=[entry.page_slug]) + f"#update-{entry.update.id}"

    def item_pubdate(self, entry: status.FeedEntry) -> datetime:
        return entry.update.posted_at

    def item_updateddate(self, entry: status.FeedEntry) -> datetime:
        return entry.update.posted_at


status_feed = require_safe(StatusFeed())
