"""The web process keeps its database connections in a pool opened when the server starts (latency.startup):
under ASGI each request runs in a thread of its own, and before the pool each one opened, and closed, a
PostgreSQL backend of its own. Over a real uvicorn: the backends the server holds serve every later request,
none is opened for one; with LATENCY_DB_POOL=false the server keeps none between requests."""

from __future__ import annotations

import pytest
import requests
from django.db import connection

from devtools.harness import wait_for
from tests.factories import RegionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def server_backends() -> set[tuple]:
    """The other client backends on the test database: the server's (pid, start), since this test opens no
    other connection."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pid, backend_start FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        return set(cur.fetchall())


def read_regions(site, token: str, times: int) -> None:
    auth = {"Authorization": f"Bearer {token}"}
    for _ in range(times):
        answer = requests.get(f"{site.origin}/api/v1/regions/", headers=auth, timeout=20)
        assert answer.status_code == 200
        assert answer.json()["count"] >= 1


def test_later_requests_are_served_by_the_backends_the_server_already_holds(site, roles):
    RegionFactory()
    read_regions(site, roles.viewer.token, times=4)
    held = server_backends()
    assert held, "the pool keeps its connections open between requests"
    read_regions(site, roles.viewer.token, times=8)
    assert server_backends() == held


@pytest.mark.asgi_env(LATENCY_DB_POOL="false")
def test_without_the_pool_the_server_keeps_no_backend_between_requests(site, roles):
    RegionFactory()
    read_regions(site, roles.viewer.token, times=3)
    # A request's backend ends once its response is sent: shortly after, not before the client reads it.
    wait_for(lambda: not server_backends(), timeout=30, message="the server's backends to end")
