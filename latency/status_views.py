"""Status pages: /status/<slug>/, its badges, Atom feed and summary.json, what a team publishes of its targets
(probes.readings.status reads it all; only laid out here), each read from the status cache (probes.statuspages.cache:
a page is read at most once per LATENCY_STATUS_CACHE_S). Who may read one is latency.access's rule
(may_read_status_page); anyone else gets 404."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import wraps

from django import forms
from django.conf import settings
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.cache import get_conditional_response
from django.utils.feedgenerator import Atom1Feed
from django.utils.http import quote_etag
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_safe

from latency import status_map, statuspage_json
from latency.access import may_read_status_page
from probes.models import Region, StatusPage
from probes.readings import status
from probes.statuspages import cache as status_cache

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


@dataclass(frozen=True)
class PageRef:
    """What a request needs of a page before its reading: who may read it, in which language, what it shows."""

    id: int
    slug: str
    title: str
    description: str
    public: bool
    language: str
    created_at: datetime
    target_ids: tuple[int, ...]
    region_ids: tuple[int, ...]


def _page_ref(slug: str) -> PageRef | None:
    page = StatusPage.objects.filter(slug=slug).first()
    if page is None:
        return None
    target_ids, region_ids = status.page_scope(page.id)
    return PageRef(
        page.id,
        page.slug,
        page.title,
        page.description,
        page.public,
        page.language,
        page.created_at,
        tuple(target_ids),
        tuple(region_ids),
    )


def readable_page(request: HttpRequest, slug: str) -> PageRef:
    page = status_cache.cached(status_cache.page_key(slug), lambda: _page_ref(slug))
    if page is None or not may_read_status_page(request.user, page.public):
        raise Http404(_("No such status page."))
    # The page's language, unless the reader chose one (the language switch's cookie).
    if settings.LANGUAGE_COOKIE_NAME not in request.COOKIES:
        translation.activate(page.language)
        request.LANGUAGE_CODE = translation.get_language()
    return page


def _reading(page: PageRef) -> status.StatusReading:
    reading = status_cache.cached(
        status_cache.reading_key(page.slug), lambda: status.status_reading(page.id, timezone.now())
    )
    if reading is None:  # deleted since
        raise Http404(_("No such status page."))
    return reading


def uptime_view(day: status.UptimeDay) -> dict:
    state = "none" if day.met is None else "met" if day.met else "missed"
    return {"date": day.day, "state": state, "percent": None if day.attainment is None else day.attainment * 100.0}


@require_safe
def status_page(request: HttpRequest, slug: str) -> HttpResponse:
    page = readable_page(request, slug)
    # The same for every reader in one language (nothing on it is the reader's own): rendered once a period.
    language = translation.get_language()
    html = status_cache.cached(status_cache.reading_key(page.slug, "html", language), lambda: _render_page(page))
    return HttpResponse(html)


def _render_page(page: PageRef) -> str:
    reading = _reading(page)
    targets = [
        {
            "target": t,
            "label": STATUS_LABELS[t.status],
            "uptime": [uptime_view(d) for d in t.uptime],
            "uptime_percent": None if t.uptime_ratio is None else t.uptime_ratio * 100.0,
            "map": status_map.dots(t.latency),
        }
        for t in reading.targets
    ]
    mapped = reading.show_latency and any(t["map"] for t in targets)
    context = {
        "land": status_map.land_path() if mapped else "",
        "map_box": f"0 0 {status_map.WIDTH} {status_map.HEIGHT}",
        "legend": status_map.legend(),
        "reading": reading,
        "overall": OVERALL_LABELS[reading.status],
        "targets": targets,
        "days": status.UPTIME_DAYS,
    }
    return render_to_string("status/page.html", context)


def page_path(request: HttpRequest, slug: str) -> str:
    """The page's path as this request reaches it: the root of its own domain, or /status/<slug>/."""
    if getattr(request, "status_page_slug", None) == slug:
        return "/"
    return reverse("status-page", args=[slug], urlconf=settings.ROOT_URLCONF)


def on_own_domain(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The view for the page whose domain the request reached (latency.status_hosts), at that domain's root."""

    @wraps(view)
    def served(request: HttpRequest, **kwargs) -> HttpResponse:
        return view(request, slug=request.status_page_slug, **kwargs)  # type: ignore[attr-defined]

    return served


@dataclass(frozen=True)
class FeedPage:
    page: PageRef
    path: str


@dataclass(frozen=True)
class FeedItem:
    entry: status.FeedEntry
    link: str


class StatusFeed(Feed):
    """/status/<slug>/feed.atom: Atom 1.0, an entry per public update of the page's incidents, newest first, each
    linking to its update on the page. Readable by whoever may read the page (readable_page)."""

    feed_type = Atom1Feed

    def get_object(self, request: HttpRequest, slug: str) -> FeedPage:
        return FeedPage(readable_page(request, slug), page_path(request, slug))

    def title(self, obj: FeedPage) -> str:
        return obj.page.title

    def subtitle(self, obj: FeedPage) -> str:
        return obj.page.description or _("Incident updates")

    def link(self, obj: FeedPage) -> str:
        return obj.path

    def items(self, obj: FeedPage) -> list[FeedItem]:
        page = obj.page
        entries = status_cache.cached(status_cache.reading_key(page.slug, "feed"), lambda: status.feed_entries(page.id))
        # Each update its own anchor on the page: the link is also the entry's id (unique, permanent).
        return [FeedItem(entry, f"{obj.path}#update-{entry.update.id}") for entry in entries]

    def item_title(self, item: FeedItem) -> str:
        return f"{item.entry.target_name}: {capfirst(str(item.entry.update.status_label))}"

    def item_description(self, item: FeedItem) -> str:
        return item.entry.update.text

    def item_link(self, item: FeedItem) -> str:
        return item.link

    def item_pubdate(self, item: FeedItem) -> datetime:
        return item.entry.update.posted_at

    def item_updateddate(self, item: FeedItem) -> datetime:
        return item.entry.update.posted_at


status_feed = require_safe(StatusFeed())


def _regions(page: PageRef) -> dict[str, int]:
    """The page's regions by slug (cached with the page's reading's period)."""

    def read() -> dict[str, int]:
        return dict(Region.objects.filter(id__in=page.region_ids).values_list("slug", "id"))

    return status_cache.cached(status_cache.reading_key(page.slug, "regions"), read)


class BadgeForm(forms.Form):
    """A badge's query: ?metric=status|uptime|ttft_p95&region=SLUG&window=24h|7d|30d."""

    metric = forms.ChoiceField(choices=[(m, m) for m in status.BADGE_METRICS], required=False)
    region = forms.SlugField(required=False)
    window = forms.ChoiceField(choices=[(w, w) for w in status.BADGE_WINDOWS], required=False)

    def __init__(self, data, *, regions: dict[str, int]) -> None:
        super().__init__(data)
        self.regions = regions

    def clean_metric(self) -> str:
        return self.cleaned_data["metric"] or "status"

    def clean_window(self) -> str:
        return self.cleaned_data["window"] or "24h"

    def clean_region(self) -> int | None:
        slug = self.cleaned_data["region"]
        if not slug:
            return None
        region_id = self.regions.get(slug)
        if region_id is None:
            raise forms.ValidationError(_("This page shows no region %(slug)s.") % {"slug": slug})
        return region_id


# The value's box: a status's colour, blue for a figure, grey for none.
BADGE_COLOURS = {
    "operational": "#137333",
    "degraded": "#8a5a00",
    "outage": "#b42318",
    "figure": "#0a58ca",
    None: "#5b6678",
}
# Verdana 11 px, as shields.io draws: an average advance per character, enough to size the two boxes.
CHAR_PX = 7
PAD_PX = 10


def _badge_text(badge: status.BadgeReading, window: str) -> tuple[str, str, str | None]:
    """(label, value, the key of its colour in BADGE_COLOURS)."""
    where = f" {badge.region_name}" if badge.region_name else ""
    if badge.metric == "status":
        value = str(STATUS_LABELS[badge.status]).lower() if badge.status else _("no data")
        return _("status") + where, value, badge.status
    if badge.metric == "uptime":
        value = "–" if badge.ratio is None else f"{badge.ratio * 100:.2f} %"
        return (
            _("uptime %(window)s") % {"window": window} + where,
            value,
            None if badge.ratio is None else "operational",
        )
    value = "–" if badge.ms is None else f"{badge.ms:.0f} ms"
    label = _("TTFT p95 %(window)s") % {"window": window} + (where or " " + _("slowest region"))
    return label, value, None if badge.ms is None else "operational"


@require_safe
def badge(request: HttpRequest, slug: str, target_id: int) -> HttpResponse:
    page = readable_page(request, slug)
    if target_id not in page.target_ids:
        raise Http404(_("This page shows no such target."))
    form = BadgeForm(request.GET, regions=_regions(page))
    if not form.is_valid():
        name, errors = next(iter(form.errors.items()))
        return HttpResponse(f"{name}: {errors[0]}", status=400, content_type="text/plain; charset=utf-8")
    data = form.cleaned_data
    if data["metric"] == "status" and data["region"] is None:
        # The page's own reading (cached): the status a badge shows is the page's.
        found = next((t for t in _reading(page).targets if t.target_id == target_id), None)
        reading = status.BadgeReading("status", found.status if found else None, None, None, "")
    else:
        reading = status_cache.cached(
            status_cache.reading_key(page.slug, "badge", target_id, data["metric"], data["region"], data["window"]),
            lambda: status.badge_reading(page.id, target_id, data["metric"], data["region"], data["window"]),
        )
    label, value, state = _badge_text(reading, data["window"])
    left, right = len(label) * CHAR_PX + PAD_PX, len(value) * CHAR_PX + PAD_PX
    svg = render_to_string(
        "status/badge.svg",
        {
            "label": label,
            "value": value,
            "colour": BADGE_COLOURS[state],
            "left": left,
            "right": right,
            "width": left + right,
            "label_x": left / 2,
            "value_x": left + right / 2,
        },
    )
    etag = quote_etag(hashlib.sha256(svg.encode()).hexdigest()[:32])
    not_modified = get_conditional_response(request, etag=etag)
    response = not_modified or HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["ETag"] = etag
    response["Cache-Control"] = f"max-age={BADGE_MAX_AGE_S}"
    return response


BADGE_MAX_AGE_S = 60


@require_safe
def summary_json(request: HttpRequest, slug: str) -> JsonResponse:
    page = readable_page(request, slug)
    reading = _reading(page)
    page_url = request.build_absolute_uri(page_path(request, page.slug))
    return JsonResponse(statuspage_json.summary(reading, page_url, page.created_at))
