"""Which status page a request's Host names (StatusPage.hostname: a page on a domain of its own).

Every request on the site asks, so the answer comes from memory: the table of domains is read from the database
at most once per LATENCY_STATUS_CACHE_S per process (the period the pages themselves are cached for), and only for
a Host that could be such a domain at all (a DNS name of two labels or more, not an address or `localhost`), so a
site reached by address, and every test client, never reads it. The admin's forget() drops this process's copy;
other processes see a change within the period."""

from __future__ import annotations

import threading
import time

from django.conf import settings

from probes.statuspages.models import StatusPage, is_hostname


class _Domains:
    """This process's copy of {hostname: slug}, and the monotonic time it is good until."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.good_until = float("-inf")
        self.table: dict[str, str] = {}

    def get(self) -> dict[str, str]:
        now = time.monotonic()
        if now < self.good_until and settings.LATENCY_STATUS_CACHE_S > 0:
            return self.table
        table = dict(StatusPage.objects.exclude(hostname="").values_list("hostname", "slug"))
        with self.lock:
            self.table, self.good_until = table, now + settings.LATENCY_STATUS_CACHE_S
        return table

    def forget(self) -> None:
        with self.lock:
            self.good_until = float("-inf")


_domains = _Domains()


def page_slug_for_host(host: str) -> str | None:
    """The slug of the page served at the root of `host` (a request's Host, port stripped), or None."""
    host = host.lower().rstrip(".")
    if not is_hostname(host):
        return None
    return _domains.get().get(host)


def forget_domains() -> None:
    """Read the domains again on the next request (this process's copy; the others' age out)."""
    _domains.forget()
