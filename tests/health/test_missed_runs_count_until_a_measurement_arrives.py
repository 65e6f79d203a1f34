"""Readers count a missed run only while it has no measurement: a run that still arrives after its
slot was closed wins. The overview's regions x targets table shows samples, errors and missed, and a
region gone dark shows there with its missed runs rather than not at all."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from probes import readings
from probes.models import Measurement
from tests.factories import MeasurementFactory, MissedRunFactory, ProbeFactory, RegionFactory, WorkerFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    lagos = RegionFactory(slug="mr-lagos", name="Lagos")
    lima = RegionFactory(slug="mr-lima", name="Lima")
    probe = ProbeFactory(regions=[lagos, lima])
    now = timezone.now().replace(microsecond=0)
    slots = [now - timedelta(minutes=m) for m in (5, 6, 7)]
    MeasurementFactory(probe=probe, region=lagos, scheduled_for=now - timedelta(minutes=4))
    MeasurementFactory(probe=probe, region=lagos, scheduled_for=now - timedelta(minutes=3), outcome="timeout")
    for slot in slots:
        MissedRunFactory(probe=probe, region=lagos, scheduled_for=slot)
        MissedRunFactory(probe=probe, region=lima, scheduled_for=slot)
    WorkerFactory(region=lagos)
    return probe, lagos, lima, slots, now


def test_missed_counts_are_per_region_and_target_within_the_window(world):
    probe, lagos, lima, slots, now = world
    counts = readings.missed_counts((now - timedelta(hours=1), now), [probe.target_id], [lagos.id, lima.id])
    assert counts == {(lagos.id, probe.target_id): 3, (lima.id, probe.target_id): 3}
    narrow = readings.missed_counts((slots[1], now), [probe.target_id], [lagos.id])
    assert narrow == {(lagos.id, probe.target_id): 2}


def test_a_late_measurement_makes_the_reader_stop_counting_its_slot(world):
    probe, lagos, _lima, slots, now = world
    MeasurementFactory(probe=probe, region=lagos, scheduled_for=slots[0])
    counts = readings.missed_counts((now - timedelta(hours=1), now), [probe.target_id], [lagos.id])
    assert counts == {(lagos.id, probe.target_id): 2}


def test_the_table_shows_samples_errors_and_missed(client, world):
    _probe, _lagos, _lima, _slots, _now = world
    body = client.get("/api/table?window=1h").json()
    keys = [column["key"] for column in body["columns"]]
    assert keys[keys.index("samples") :][:3] == ["samples", "error_rate", "missed"]
    assert [c["label"] for c in body["columns"] if c["key"] == "missed"] == ["Missed"]
    rows = {row["region_slug"]: row for row in body["rows"]}
    assert (rows["mr-lagos"]["samples"], rows["mr-lagos"]["errors"], rows["mr-lagos"]["missed"]) == (2, 1, 3)


def test_a_dark_region_with_only_missed_runs_still_has_its_row(client, world):
    body = client.get("/api/table?window=1h").json()
    [lima] = [row for row in body["rows"] if row["region_slug"] == "mr-lima"]
    assert (lima["samples"], lima["missed"], lima["value"]) == (0, 3, None)


def test_the_table_counts_missed_runs_in_the_chosen_regions_and_window_only(client, world):
    probe, lagos, _lima, slots, _now = world
    body = client.get("/api/table?window=15m&region=mr-lagos").json()
    assert [(row["region_slug"], row["missed"]) for row in body["rows"]] == [("mr-lagos", 3)]
    Measurement.objects.filter(probe=probe).delete()
    MeasurementFactory(probe=probe, region=lagos, scheduled_for=slots[2])
    body = client.get("/api/table?window=15m&region=mr-lagos").json()
    assert [(row["samples"], row["missed"]) for row in body["rows"]] == [(1, 2)]


def test_the_overview_page_has_a_missed_column(client, world):
    html = client.get("/").content.decode()
    assert 'data-key="missed"' in html
