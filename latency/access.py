"""Who may read what: the one place the dashboard's reading rules live.

Two rules, each written once here and enforced through every door:
- reading the dashboard (pages, the JSON API, the live websocket): anyone
  when LATENCY_PUBLIC_DASHBOARD is on, else signed-in users;
- reading raw measurements (the CSV exports, and provider error texts on the
  pages): signed-in users with probes.view_measurement, public mode or not.

Region workers themselves (host names, worker names, instance ids,
releases, engines, clocks, key ids: what fingerprints a host and says what
it runs) are for signed-in users with probes.view_worker, public mode or
not, as on /api/v1/workers/; everyone who may read the dashboard sees each
region's status and when it was last heard (see may_see_workers).

Incidents (their pages, the markers on the dashboard's pages, the header's
count) are for signed-in users only, public mode or not: see may_read_incidents.
Acting on one (acknowledging, silencing a target) needs its permission.

Objectives' pages, SLA reports and their CSV are for signed-in users too (may_read_objectives): they show the
objectives' incidents and silences, and what a team promised is its own business.

Status pages (/status/<slug>/) are what a team chooses to publish: a public one is for anyone; any other is for
signed-in users (as the dashboard when it is not public), and answers anyone else 404, not a login page, so that
its slug is not confirmed to exist (may_read_status_page, status_page).

Provider error texts can carry request ids, account names, quota details or
a fragment of the prompt, so they follow the same rule as the raw rows in
the CSV export. Each door answers a refusal in its own idiom (a login
redirect for a page, a JSON 403 for a script, a close code for a socket),
but asks the same question.
"""

from __future__ import annotations

import hashlib
import hmac
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

MEASUREMENT_PERMISSION = "probes.view_measurement"
WORKER_PERMISSION = "probes.view_worker"
# Free text written by a provider or the network stack: hidden together.
ERROR_FIELDS = ("error", "error_type")


def _signed_in(user) -> bool:
    # The websocket scope may hold no user at all (no session middleware ran).
    return user is not None and user.is_authenticated


def can_read_dashboard(user) -> bool:
    # Read per request, not at import: the setting is a deployment switch and
    # tests flip it with override_settings.
    return settings.LATENCY_PUBLIC_DASHBOARD or _signed_in(user)


def may_read_measurements(user) -> bool:
    """May read raw measurements: the exports and provider error texts."""
    return _signed_in(user) and user.has_perm(MEASUREMENT_PERMISSION)


def may_see_workers(user) -> bool:
    """May see the region workers themselves, not only their regions' status: a public dashboard must not
    hand anyone the host names, releases and key ids of the fleet (where to aim, and what version to aim at)."""
    return _signed_in(user) and user.has_perm(WORKER_PERMISSION)


def may_read_incidents(user) -> bool:
    """Incidents are not public data, even on a public dashboard: an
    incident names the rule's thresholds, who acknowledged it, the silences
    (maintenance windows) of a target and the channels told, which is an
    operator's business; a public dashboard publishes measurements only."""
    return _signed_in(user)


def may_read_objectives(user) -> bool:
    """Objectives, their pages and SLA reports (and the CSV): signed-in users, public mode or not."""
    return may_read_incidents(user)


def may_read_status_page(user, public: bool) -> bool:
    """A public status page: anyone; another: signed-in users."""
    return public or _signed_in(user)


# Error texts are raw measurement data: the same rule, by name where it is used.
may_see_errors = may_read_measurements


async def amay_read_measurements(user) -> bool:
    """may_read_measurements() from async code (the permission check reads the database)."""
    return _signed_in(user) and await user.ahas_perm(MEASUREMENT_PERMISSION)


def visible_rows(rows: list[dict], user) -> list[dict]:
    """Measurement rows as this user may see them: without error texts unless may_see_errors."""
    if may_see_errors(user):
        return rows
    return [{**row, **dict.fromkeys(ERROR_FIELDS)} for row in rows]


# The doors ---------------------------------------------------------------------


def dashboard_page(view):
    """Pages: sign in first unless the dashboard is public."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not can_read_dashboard(request.user):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return require_safe(wrapper)


def incident_page(view):
    """Incident pages: sign in first, public mode or not (may_read_incidents)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not may_read_incidents(request.user):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return require_safe(wrapper)


def objective_page(view):
    """Objective pages and SLA reports: sign in first, public mode or not (may_read_objectives)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not may_read_objectives(request.user):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return require_safe(wrapper)


def objective_export(view):
    """Async: an SLA report's CSV, for whoever may read its page (may_read_objectives)."""

    @wraps(view)
    async def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        user = await request.auser()
        if not may_read_objectives(user):
            return redirect_to_login(request.get_full_path())
        return await view(request, *args, **kwargs)

    return require_safe(wrapper)


def incident_action(permission: str):
    """A POST that acts on incidents or silences: sign in first, then
    `permission`, or a 403 saying it is missing (CSRF is checked by the
    middleware before this runs)."""

    def decorate(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not may_read_incidents(request.user):
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(permission):
                return HttpResponseForbidden(
                    _("This needs the permission %(permission)s.") % {"permission": permission},
                    content_type="text/plain",
                )
            return view(request, *args, **kwargs)

        return require_POST(wrapper)

    return decorate


def login_required_json() -> JsonResponse:
    response = JsonResponse({"error": _("login required")}, status=403)
    # An answer that depends on the session: never cached.
    response["Cache-Control"] = "no-store"
    return response


def dashboard_api(view):
    """The JSON API: the pages' rule, answered in JSON, since a script
    cannot follow a redirect to a login form."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if not can_read_dashboard(request.user):
            return login_required_json()
        return view(request, *args, **kwargs)

    return require_safe(wrapper)


def measurement_export(view):
    """Async export views: sign in first (public mode or not), then the
    permission to view measurements, or a 403 saying it is missing."""

    @wraps(view)
    async def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        user = await request.auser()
        if not _signed_in(user):
            return redirect_to_login(request.get_full_path())
        if not await amay_read_measurements(user):
            return HttpResponseForbidden(
                _("Exports need the permission to view measurements."), content_type="text/plain"
            )
        return await view(request, *args, **kwargs)

    return require_safe(wrapper)


def metrics_token_ok(authorization: str) -> bool:
    """An `Authorization: Bearer <token>` header carrying LATENCY_METRICS_TOKEN. Digests are compared, in constant
    time: the answer's timing says nothing about the token, not even its length. Off when the setting is unset."""
    expected = settings.LATENCY_METRICS_TOKEN_SHA256
    scheme, _sep, token = authorization.partition(" ")
    if not expected or scheme.lower() != "bearer" or not token.strip():
        return False
    return hmac.compare_digest(hashlib.sha256(token.strip().encode()).hexdigest(), expected)


def metrics_reader(view):
    """/metrics: Prometheus' bearer token (metrics_token_ok) or a signed-in session, public mode or not (it
    names regions' workers and health, an operator's business); else 401 with a WWW-Authenticate challenge,
    the answer a scraper understands."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not (metrics_token_ok(request.headers.get("Authorization", "")) or _signed_in(request.user)):
            response = HttpResponse(
                _("Send the metrics token (Authorization: Bearer <token>) or sign in."),
                status=401,
                content_type="text/plain; charset=utf-8",
            )
            response["WWW-Authenticate"] = 'Bearer realm="latency-atlas metrics"'
            response["Cache-Control"] = "no-store"
            return response
        return view(request, *args, **kwargs)

    return require_safe(wrapper)
