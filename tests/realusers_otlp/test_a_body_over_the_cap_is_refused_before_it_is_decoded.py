"""Bodies are capped: over LATENCY_OTLP_MAX_BODY_BYTES as sent, or over LATENCY_OTLP_MAX_DECODED_BYTES once
decompressed (a small gzip bomb), the answer is 413 (the client must not retry) and nothing is stored."""

from __future__ import annotations

import gzip

import pytest

from probes.models import Observation


@pytest.mark.asgi_env(LATENCY_OTLP_MAX_BODY_BYTES="65536", LATENCY_OTLP_MAX_DECODED_BYTES="1048576")
def test_a_huge_body_and_a_gzip_bomb_are_413(site, source, post):
    response = post(site, "traces", b"\x0a" * 200_000, token=source.token)
    assert response.status_code == 413

    bomb = gzip.compress(b"\0" * 50_000_000)  # about 50 KB sent, 50 MB once inflated
    assert len(bomb) < 65536
    response = post(site, "traces", bomb, token=source.token, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert "decompresses to more than 1048576 bytes" in response.content.decode(errors="replace")
    assert Observation.objects.count() == 0
