"""probes.fleet.missed.close_slots records a MissedRun for every slot due longer ago than its grace
that has no measurement: once however often it runs, nothing before the probe's or region's last
change, nothing for a slot that was measured, and nothing for disabled probes or inactive regions.
Time is passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.fleet.missed import close_slots
from probes.models import MissedRun, Probe, Region
from probes.scheduling import slot_offset
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
INTERVAL, TIMEOUT = 60, 20.0
GRACE = INTERVAL + int(TIMEOUT) + 30 + 30  # interval + timeout + visibility timeout + 30 s
LOOKBACK = 600


@pytest.fixture(autouse=True)
def timing(settings):
    settings.LATENCY_VISIBILITY_TIMEOUT = 30
    settings.LATENCY_MISSED_LOOKBACK = LOOKBACK


def since(probe, region, when: datetime) -> None:
    """Both rows last changed at `when` (their updated_at is set by save(); set it here directly)."""
    Probe.objects.filter(id=probe.id).update(updated_at=when)
    Region.objects.filter(id=region.id).update(updated_at=when)


@pytest.fixture
def pair():
    region = RegionFactory()
    probe = ProbeFactory(regions=[region], interval_seconds=INTERVAL, timeout_seconds=TIMEOUT)
    since(probe, region, NOW - timedelta(days=1))
    return probe, region


def closed_slots(probe, now=NOW, start=None) -> list[datetime]:
    """Every slot of the probe due in the look-back before the grace line, counted second by second."""
    line = int(now.timestamp()) - GRACE
    first = line - LOOKBACK if start is None else max(line - LOOKBACK, int(start.timestamp()))
    offset = slot_offset(probe.id, INTERVAL)
    return [datetime.fromtimestamp(t, UTC) for t in range(first, line + 1) if (t - offset) % INTERVAL == 0]


def missed(probe, region) -> list[datetime]:
    return sorted(MissedRun.objects.filter(probe=probe, region=region).values_list("scheduled_for", flat=True))


def test_every_unpicked_slot_is_recorded_once_however_often_slots_are_closed(pair):
    probe, region = pair
    expected = closed_slots(probe)
    # Both ends of the look-back are slots when the probe's offset lands on them (one probe id in INTERVAL).
    assert len(expected) in (LOOKBACK // INTERVAL, LOOKBACK // INTERVAL + 1)
    assert close_slots(NOW) == len(expected)
    assert close_slots(NOW) == 0
    assert close_slots(NOW + timedelta(seconds=1)) <= 1
    assert missed(probe, region)[: len(expected)] == expected
    row = MissedRun.objects.filter(probe=probe).first()
    assert (row.target_id, row.recorded_at) == (probe.target_id, NOW)


def test_a_slot_with_a_measurement_is_not_missed(pair):
    probe, region = pair
    measured = closed_slots(probe)[3]
    MeasurementFactory(probe=probe, region=region, scheduled_for=measured)
    close_slots(NOW)
    assert missed(probe, region) == [slot for slot in closed_slots(probe) if slot != measured]


def test_slots_still_within_their_grace_are_left_open(pair):
    probe, region = pair
    close_slots(NOW)
    latest = max(missed(probe, region))
    assert NOW - latest >= timedelta(seconds=GRACE)
    assert NOW - latest < timedelta(seconds=GRACE + INTERVAL)


def test_nothing_is_missed_before_the_probe_or_its_region_last_changed(pair):
    probe, region = pair
    changed = NOW - timedelta(seconds=GRACE + 200)
    since(probe, region, NOW - timedelta(days=1))
    Probe.objects.filter(id=probe.id).update(updated_at=changed)
    close_slots(NOW)
    assert missed(probe, region) == closed_slots(probe, start=changed)
    assert len(missed(probe, region)) in (3, 4)
    MissedRun.objects.all().delete()
    Probe.objects.filter(id=probe.id).update(updated_at=NOW - timedelta(days=1))
    Region.objects.filter(id=region.id).update(updated_at=changed)
    close_slots(NOW)
    assert missed(probe, region) == closed_slots(probe, start=changed)


def test_a_new_probe_has_missed_nothing_yet():
    region = RegionFactory()
    ProbeFactory(regions=[region], interval_seconds=INTERVAL, timeout_seconds=TIMEOUT)
    # Created now (real time): every slot a pass at the real time could close predates it.
    assert close_slots() == 0


def test_disabled_probes_and_inactive_regions_miss_nothing(pair):
    probe, region = pair
    other = RegionFactory(active=False)
    probe.regions.add(other)
    since(probe, other, NOW - timedelta(days=1))
    close_slots(NOW)
    assert missed(probe, other) == []
    assert missed(probe, region)
    MissedRun.objects.all().delete()
    Probe.objects.filter(id=probe.id).update(enabled=False)
    assert close_slots(NOW) == 0


def test_each_region_of_a_probe_has_its_own_slots(pair):
    probe, region = pair
    second = RegionFactory()
    probe.regions.add(second)
    since(probe, second, NOW - timedelta(days=1))
    MeasurementFactory(probe=probe, region=region, scheduled_for=closed_slots(probe)[0])
    close_slots(NOW)
    assert missed(probe, second) == closed_slots(probe)
    assert missed(probe, region) == closed_slots(probe)[1:]


def test_an_outage_shorter_than_the_look_back_is_made_up_by_the_next_pass(pair):
    probe, region = pair
    close_slots(NOW - timedelta(seconds=LOOKBACK // 2))
    close_slots(NOW)
    expected = sorted(set(closed_slots(probe)) | set(closed_slots(probe, now=NOW - timedelta(seconds=LOOKBACK // 2))))
    assert missed(probe, region) == expected
