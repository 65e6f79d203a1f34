"""The URLs of a status page served on its own domain (latency.status_hosts): the page's own, at the root. The
page's links are relative (templates/status/page.html), so one rendering serves both addresses."""

from django.http import HttpResponseNotFound
from django.template.loader import render_to_string
from django.urls import path

from latency import status_views

urlpatterns = [
    path("", status_views.on_own_domain(status_views.status_page), name="status-page"),
    path("feed.atom", status_views.on_own_domain(status_views.status_feed), name="status-feed"),
    path("badge/<int:target_id>.svg", status_views.on_own_domain(status_views.badge), name="status-badge"),
    path("api/v2/summary.json", status_views.on_own_domain(status_views.summary_json), name="status-summary"),
]


def not_found(request, exception=None):
    # The site's 404 page links into the site, which this domain does not serve.
    return HttpResponseNotFound(render_to_string("status/not_found.html", request=request))


handler404 = not_found
