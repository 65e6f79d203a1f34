"""The measurements counter and the TTFT histogram are tallies kept at ingest (probes.tally), not counts of the
rows still there: a new web process reads the same figures, and retention pruning, which deletes raw rows, lowers
neither, so Prometheus' rate() and histogram_quantile() never see a false reset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from devtools.harness import UvicornServer
from probes.models import Measurement
from probes.rollups.prune import prune_raw
from tests.metrics.conftest import TOKEN, families, samples

COUNTERS = ("latency_atlas_measurements_total", "latency_atlas_ttft_seconds_count", "latency_atlas_ttft_seconds_sum")


def scrape(origin: str) -> dict:
    response = httpx.get(f"{origin}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    return families(response.text)


def counters(parsed: dict) -> dict:
    out = {}
    for name in (*COUNTERS, "latency_atlas_ttft_seconds_bucket"):
        for labels, value in samples(parsed, name):
            out[(name, tuple(sorted(labels.items())))] = value
    return out


def test_a_new_process_and_a_prune_leave_the_counters_where_they_were(site, make_probe, stored, tmp_path, settings):
    probe = make_probe()
    region = probe.regions.get()
    now = datetime.now(UTC).replace(microsecond=0)
    old = now - timedelta(days=settings.LATENCY_RETENTION_DAYS + 5)
    for i in range(3):
        stored(probe, region, old + timedelta(minutes=i), ttft_ms=400.0 + i)
    stored(probe, region, old + timedelta(minutes=5), outcome="http_error", ttft_ms=None, http_status=500)
    stored(probe, region, now - timedelta(minutes=2), ttft_ms=250.0)
    before = counters(scrape(site.origin))
    labels = (("outcome", "ok"), ("region", region.slug), ("target", probe.target.name))
    assert before[("latency_atlas_measurements_total", labels)] == 4.0

    # A restart: a new web process, nothing carried over but the database.
    site.stop()
    again = UvicornServer(site.env, tmp_path / "uvicorn-again.log", collect_static=False).start()
    try:
        assert counters(scrape(again.origin)) == before
        assert prune_raw(now) == 4
        assert Measurement.objects.count() == 1
        after = counters(scrape(again.origin))
    finally:
        again.stop()
    assert after == before
    # And the counters go on from there.
    stored(probe, region, now - timedelta(minutes=1), ttft_ms=260.0)
    grown = counters(families(_scrape_in_process()))
    assert grown[("latency_atlas_measurements_total", labels)] == 5.0
    assert all(grown[key] >= value for key, value in before.items())


def _scrape_in_process() -> str:
    from probes.prometheus import render

    body, _ = render("")
    return body.decode()
