"""Fixtures shared by the export tests."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import AsyncClient

from tests.export_support import ROWS, T0, viewer


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


@pytest.fixture
def client(django_user_model):
    """An async client signed in as a user allowed to export (the export views are async)."""
    client = AsyncClient()
    client.force_login(viewer(django_user_model))
    return client
