"""Status pages: /status/<slug>/, what a team publishes of its targets (probes.readings.status reads it all; only
laid out here). Who may read one is latency.access's rule (may_read_status_page); anyone else gets 404."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone, translation
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
