"""Exporting 100,000 measurements takes no more server memory than 10,000.

Method: a real `uvicorn latency.asgi:application` process serves the export
over HTTP (the way it runs in production; a test client would buffer the
body). After a warm-up export of 1,000 rows (imports, connections, caches),
the process's peak resident set (VmHWM in /proc/<pid>/status, which only
ever grows) is read after an export of 10,000 rows and again after one of
100,000 rows. A server that held the rows or the CSV would grow by tens of
megabytes between the two (100,000 rows of CSV alone are ~25 MB); a
streaming one stays within a few. The client reads the body in chunks and
counts lines, so it holds nothing either."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from django.db import connection

from devtools.harness import UvicornServer
from tests.conftest import _database_url
from tests.export_support import ROWS, STEP, T0, viewer

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "a-long-test-password-5512"


def peak_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))


def export_lines(client: httpx.Client, rows: int) -> tuple[int, float, float]:
    """(lines received, seconds to the first byte, seconds to the last) for an export of the first `rows` rows."""
    params = {"since": T0.isoformat(), "until": (T0 + STEP * rows).isoformat()}
    lines, first = 0, None
    start = time.perf_counter()
    with client.stream("GET", "/export/measurements.csv", params=params) as response:
        assert response.status_code == 200
        for chunk in response.iter_bytes():
            if first is None:
                first = time.perf_counter() - start
            lines += chunk.count(b"\n")
    return lines, first, time.perf_counter() - start


def test_memory_stays_flat_from_10k_to_100k_rows(loaded, django_user_model, tmp_path):
    viewer(django_user_model, "memory")
    env = {"DATABASE_URL": _database_url(connection.settings_dict), "LATENCY_PUBLIC_DASHBOARD": "false"}
    with UvicornServer(env, tmp_path / "uvicorn.log", access_log=False, collect_static=False) as server:
        client = httpx.Client(base_url=server.origin, timeout=120)
        page = client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        answer = client.post(
            "/accounts/login/",
            data={"username": "memory", "password": PASSWORD, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{server.origin}/accounts/login/"},
        )
        assert answer.status_code == 302
        pid = server.popen.pid

        assert export_lines(client, 1_000)[0] == 1_001
        assert export_lines(client, 10_000)[0] == 10_001
        after_10k = peak_kb(pid)
        lines, first_byte_s, last_byte_s = export_lines(client, ROWS)
        after_100k = peak_kb(pid)
        client.close()

    assert lines == ROWS + 1
    growth_mb = (after_100k - after_10k) / 1024
    print(f"peak RSS {after_10k / 1024:.1f} MB after 10k rows, {after_100k / 1024:.1f} MB after 100k; "
          f"first byte after {first_byte_s * 1000:.0f} ms, last after {last_byte_s * 1000:.0f} ms")  # fmt: skip
    assert growth_mb < 10, f"peak memory grew {growth_mb:.1f} MB from 10k to 100k rows"
    # Streamed: most of the export arrives after its first byte (a buffered one sends it all at the end).
    assert first_byte_s < last_byte_s / 2
