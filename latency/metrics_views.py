"""GET /metrics for Prometheus: thin; the exposition is probes.prometheus, who may read it latency.access."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from latency.access import metrics_reader
from probes.prometheus import render


@metrics_reader
def metrics(request: HttpRequest) -> HttpResponse:
    body, content_type = render(request.headers.get("Accept", ""))
    response = HttpResponse(body, content_type=content_type)
    # Per-scrape figures behind a credential: never stored by a cache on the way.
    response["Cache-Control"] = "no-store"
    response["Vary"] = "Accept, Authorization, Cookie"
    return response
