"""Small typed readers of environment variables that fail loudly.

A monitor that silently falls back to a default when an operator mistypes
`DEBUG=flase` is worse than one that refuses to start, so every reader raises
ImproperlyConfigured naming the variable and the value it could not read.
Each reader takes the variable's default, type and bounds from the one list of
settings (probes.conf.catalog), and refuses a name the list does not declare.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import ssl
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from probes.conf import catalog
from probes.conf.catalog import Kind, Setting

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _entry(name: str, kind: Kind) -> Setting:
    """The catalogue's entry: reading a variable it does not declare refuses to start, so the list stays whole."""
    try:
        return catalog.setting(name, kind)
    except (catalog.UnknownSetting, TypeError) as exc:
        raise ImproperlyConfigured(str(exc)) from None


def env_str(name: str) -> str:
    entry = _entry(name, "str")
    return os.environ.get(name, str(entry.default))


def env_bool(name: str) -> bool:
    default = _entry(name, "bool").default
    raw = os.environ.get(name)
    if raw is None:
        return bool(default)
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true or false)")


def env_int(name: str) -> int:
    entry = _entry(name, "int")
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return int(entry.default)
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    _check_bounds(entry, value, str(value))
    return value


def env_float(name: str) -> float:
    entry = _entry(name, "float")
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return float(entry.default)
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if value != value:  # NaN compares false with every bound
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number")
    _check_bounds(entry, value, f"{value:g}")
    return value


def _check_bounds(entry: Setting, value: float, shown: str) -> None:
    """Refuses a value outside the catalogue's bounds for it; `shown` is how the error writes the value."""
    if entry.minimum is not None and value < entry.minimum:
        raise ImproperlyConfigured(f"{entry.name}={shown} is below the minimum {entry.minimum:g}")
    if entry.maximum is not None and value > entry.maximum:
        raise ImproperlyConfigured(f"{entry.name}={shown} is above the maximum {entry.maximum:g}")


def env_list(name: str) -> list[str]:
    default = _entry(name, "list").default
    raw = os.environ.get(name)
    if raw is None:
        return list(default) if isinstance(default, tuple) else []
    return _items(raw)


def _items(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_addresses(name: str, default_port: int) -> list[tuple[str, int]]:
    """IP addresses with an optional port, comma separated: 192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:53."""
    _entry(name, "addresses")
    addresses = []
    for item in _items(os.environ.get(name, "")):
        if item.startswith("["):
            host, _, port = item[1:].partition("]")
            port = port.removeprefix(":")
        elif item.count(":") == 1:
            host, _, port = item.partition(":")
        else:
            host, port = item, ""  # an IPv4 address, or an IPv6 one without brackets (no port)
        try:
            address = str(ipaddress.ip_address(host))
            number = int(port) if port else default_port
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {item!r} is not an IP address with an optional :port") from None
        if not 0 < number < 65536:
            raise ImproperlyConfigured(f"{name}: {item!r} has a port out of range")
        addresses.append((address, number))
    return addresses


def database_from_url(url: str, *, name: str = "DATABASE_URL") -> dict:
    """Django DATABASES entry from postgres://user:pass@host:port/db?opt=v."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(
            f"{name} must be a postgres:// URL (got scheme {parts.scheme!r}); Latency Atlas runs on PostgreSQL only"
        )
    db_name = unquote(parts.path.lstrip("/"))
    if not db_name:
        raise ImproperlyConfigured(f"{name} names no database (postgres://user@host:port/NAME)")
    options = dict(parse_qsl(parts.query))
    host = unquote(parts.hostname or "") if parts.hostname else ""
    # A host given as ?host=/path (unix socket directory) wins over the netloc.
    host = options.pop("host", host)
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name} has an invalid port") from None
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": db_name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(port or ""),
        "OPTIONS": options,
        # Persistent connections: ingest and the dashboard query constantly.
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


# channels_redis waits for a message with a blocking pop of 5 s, and redis-py
# 8 gives every connection a 5 s socket timeout by default (7.x had none): the
# read of an empty pop raced that timeout and raised TimeoutError after 5 s of
# silence, closing every live dashboard socket with nothing new to show
# (redis-py issue #4091). channels_redis is written for no socket timeout, so
# that is restored; a dead broker connection is noticed by TCP keepalive
# probes instead (about a minute), not by a read deadline.
_KEEPALIVE = {
    getattr(socket, name): value
    for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3))
    if hasattr(socket, name)
}


def channel_layer(redis_url: str, prefix: str) -> dict:
    """The CHANNEL_LAYERS entry for a Redis URL (the site's, or a test's own)."""
    host: dict = {"address": redis_url, "socket_timeout": None}
    if not redis_url.startswith("unix://"):
        # Keepalive applies to TCP connections only (redis-py refuses it for a unix socket).
        host.update(socket_keepalive=True, socket_keepalive_options=_KEEPALIVE)
    return {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [host], "prefix": prefix},
    }


def broker_tls(broker_url: str, ca_path: str, *, name: str = "LATENCY_BROKER_CA") -> dict | None:
    """Celery's broker_use_ssl for a TLS broker (rediss://, amqps://), the certificate always verified: against
    the CA bundle `ca_path` when given, else the system's CAs (Redis only: py-amqp loads none of its own, so
    amqps:// needs the bundle). None for a plain broker. The same options as the region worker's
    (probes/worker/config.py); Redis and RabbitMQ name them differently (redis-py's ssl_* keywords, py-amqp's
    ssl.wrap_socket arguments; server_hostname None: kombu checks the URL's host name)."""
    scheme = urlsplit(broker_url).scheme
    if ca_path and not os.path.isfile(ca_path):
        raise ImproperlyConfigured(f"{name} must name a CA bundle file (got {ca_path!r}, which is not a file)")
    if scheme == "rediss":
        return {"ssl_cert_reqs": ssl.CERT_REQUIRED, **({"ssl_ca_certs": ca_path} if ca_path else {})}
    if scheme == "amqps":
        if not ca_path:
            raise ImproperlyConfigured(f"an amqps:// broker needs {name}: the CA bundle that signed its certificate")
        return {"ca_certs": ca_path, "cert_reqs": ssl.CERT_REQUIRED, "server_hostname": None}
    if ca_path:
        raise ImproperlyConfigured(f"{name} is set, so the broker URL must be rediss:// or amqps:// (got {scheme}://)")
    return None
