"""Concurrent CSV exports are capped per process: beyond LATENCY_MAX_CONCURRENT_EXPORTS the answer is 429 with
Retry-After, and a slot is given back when its client goes away.

Method: a real uvicorn process serves the site over the test database. Slow clients (raw sockets with a small
receive buffer that read the response head and then nothing) hold their exports open: the server's stream
blocks on the full socket. PostgreSQL itself (pg_stat_activity) says how many connections the server holds."""

from __future__ import annotations

import contextlib
import socket

import httpx
import pytest
from django.db import connection
from django.test import Client

from devtools.harness import UvicornServer
from tests.conftest import _database_url
from tests.export_support import ROWS, STEP, T0, viewer
from tests.support import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

CAP = 2
CLIENTS = 6
# Slow clients hold measurements.csv (far larger than the socket buffers); regions.csv counts against the same cap.
HELD = "/export/measurements.csv"


def server_connections(exclude_pid: int) -> dict[str, int]:
    """The test database's connections other than ours: all of them, and those running a COPY."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*), count(*) FILTER (WHERE query ILIKE 'COPY%%' AND state = 'active') "
            "FROM pg_stat_activity WHERE datname = current_database() AND pid <> %s "
            "AND backend_type = 'client backend'",
            [exclude_pid],
        )
        total, copying = cur.fetchone()
    return {"total": total, "copying": copying}


def slow_request(port: int, path: str, cookie: str) -> tuple[socket.socket, str]:
    """Send a GET, read the response head (status line and headers), then stop reading."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(60)
    sock.connect(("127.0.0.1", port))
    sep = "&" if "?" in path else "?"
    query = f"since={T0.isoformat().replace('+', '%2B')}&until={(T0 + STEP * ROWS).isoformat().replace('+', '%2B')}"
    sock.sendall(
        f"GET {path}{sep}{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: sessionid={cookie}\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    return sock, head.decode("latin-1")


def test_exports_beyond_the_cap_get_429_and_slots_come_back_when_clients_leave(loaded, django_user_model, tmp_path):
    client = Client()
    client.force_login(viewer(django_user_model, "concurrent"))
    cookie = client.cookies["sessionid"].value
    env = {
        "DATABASE_URL": _database_url(connection.settings_dict),
        "LATENCY_PUBLIC_DASHBOARD": "false",
        "LATENCY_MAX_CONCURRENT_EXPORTS": str(CAP),
        # Django's own connections come from the server's pool, which keeps what it opened: two at most here.
        # (Exports read on connections of their own, probes.exports.pgcopy.)
        "LATENCY_DB_POOL_MAX": "2",
    }
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        own_pid = cur.fetchone()[0]
    with UvicornServer(env, tmp_path / "uvicorn.log", access_log=False, collect_static=False) as server:
        port = server.port
        socks = []
        try:
            heads = []
            for _ in range(CLIENTS):
                sock, head = slow_request(port, HELD, cookie)
                socks.append(sock)
                heads.append(head)
            statuses = [int(h.split(" ", 2)[1]) for h in heads]
            assert statuses.count(200) == CAP, heads
            assert statuses.count(429) == CLIENTS - CAP, heads
            for head in heads:
                if " 429 " in head.split("\r\n", 1)[0]:
                    assert "retry-after: 10" in head.lower(), head

            # The held exports have their COPY running; the server holds no more connections than the cap
            # plus Django's own (the pool's two), whatever the number of clients.
            wait_for(lambda: server_connections(own_pid)["copying"] == CAP, 30, 0.1, "the held exports' COPY to run")
            # The refused requests' session lookups take the pool's other connections in turn; on a busy
            # machine one can trail the 429 by a moment, so the steady state is what is asserted.
            wait_for(
                lambda: server_connections(own_pid)["total"] <= CAP + 2,
                30,
                0.1,
                f"at most {CAP} export connections plus Django's own ({server_connections(own_pid)})",
            )

            # While they are held, exports of either kind are refused.
            with httpx.Client(base_url=server.origin, cookies={"sessionid": cookie}, timeout=30) as http:
                for path in ("/export/measurements.csv", "/export/regions.csv"):
                    refused = http.get(path, params={"since": "1h"})
                    assert refused.status_code == 429 and refused.headers["Retry-After"] == "10", path
        finally:
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.close()

        # The clients went away mid-stream: their slots and connections come back.
        wait_for(lambda: server_connections(own_pid)["copying"] == 0, 30, 0.1, "the abandoned exports to stop")

        def export_ok() -> bool:
            with httpx.Client(base_url=server.origin, cookies={"sessionid": cookie}, timeout=30) as http:
                return http.get("/export/measurements.csv", params={"since": "1h"}).status_code == 200

        wait_for(export_ok, 30, 0.2, "an export to be accepted again after the slow clients left")
        with httpx.Client(base_url=server.origin, cookies={"sessionid": cookie}, timeout=30) as http:
            paths = ["/export/measurements.csv", "/export/regions.csv"] * CAP
            statuses = [http.get(path, params={"since": "1h"}).status_code for path in paths]
        # One after another, each ends and gives its slot back: none is refused.
        assert statuses == [200] * len(paths)
