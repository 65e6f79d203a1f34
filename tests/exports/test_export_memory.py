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
from datetime import timedelta

import httpx
import pytest
from django.db import connection

from devtools.harness import UvicornServer
from tests.conftest import _database_url
from tests.export_support import T0, viewer

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = 100_000
PASSWORD = "a-long-test-password-5512"
STEP = timedelta(seconds=1)


@pytest.fixture
def loaded(make_region, make_target, make_probe):
    """ROWS measurements, one a second from T0, loaded inside PostgreSQL."""
    region = make_region(slug="mem-region")
    probe = make_probe(target=make_target(name="Memory target"), regions=[region])
    with connection.cursor() as cur:
        cur.execute(
            """
            INSERT INTO probes_measurement (probe_id, target_id, region_id, scheduled_for, started_at, worker,
                ingested_at, outcome, error, connection, http_status, dns_ms, connect_ms, tls_ms, ttfb_ms, ttft_ms,
                ttfat_ms, total_ms, output_tokens, tokens_per_s, itl_p50_ms)
            SELECT %(probe)s, %(target)s, %(region)s, t, t, 'w', t,
                   CASE WHEN i %% 50 = 0 THEN 'timeout' ELSE 'ok' END,
                   CASE WHEN i %% 50 = 0 THEN 'deadline exceeded after 30 s' END,
                   'cold', 200, 1.5, 10 + i %% 7, 20.25, 100 + i %% 97, 150 + i %% 101, 160.5, 400 + i %% 13, 20,
                   55.5, 12.125
            FROM generate_series(0, %(n)s - 1) AS i, LATERAL (SELECT %(t0)s::timestamptz + i * interval '1 second') s(t)
            """,
            {"probe": probe.id, "target": probe.target_id, "region": region.id, "n": ROWS, "t0": T0},
        )


def peak_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))


def export_lines(client: httpx.Client, rows: int) -> tuple[int, float]:
    """(lines received, seconds to the first byte) for an export of the first `rows` rows."""
    params = {"since": T0.isoformat(), "until": (T0 + STEP * rows).isoformat()}
    lines, first = 0, None
    start = time.perf_counter()
    with client.stream("GET", "/export/measurements.csv", params=params) as response:
        assert response.status_code == 200
        for chunk in response.iter_bytes():
            if first is None:
                first = time.perf_counter() - start
            lines += chunk.count(b"\n")
    return lines, first


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
        lines, first_byte_s = export_lines(client, ROWS)
        after_100k = peak_kb(pid)
        client.close()

    assert lines == ROWS + 1
    growth_mb = (after_100k - after_10k) / 1024
    print(f"peak RSS {after_10k / 1024:.1f} MB after 10k rows, {after_100k / 1024:.1f} MB after 100k; "
          f"first byte after {first_byte_s * 1000:.0f} ms")  # fmt: skip
    assert growth_mb < 10, f"peak memory grew {growth_mb:.1f} MB from 10k to 100k rows"
    assert first_byte_s < 1.0
