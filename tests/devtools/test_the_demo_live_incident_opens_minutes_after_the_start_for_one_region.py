"""The demo's live incident, with time passed in: the demo target's URL carries the mock server's slow_* knobs, the
mock slows that target for one region only (devtools/mockllm/knobs.slowed_for_region decides each call, given the
region header and the time), and the real alert evaluator, run minute by minute over the stored calls against a
baseline drawn from the history, opens an incident for that target and region alone a few minutes after the start,
and resolves it after the slowdown ends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest

from devtools.demo_history import PastIncident, load_history, series_rows
from devtools.demo_seed import COMMON_KNOBS, DEMO_REGIONAL_RULE_NAME, TARGETS, live_incident, seed
from devtools.mockllm.knobs import resolve_knobs, slowed_for_region
from probes.alerts.evaluate import run_pass
from probes.alerts.models import Incident
from probes.geo import EMULATED_REGION_HEADER
from probes.ingest import store_copied
from probes.models import Probe
from probes.scheduling import slot_offset
from tests.devtools.demo_regions import demo_regions
from tests.partitions.conftest import fresh_days  # noqa: F401 (the fixture)

# The history's days get partitions that would outlive the test's flush: fresh_days drops them again.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_days")]

SLUGS = ["eu-london", "eu-frankfurt", "ap-singapore"]
LIVE = timedelta(minutes=20)


def live_calls(start: datetime) -> int:
    """What the region workers would store from `start` for LIVE: a call every 10 s per probe and region, slowed
    where the mock server, given the knobs in the target's URL, slows it."""
    knobs = {name: {**COMMON_KNOBS, **k} for name, *_, k in TARGETS}
    rows = 0
    for probe in Probe.objects.select_related("target").prefetch_related("regions"):
        target = probe.target
        mock = resolve_knobs(dict(parse_qsl(urlsplit(target.url).query)), {}, {})
        offset = slot_offset(probe.id, probe.interval_seconds)
        first = (int(start.timestamp()) - offset) // probe.interval_seconds * probe.interval_seconds + offset
        slots = np.arange(
            first + probe.interval_seconds, (start + LIVE).timestamp(), probe.interval_seconds, dtype=float
        )
        for region in probe.regions.all():
            extra = [slowed_for_region(mock, {EMULATED_REGION_HEADER: region.slug}, t) for t in slots.tolist()]
            slowed = [t for t, ms in zip(slots.tolist(), extra, strict=True) if ms]
            staged = []
            if slowed:
                server = PastIncident("server", target.name, region.slug, 0, 0, max(extra))
                staged = [(server, slowed[0], slowed[-1] + 1)]
            lines = series_rows(
                probe.id, target, knobs[target.name], region, slots, np.random.default_rng(region.id), staged
            )
            rows += store_copied(["".join(lines).encode()], [start, start + LIVE])
    return rows


def test_the_live_incident_opens_for_its_target_and_region_a_few_minutes_after_the_start():
    regions = demo_regions(SLUGS)
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    seed("http://localhost:9", regions)
    load_history(start, days=2, evaluate=False)
    incident = live_incident(start, regions)
    seed("http://localhost:9", regions, incident)
    assert live_calls(start) > 0

    at = start
    while at <= start + LIVE:
        run_pass(at)
        at += timedelta(minutes=1)
    (opened,) = Incident.objects.all()
    assert opened.rule.name == DEMO_REGIONAL_RULE_NAME
    assert opened.target.name == incident.target
    assert [r.slug for r in opened.regions.all()] == [incident.region] == ["eu-frankfurt"]
    assert start + timedelta(minutes=3) <= opened.opened_at <= start + timedelta(minutes=6)
    # Resolved once the rule has stayed clear for a whole window after the slow calls left it.
    assert opened.resolved_at is not None and incident.ends < opened.resolved_at <= incident.ends + timedelta(
        minutes=10
    )
    # The explanation points at the server: the first token moved, the TCP connect did not.
    assert "TCP connect unchanged" in opened.summary
