"""Slots line up on a fixed grid, follow admin changes at once, carry no
secret, and "run now" queues one run per active region on the real broker."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Probe, Region
from probes.scheduling import (
    current_slot,
    dispatch_due,
    due_slots,
    region_queue,
    run_now,
    slot_offset,
)
from tests.support import queued_messages

# current_slot ---------------------------------------------------------------


@pytest.mark.parametrize("interval", [10, 60, 300, 86_400])
def test_slots_are_aligned_to_the_interval_plus_the_probes_offset(interval):
    offset = slot_offset(4242, interval)
    assert 0 <= offset < interval
    now = 1_760_000_123.75
    start = current_slot(now, interval, offset)
    assert start <= now < start + interval
    assert (start - offset) % interval == 0


def test_two_times_in_one_slot_give_the_same_start_and_the_next_slot_is_one_interval_later():
    interval, offset = 60, 17
    start = current_slot(1_760_000_000.0, interval, offset)
    assert current_slot(start + 0.0, interval, offset) == start
    assert current_slot(start + 59.999, interval, offset) == start
    assert current_slot(start + 60.0, interval, offset) == start + 60
    assert current_slot(start - 0.001, interval, offset) == start - 60


def test_different_probes_are_spread_over_their_interval():
    offsets = {slot_offset(probe_id, 60) for probe_id in range(1, 61)}
    assert len(offsets) == 60


# due_slots ------------------------------------------------------------------


def test_due_slots_gives_each_enabled_probe_its_current_slot_in_each_active_region(make_region, make_probe):
    lagos, london = make_region(), make_region()
    probe = make_probe(regions=[lagos, london], interval_seconds=60)
    now = datetime.now(UTC)
    slots = due_slots(now)
    assert sorted(s.region_slug for s in slots) == sorted([lagos.slug, london.slug])
    (when,) = {s.scheduled_for for s in slots}
    start = current_slot(now.timestamp(), 60, slot_offset(probe.id, 60))
    assert when == datetime.fromtimestamp(start, tz=UTC)
    assert when <= now < when + timedelta(seconds=60)
    assert {(s.probe_id, s.target_id, s.interval) for s in slots} == {(probe.id, probe.target_id, 60)}


def test_two_moments_in_one_slot_give_the_same_slot_and_the_next_is_one_interval_later(make_probe):
    probe = make_probe(interval_seconds=120, timeout_seconds=30)
    (slot,) = due_slots(datetime.now(UTC))
    start = slot.scheduled_for
    (same,) = due_slots(start + timedelta(seconds=119, microseconds=999_000))
    (next_slot,) = due_slots(start + timedelta(seconds=120))
    assert same.scheduled_for == start
    assert next_slot.scheduled_for == start + timedelta(seconds=120)
    assert slot.probe_id == probe.id


def test_due_slots_skips_disabled_probes_and_inactive_regions(make_region, make_probe):
    active, inactive = make_region(), make_region(active=False)
    running = make_probe(regions=[active, inactive])
    make_probe(regions=[active], enabled=False)
    slots = due_slots(datetime.now(UTC))
    assert [(s.probe_id, s.region_id) for s in slots] == [(running.id, active.id)]


def test_admin_changes_apply_at_the_very_next_due_slots_call(make_region, make_probe):
    lagos = make_region()
    probe = make_probe(regions=[lagos], interval_seconds=60)
    now = datetime.now(UTC)
    assert [s.interval for s in due_slots(now)] == [60]

    probe.interval_seconds = 300
    probe.save()
    (slot,) = due_slots(now)
    assert slot.interval == 300
    start = current_slot(now.timestamp(), 300, slot_offset(probe.id, 300))
    assert slot.scheduled_for == datetime.fromtimestamp(start, tz=UTC)

    london = make_region()
    probe.regions.add(london)
    assert sorted(s.region_id for s in due_slots(now)) == sorted([lagos.id, london.id])

    Region.objects.filter(pk=london.pk).update(active=False)
    assert [s.region_id for s in due_slots(now)] == [lagos.id]

    Probe.objects.filter(pk=probe.pk).update(enabled=False)
    assert due_slots(now) == []


def test_the_slot_message_names_the_key_variable_and_never_holds_the_key(make_target, make_probe, monkeypatch):
    secret = "sk-live-abcdef0123456789"
    monkeypatch.setenv("PROVIDER_KEY_FOR_TEST", secret)
    monkeypatch.setenv("PROVIDER_ORG_FOR_TEST", "org-secret-42")
    target = make_target(
        api_key_env="PROVIDER_KEY_FOR_TEST",
        headers={"OpenAI-Organization": "${PROVIDER_ORG_FOR_TEST}", "Authorization": "Bearer ${PROVIDER_KEY_FOR_TEST}"},
    )
    make_probe(target=target)
    (slot,) = due_slots(datetime.now(UTC))
    message = slot.message()
    text = json.dumps(message)
    assert secret not in text and "org-secret-42" not in text
    assert message["spec"]["api_key_env"] == "PROVIDER_KEY_FOR_TEST"
    assert message["spec"]["headers"]["Authorization"] == "Bearer ${PROVIDER_KEY_FOR_TEST}"


def test_the_slot_message_carries_what_the_region_worker_needs(make_probe):
    probe = make_probe(interval_seconds=60, timeout_seconds=12.5)
    (slot,) = due_slots(datetime.now(UTC))
    message = json.loads(json.dumps(slot.message()))  # it travels as JSON
    region = probe.regions.get()
    assert message["probe_id"] == probe.id and message["target_id"] == probe.target_id
    assert message["region_id"] == region.id and message["region"] == region.slug
    assert datetime.fromisoformat(message["scheduled_for"]) == slot.scheduled_for
    assert message["interval"] == 60
    assert message["spec"]["timeout_s"] == 12.5 and message["spec"]["url"] == probe.target.url


# Publishing on the real broker ---------------------------------------------


def test_dispatch_due_queues_each_due_slot_on_its_regions_queue_once(pipeline, make_region, make_probe):
    lagos, london = make_region(), make_region()
    probe = make_probe(regions=[lagos, london], interval_seconds=60)
    make_probe(regions=[lagos], enabled=False)
    # Five seconds into the current slot, so one second later is the same slot.
    offset = slot_offset(probe.id, 60)
    now = datetime.fromtimestamp(current_slot(datetime.now(UTC).timestamp(), 60, offset) + 5, tz=UTC)
    assert dispatch_due(pipeline.app, pipeline.redis, now) == 2
    assert dispatch_due(pipeline.app, pipeline.redis, now + timedelta(seconds=1)) == 0
    for region in (lagos, london):
        (message,) = queued_messages(pipeline.redis, region_queue(region.slug))
        assert (message["probe_id"], message["region"]) == (probe.id, region.slug)
        start = current_slot(now.timestamp(), 60, slot_offset(probe.id, 60))
        assert datetime.fromisoformat(message["scheduled_for"]) == datetime.fromtimestamp(start, tz=UTC)


def test_run_now_queues_one_run_per_active_region_on_its_queue(test_broker, make_region, make_probe):
    lagos, london, closed = make_region(), make_region(), make_region(active=False)
    probe = make_probe(regions=[lagos, london, closed])
    other = make_probe(regions=[lagos])
    make_probe(regions=[london])  # not asked for
    before = datetime.now(UTC)
    assert run_now([probe.id, other.id]) == 3
    after = datetime.now(UTC)

    assert test_broker.llen(region_queue(closed.slug)) == 0
    at_lagos = queued_messages(test_broker, region_queue(lagos.slug))
    at_london = queued_messages(test_broker, region_queue(london.slug))
    assert sorted(m["probe_id"] for m in at_lagos) == sorted([probe.id, other.id])
    assert [m["probe_id"] for m in at_london] == [probe.id]
    for message in at_lagos + at_london:
        assert message["region"] in (lagos.slug, london.slug)
        assert message["region_id"] == (lagos.id if message["region"] == lagos.slug else london.id)
        assert before <= datetime.fromisoformat(message["scheduled_for"]) <= after


def test_run_now_sends_nothing_for_a_probe_without_active_regions(test_broker, make_region, make_probe):
    closed = make_region(active=False)
    probe = make_probe(regions=[closed])
    assert run_now([probe.id]) == 0
    assert test_broker.dbsize() == 0
