"""The browser beacon: `POST /rum/v1/beacon`, one real user's call as static/atlas-rum.js measured it in the page.

Public (no login, no CSRF token: another site's page sends it), and authenticated by the source's browser key
in the body, with the Origin header checked against the source's allowed origins. The key is public by design
(it sits in the page's script tag); what the pair guards is that beacons come from the pages the source named,
and the budgets per client address, per target and per source (probes.realusers.ratelimit, apart from OTLP's).

The body is a form, `application/x-www-form-urlencoded` (what navigator.sendBeacon sends for URLSearchParams),
and `text/plain` holding the same encoding is accepted too (a string handed to sendBeacon). Both are
CORS-safelisted content types, so a browser sends the beacon cross-origin without a preflight: sendBeacon can
neither set a header nor wait for a preflight. A preflight (OPTIONS) is still answered, for pages that post
with fetch() and headers of their own. The fields: latency.beacon_forms.BeaconForm.

Answers: 204 stored; 400 a malformed body (JSON naming the fields); 403 an unknown or disabled key, a missing
Origin, or an origin the source does not allow (no CORS headers, so the page cannot read even that); 413 over
LATENCY_BEACON_MAX_BODY_BYTES; 415 another content type; 429 with Retry-After over the address's, the target's or
the source's beacons per minute.
An allowed origin gets Access-Control-Allow-Origin (echoed, with Vary: Origin) on every answer but 403, never
Access-Control-Allow-Credentials: the beacon needs no cookie, and a page's script gets no answer that depends on
one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from latency.beacon_forms import BeaconForm
from probes.models import IngestSource, Target
from probes.realusers import ratelimit
from probes.realusers.location import client_address, place_for
from probes.realusers.models import BEACON
from probes.realusers.origins import origin_of
from probes.realusers.sources import by_browser_key, tally
from probes.realusers.store import record
from probes.realusers.types import Observed

CONTENT_TYPES = ("application/x-www-form-urlencoded", "text/plain")
# How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours).
PREFLIGHT_MAX_AGE_S = 7200


def _with_cors(response: HttpResponse, origin: str | None) -> HttpResponse:
    # Vary even when no origin is allowed: a cache must not hand one origin's answer to another.
    patch_vary_headers(response, ["Origin"])
    if origin is not None:
        response["Access-Control-Allow-Origin"] = origin
    response["Cache-Control"] = "no-store"
    return response


def _refused(status: int, message: str, origin: str | None = None, **extra) -> HttpResponse:
    return _with_cors(JsonResponse({"error": message, **extra}, status=status), origin)


def _allowed_anywhere(origin: str | None) -> bool:
    """Some enabled source allows this origin: what a preflight, which carries no key, can be told."""
    if origin is None:
        return False
    return IngestSource.objects.filter(enabled=True, allowed_origins__contains=[origin]).exists()


def _read_capped(request: HttpRequest, cap: int) -> bytes | None:
    """The body, or None when it is longer than `cap` (read no further than cap + 1 bytes)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > cap:
        return None
    data = request.read(cap + 1)
    return None if len(data) > cap else data


def _target_of(name: str) -> Target | None:
    if not name:
        return None
    return Target.objects.filter(name=name).only("id", "url", "model").first()


@csrf_exempt
@require_http_methods(["POST", "OPTIONS"])
def beacon(request: HttpRequest) -> HttpResponse:
    origin = origin_of(request.headers.get("Origin", ""))
    if request.method == "OPTIONS":
        return _preflight(origin)
    if origin is None:
        return _refused(403, _("a beacon comes from a web page: the Origin header is missing or not an origin"))
    cors = origin if _allowed_anywhere(origin) else None
    body = _read_capped(request, settings.LATENCY_BEACON_MAX_BODY_BYTES)
    if body is None:
        return _refused(
            413,
            _("the body is larger than %(limit)d bytes") % {"limit": settings.LATENCY_BEACON_MAX_BODY_BYTES},
            cors,
        )
    content_type = request.content_type or ""
    if content_type not in CONTENT_TYPES:
        return _refused(415, _("send the beacon as application/x-www-form-urlencoded or text/plain"), cors)
    try:
        data = QueryDict(body.decode("utf-8"), encoding="utf-8")
    except UnicodeDecodeError:
        return _refused(400, _("the body is not UTF-8"), cors)
    except TooManyFieldsSent:
        # Thousands of empty fields fit under the size cap; Django's own answer would be a logged 400 page.
        return _refused(400, _("malformed beacon"), cors)
    form = BeaconForm(data)
    if not form.is_valid():
        return _refused(400, _("malformed beacon"), cors, fields=form.errors.get_json_data())
    source = by_browser_key(form.cleaned_data["key"])
    if source is None:
        return _refused(403, _("unknown or disabled browser key"))
    if origin not in source.allowed_origins:
        return _refused(403, _("this origin may not send beacons with this key"))
    target = _target_of(form.cleaned_data["target"])
    address = client_address(request)
    retry_after = ratelimit.admit_beacon(source.id, address, target.id if target else None)
    if retry_after is not None:
        response = _refused(429, _("too many beacons; retry later"), origin)
        response["Retry-After"] = str(retry_after)
        return response
    record(source.id, [_observed(form, source, target, address)])
    tally(source.id, calls=1)
    return _with_cors(HttpResponse(status=204), origin)


def _preflight(origin: str | None) -> HttpResponse:
    if not _allowed_anywhere(origin):
        return _with_cors(HttpResponse(status=403), None)
    response = _with_cors(HttpResponse(status=204), origin)
    response["Access-Control-Allow-Methods"] = "POST"
    response["Access-Control-Allow-Headers"] = "content-type"
    response["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE_S)
    return response


def _observed(form: BeaconForm, source: IngestSource, target: Target | None, address: str | None) -> Observed:
    """The call as stored. A named target that exists gives the call its host and model, as a span matched to
    it would have; a name that matches no target is not kept (it names nothing here) and the call is stored
    under "other providers" with no host or model."""
    data = form.cleaned_data
    total = form.total_ms
    # The page's clock is not trusted: the call started its duration before it was received.
    started = datetime.now(UTC) - timedelta(milliseconds=total)
    return Observed(
        kind=BEACON,
        observed_at=started,
        place=place_for({}, address, source),
        host=(urlsplit(target.url).hostname or "") if target else "",
        model=target.model if target else "",
        service=data["label"],
        ttft_ms=form.ttft_ms,
        ttft_from="beacon" if form.ttft_ms is not None else "",
        total_ms=total,
        output_tokens=data["tokens"],
        error_type=data["error"],
        target_id=target.id if target else None,
    )
