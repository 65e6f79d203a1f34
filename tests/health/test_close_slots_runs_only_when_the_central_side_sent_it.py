"""The probes.close_slots task runs only with the central scheduler's fresh signature: without it,
or with a forged one, nothing is recorded and the refusal is kept as a dead letter with the reason.
The beat sends it every minute to the maintenance queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from probes.fleet.maintenance import central_token
from probes.models import DeadLetter, MissedRun, Probe, Region
from probes.tasks import close_slots
from tests.factories import ProbeFactory, RegionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def overdue():
    """A probe whose region has had no worker for an hour."""
    region = RegionFactory()
    probe = ProbeFactory(regions=[region], interval_seconds=60, timeout_seconds=10.0)
    Probe.objects.filter(id=probe.id).update(updated_at=timezone.now() - timedelta(hours=1))
    Region.objects.filter(id=region.id).update(updated_at=timezone.now() - timedelta(hours=1))
    return probe


def test_with_the_central_signature_the_task_records_missed_runs(overdue):
    assert close_slots(token=central_token("probes.close_slots")) > 0
    assert MissedRun.objects.filter(probe=overdue).exists()
    assert not DeadLetter.objects.exists()


@pytest.mark.parametrize(
    ("token", "words"),
    [
        (lambda: None, "without the central signature"),
        (lambda: "forged:token", "bad signature"),
        # Signed when the test runs, not when it is collected: a signature made at collection is minutes old
        # by the time a long suite reaches it, and would be refused as stale instead.
        (lambda: central_token("probes.prune"), "signature for another task"),
    ],
    ids=["missing", "forged", "another-task"],
)
def test_without_a_valid_signature_nothing_is_recorded_and_the_refusal_is_kept(overdue, token, words):
    assert close_slots(token=token()) is None
    assert not MissedRun.objects.exists()
    [letter] = DeadLetter.objects.all()
    assert words in letter.reason and "probes.close_slots" in letter.reason


def test_the_beat_sends_it_every_minute_to_the_maintenance_queue():
    entry = next(e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "probes.close_slots")
    assert entry["schedule"] == 60.0
    assert settings.CELERY_TASK_ROUTES["probes.close_slots"] == {"queue": "maintenance"}
    assert close_slots.time_limit and close_slots.expires
