"""Content-Security-Policy additions that depend on the request, and the
production start-up check for collected static files."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.core.exceptions import DisallowedHost, ImproperlyConfigured
from django.http.request import split_domain_port, validate_host

from probes.proxy import forwarded_scheme


class SiteCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, plus this host's websocket origin in connect-src.

    CSP Level 3 lets 'self' match ws:/wss: on the page's own host, but
    browsers older than that (Safari before 15.4, for one) read 'self' as
    the page's scheme only and would block the live feed, so the exact
    ws(s)://host:port is named as well. It is computed per request from the
    validated Host header, since one deployment may answer to several names.
    """

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        try:
            host = request.get_host()
        except DisallowedHost:
            return parts
        scheme = "wss" if request.is_secure() else "ws"
        update = dict(parts.update or {})
        update["connect-src"] = [*update.get("connect-src", []), f"{scheme}://{host}"]
        parts.update = update
        return parts


def require_collected_static() -> None:
    """In production, static files are served from STATIC_ROOT with
    whitenoise's manifest storage: without `collectstatic` every page that
    names a static file answers 500. Say so at start-up instead."""
    if not settings.LATENCY_PRODUCTION:
        return
    from django.contrib.staticfiles.storage import staticfiles_storage

    manifest = Path(settings.STATIC_ROOT) / getattr(staticfiles_storage, "manifest_name", "staticfiles.json")
    if not manifest.is_file():
        raise ImproperlyConfigured(
            f"LATENCY_PRODUCTION=true but the static files are not collected ({manifest} is missing): run "
            "`python manage.py collectstatic --noinput` (with the same STATIC_ROOT) before starting the server"
        )


# --- the websocket's origin check ---------------------------------------------

DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_key(text: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, default ports filled in; None when it is not one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def allowed_origins(scope) -> set[tuple[str, str, int]]:
    """The page origins that may open a websocket on this request: the
    request's own scheme, host and port (the Host header, when it is one of
    ALLOWED_HOSTS), and CSRF_TRUSTED_ORIGINS."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    origins = {key for key in map(_origin_key, settings.CSRF_TRUSTED_ORIGINS) if key}
    host = headers.get("host", "")
    if not host and scope.get("server"):
        # No Host header (not a browser): the address the connection reached,
        # as Django falls back to SERVER_NAME.
        server_host, server_port = scope["server"][0], scope["server"][1]
        host = f"[{server_host}]:{server_port}" if ":" in str(server_host) else f"{server_host}:{server_port}"
    domain, _port = split_domain_port(host)
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]
    if domain and validate_host(domain, allowed_hosts):
        peer = (scope.get("client") or [None])[0]
        own = "https" if scope.get("scheme") == "wss" else "http"
        scheme = forwarded_scheme(peer, headers, own)
        key = _origin_key(f"{scheme}://{host}")
        if key:
            origins.add(key)
    return origins


class SameOriginValidator:
    """ASGI middleware for websockets: the handshake's Origin must be the
    page's own scheme://host:port (or a CSRF-trusted origin). Browsers send
    cookies with cross-site websocket handshakes and CSRF protection does not
    cover them, so this is what keeps other sites, other ports of this host
    included, from reading the feed with a visitor's session."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        origin = None
        for name, value in scope.get("headers", []):
            if name.lower() == b"origin":
                origin = _origin_key(value.decode("latin-1"))
        if origin is not None and origin in allowed_origins(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
