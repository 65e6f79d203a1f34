"""The trailing-window TTFT quantiles (5 min and 1 h) are the read package's one percentile, nearest rank of the raw
values in the window, ending at the scrape's clock."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from probes.histogram import exact_percentile
from probes.prometheus import render
from tests.metrics.conftest import families, samples


@pytest.mark.django_db
def test_quantiles_of_each_window_are_the_nearest_rank_of_its_values(make_probe, stored):
    probe = make_probe()
    region = probe.regions.get()
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    rng = random.Random(16)
    rows = []
    with time_machine.travel(now, tick=False):
        # 70 minutes of one-minute slots (the oldest ten outside the hour), a value per slot; started_at is
        # 250 ms after the slot (measurement_payload).
        for minute in range(70):
            ttft = rng.uniform(100, 3000)
            slot = now - timedelta(minutes=70 - minute)
            stored(probe, region, slot, ttft_ms=ttft)
            rows.append((slot + timedelta(milliseconds=250), ttft))
        stored(probe, region, now - timedelta(minutes=1, seconds=30), outcome="timeout", ttft_ms=None)
        body, _ = render("", now=lambda: now)
    parsed = families(body.decode())
    got = {
        (labels["window"], labels["quantile"]): value
        for labels, value in samples(parsed, "latency_atlas_ttft_quantile_seconds")
        if labels["target"] == probe.target.name
    }
    for window, span in (("5m", timedelta(minutes=5)), ("1h", timedelta(hours=1))):
        inside = [ttft for at, ttft in rows if now - span <= at < now]
        for q in (0.5, 0.95, 0.99):
            assert got[(window, repr(q))] == pytest.approx(exact_percentile(inside, q) / 1000), (window, q)
    assert len(got) == 6


@pytest.mark.django_db
def test_a_pair_silent_for_the_window_has_no_quantiles(make_probe, stored):
    probe = make_probe()
    region = probe.regions.get()
    now = datetime.now(UTC)
    stored(probe, region, now - timedelta(minutes=20), ttft_ms=300.0)
    parsed = families(render("", now=lambda: now)[0].decode())
    windows = {labels["window"] for labels, _ in samples(parsed, "latency_atlas_ttft_quantile_seconds")}
    assert windows == {"1h"}
