"""A status page on a domain of its own (StatusPage.hostname): a request whose Host is a page's domain is answered
by that page's URLs at the root (latency.status_host_urls: the page, feed.atom, badge/<id>.svg,
api/v2/summary.json) and nothing else of the site: no sign-in, no admin, no API on a domain made for readers."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.http.request import split_domain_port

from probes.statuspages.hosts import page_slug_for_host

HOST_URLCONF = "latency.status_host_urls"


class StatusHostMiddleware:
    """After the proxy and security middleware (get_host must see the trusted Host, and an HTTPS redirect comes
    first), before everything that resolves URLs (locale, common's slash redirect)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # get_host also refuses a Host outside ALLOWED_HOSTS (400), as it would further on.
        domain, _port = split_domain_port(request.get_host())
        slug = page_slug_for_host(domain)
        if slug is not None:
            request.urlconf = HOST_URLCONF
            request.status_page_slug = slug  # type: ignore[attr-defined]
        return self.get_response(request)
