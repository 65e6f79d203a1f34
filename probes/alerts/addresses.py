"""Where a notification may go: the address policy of notification channels (issue 45).

A channel's Apprise URL names a host the site connects to, so without a policy
anyone who may edit channels could make the site post to its own internal
network (json://169.254.169.254/... reaches the cloud's metadata service,
json://127.0.0.1:6379 the Redis next door). Unless
settings.LATENCY_NOTIFY_ALLOW_PRIVATE, every address a channel leads to must be
public: not loopback, link-local, private (RFC 1918, fc00::/7), unspecified,
multicast, reserved or otherwise not globally routable, nor any of these
embedded in IPv6 (IPv4-mapped, 6to4, NAT64), nor a local socket.

The check sits where the connection is made, not in a parse of the URL: each
of Apprise's hundred services builds its own destinations (slack:// posts to
hooks.slack.com and its "host" is a token; mailto:// may name its relay in a
query), and only the connection shows where it really goes. While `guarded()`
is active in a context, socket.getaddrinfo resolves names through the policy
(and through settings.LATENCY_NOTIFY_DNS_SERVERS when set) and refuses any name
with an internal address, returning only addresses it checked, so the socket
connects to what was checked; socket.connect, connect_ex and sendto check the
address once more right before the packet leaves. A name that resolved to a
public address when the channel was saved and to 127.0.0.1 when a notification
is sent (DNS rebinding) is refused at send time. The guard is a ContextVar,
which Apprise copies into the worker threads that send with a deadline; other
threads and processes of the site are not affected.

Saving a channel runs Apprise once in probe mode: every connection is refused
after its address is checked, so nothing is sent and the form learns the first
address the service would reach. A name that does not resolve then is accepted:
the check at send time still applies.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import apprise
import dns.exception
import dns.nameserver
import dns.resolver
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# The rule an address breaks, with what a person reads about it.
RULES = {
    "loopback": gettext_lazy("a loopback address (127.0.0.0/8, ::1)"),
    "link-local": gettext_lazy("a link-local address (169.254.0.0/16, fe80::/10)"),
    "private": gettext_lazy("a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7)"),
    "unspecified": gettext_lazy("the unspecified address (0.0.0.0, ::)"),
    "multicast": gettext_lazy("a multicast address"),
    "reserved": gettext_lazy("a reserved address"),
    "internal": gettext_lazy("an address that is not publicly routable"),
    "local-socket": gettext_lazy("a local socket"),
}
_PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Seconds: one name's lookup at the servers of LATENCY_NOTIFY_DNS_SERVERS, and the probe of a URL being saved.
DNS_LIFETIME_S = 5.0
PROBE_TIMEOUT_S = 20


def rule_of(address: IPAddress) -> str:
    """The rule `address` breaks, "" when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        # The IPv4 address inside decides: ::ffff:127.0.0.1 is loopback, 2002:a9fe:a9fe:: is link-local.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return rule_of(embedded)
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if any(address in network for network in _PRIVATE):
        return "private"
    if address.is_reserved:
        return "reserved"
    if not address.is_global:
        return "internal"
    return ""


def refusal(rule: str) -> str:
    """What a refused channel or notification says: the rule and the setting, never the URL or the address."""
    return _(
        "refused: the channel leads to %(rule)s, and notifications go only to public addresses unless "
        "LATENCY_NOTIFY_ALLOW_PRIVATE=true"
    ) % {"rule": RULES[rule]}


class Refused(OSError):
    """A connection the policy refused. An OSError, so that the HTTP and SMTP clients inside Apprise fail
    the attempt as they fail on a refused connection, and nothing is sent."""

    def __init__(self, rule: str) -> None:
        super().__init__(f"refused by the notification address policy: {rule}")
        self.rule = rule


class _Probed(OSError):
    """Probe mode: the address was checked and the connection is not made."""


def _is_localhost(name: str) -> bool:
    # RFC 6761: localhost and every name under it are the host itself, whatever a DNS server says.
    name = name.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def _literal(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


@dataclass
class Guard:
    """The policy for one send (or one probe). `refused` is the first rule broken, "" while none was."""

    check: bool
    probe: bool = False
    nameservers: list[tuple[str, int]] = field(default_factory=list)
    refused: str = ""

    def admit(self, host: str) -> None:
        address = _literal(host)
        rule = "loopback" if address is None and _is_localhost(host) else (rule_of(address) if address else "")
        if rule and self.check:
            self.refused = self.refused or rule
            raise Refused(rule)

    def resolve(self, host: Any, port: Any, family: int, type: int, proto: int, flags: int) -> list:
        """getaddrinfo's answer for `host`, every address in it checked."""
        name = host.decode("idna") if isinstance(host, bytes) else host
        if name is not None and _is_localhost(name):
            self.admit(name)
        if name is None or not self.nameservers or _literal(name) is not None:
            results = _real_getaddrinfo(host, port, family, type, proto, flags)
        else:
            results = []
            for address in _ask(self.nameservers, name, family):
                results += _real_getaddrinfo(address, port, family, type, proto, flags | socket.AI_NUMERICHOST)
            if not results:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        for *_rest, sockaddr in results:
            self.admit(str(sockaddr[0]))
        if self.probe:
            raise _Probed("probe: not connecting")
        return list(results)

    def sockaddr(self, family: int, address: Any) -> Any:
        """The address a socket is about to reach, checked; a name in it is resolved here, through the
        policy, and replaced by the address checked."""
        if family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            host = address[0].decode("idna") if isinstance(address[0], bytes) else str(address[0])
            if _literal(host) is None:
                checked = self.resolve(host, address[1], family, socket.SOCK_STREAM, 0, 0)
                return (checked[0][4][0], *address[1:])
            self.admit(host)
        elif self.check:
            self.refused = self.refused or "local-socket"
            raise Refused("local-socket")
        if self.probe:
            raise _Probed("probe: not connecting")
        return address


_current: contextvars.ContextVar[Guard | None] = contextvars.ContextVar("notification_guard", default=None)


def _ask(nameservers: list[tuple[str, int]], name: str, family: int) -> list[str]:
    """The addresses of `name` from the configured DNS servers (A and AAAA, as `family` allows)."""
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = [dns.nameserver.Do53Nameserver(ip, port) for ip, port in nameservers]
    kinds = {socket.AF_INET: ["A"], socket.AF_INET6: ["AAAA"]}.get(family, ["A", "AAAA"])
    addresses: list[str] = []
    # The servers may well be on loopback: the resolver's own packets are not a channel's.
    token = _current.set(None)
    try:
        for kind in kinds:
            try:
                answer = resolver.resolve(name, kind, lifetime=DNS_LIFETIME_S, search=False)
            except dns.exception.DNSException:
                continue
            addresses += [record.to_text() for record in answer]
    finally:
        _current.reset(token)
    return addresses


# --- the hooks, installed once per process -------------------------------------------------------------

_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_sendto = socket.socket.sendto
_install_lock = threading.Lock()


def _getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> list:
    guard = _current.get()
    if guard is None:
        return _real_getaddrinfo(host, port, family, type, proto, flags)
    return guard.resolve(host, port, family, type, proto, flags)


def _connect(self: socket.socket, address: Any) -> None:
    guard = _current.get()
    if guard is not None:
        address = guard.sockaddr(self.family, address)
    return _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    guard = _current.get()
    if guard is not None:
        address = guard.sockaddr(self.family, address)
    return _real_connect_ex(self, address)


def _sendto(self: socket.socket, data: Any, *rest: Any) -> int:
    # sendto(data, address) or sendto(data, flags, address): UDP (syslog) reaches a host without connect().
    guard = _current.get()
    if guard is not None and rest:
        rest = (*rest[:-1], guard.sockaddr(self.family, rest[-1]))
    return _real_sendto(self, data, *rest)


def _install() -> None:
    with _install_lock:
        if socket.getaddrinfo is _getaddrinfo:
            return
        socket.getaddrinfo = _getaddrinfo
        socket.socket.connect = _connect  # type: ignore[method-assign]
        socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
        socket.socket.sendto = _sendto  # type: ignore[method-assign,assignment]


@contextmanager
def guarded(*, probe: bool = False) -> Iterator[Guard]:
    """Apply the policy to every connection made in this context (and in contexts copied from it) until
    the block ends. With LATENCY_NOTIFY_ALLOW_PRIVATE only the DNS servers apply, if any are set."""
    guard = Guard(
        check=not settings.LATENCY_NOTIFY_ALLOW_PRIVATE,
        probe=probe,
        nameservers=list(settings.LATENCY_NOTIFY_DNS_SERVERS),
    )
    _install()
    token = _current.set(guard)
    try:
        yield guard
    finally:
        _current.reset(token)


def check_url(url: str) -> str:
    """The rule a channel with this Apprise URL breaks ("" when none): where the service would connect
    first, found by running Apprise with every connection refused after its address is checked."""
    if settings.LATENCY_NOTIFY_ALLOW_PRIVATE:
        return ""
    notifier = apprise.Apprise()
    if not notifier.add(url):
        return ""  # the form says Apprise does not understand it
    with guarded(probe=True) as guard:
        notifier.notify(title="probe", body="probe", timeout=PROBE_TIMEOUT_S)
    return guard.refused
