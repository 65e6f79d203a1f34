"""Which X-Forwarded-* headers to believe: only those set by a named proxy.

A header is just text a client typed. X-Forwarded-Proto decides whether a
request counts as HTTPS (secure cookies, the HTTPS redirect) and
X-Forwarded-For decides which address a failed login is counted against,
so both are read only when the TCP peer (REMOTE_ADDR, or the ASGI scope's
client for websockets) is one of LATENCY_TRUSTED_PROXIES; from anyone else
they are removed before Django or django-axes look at them.

The ASGI server must not apply its own proxy-header rules on top
(`uvicorn --no-proxy-headers`): uvicorn trusts 127.0.0.1 by default and
would rewrite the peer address before this module could see it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDED_META = ("HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_HOST", "HTTP_FORWARDED")


def parse_proxies(values: Iterable[str], name: str = "LATENCY_TRUSTED_PROXIES") -> tuple[Network, ...]:
    """Addresses or networks (10.0.0.0/8) as ip_network objects; a bad one stops start-up."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip("[]"), strict=False))
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {value!r} is not an IP address or network") from None
    return tuple(networks)


def _address(text: str | None):
    if not text:
        return None
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def is_trusted(peer: str | None) -> bool:
    address = _address(peer)
    return address is not None and any(address in net for net in settings.LATENCY_TRUSTED_PROXY_NETWORKS)


def forwarded_client(peer: str | None, forwarded_for: str | None) -> str | None:
    """The client address: the peer itself unless it is a trusted proxy, else
    the right-most X-Forwarded-For entry that is not one of our proxies (the
    entries to its left were written by the client and prove nothing)."""
    if not is_trusted(peer) or not forwarded_for:
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if _address(hop) is None:
            return peer  # garbage in the chain: count the attempt against the proxy's view, the peer
        if not is_trusted(hop):
            return hop
    return hops[0] if hops else peer


def client_ip(request) -> str | None:
    """django-axes' AXES_CLIENT_IP_CALLABLE: the address failed logins are counted against."""
    meta = request.META
    return forwarded_client(meta.get("REMOTE_ADDR"), meta.get("HTTP_X_FORWARDED_FOR"))


def forwarded_scheme(peer: str | None, headers: dict[str, str], own_scheme: str) -> str:
    """http or https as the browser sees it: X-Forwarded-Proto from a trusted proxy, else our own."""
    if is_trusted(peer):
        proto = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        if proto in ("http", "https"):
            return proto
    return own_scheme


class TrustedProxyMiddleware:
    """First in MIDDLEWARE: drop forwarding headers that no trusted proxy set,
    so SECURE_PROXY_SSL_HEADER and everything after read only a proxy's word.
    Sync and async alike, so the async export views stay async under ASGI."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self.__acall__(request)
        strip_untrusted(request)
        return self.get_response(request)

    async def __acall__(self, request):
        strip_untrusted(request)
        return await self.get_response(request)


def strip_untrusted(request) -> None:
    if not is_trusted(request.META.get("REMOTE_ADDR")):
        for key in FORWARDED_META:
            request.META.pop(key, None)
