"""The scheduler's hourly probes.ensure_partitions makes today's partition and LATENCY_PARTITIONS_AHEAD_DAYS ahead,
so ingest's steady state never creates one; `manage.py partitions --ensure` does the same and lists them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command

from probes import partitions
from probes.fleet.maintenance import central_token
from probes.tasks import ensure_partitions


def days_from(today, n: int) -> set:
    return {today + timedelta(days=d) for d in range(n)}


@pytest.mark.django_db
def test_the_task_makes_today_and_the_days_ahead(settings):
    settings.LATENCY_PARTITIONS_AHEAD_DAYS = 3
    assert any(entry["task"] == "probes.ensure_partitions" for entry in settings.CELERY_BEAT_SCHEDULE.values())
    later = datetime.now(UTC) + timedelta(days=40)
    with time_machine.travel(later, tick=False):
        made = ensure_partitions.apply(kwargs={"token": central_token("probes.ensure_partitions")}).get()
    # Both tables' days: raw measurements' and real users' observations'.
    assert made == 2 * 4
    for spec in (partitions.MEASUREMENTS, partitions.OBSERVATIONS):
        days = partitions.existing_days(spec)
        assert days_from(later.date(), 4) <= days and later.date() + timedelta(days=4) not in days


@pytest.mark.django_db
def test_the_task_refuses_an_unsigned_message():
    later = datetime.now(UTC) + timedelta(days=40)
    with time_machine.travel(later, tick=False):
        assert ensure_partitions.apply(kwargs={"token": "forged"}).get() is None
    assert later.date() not in partitions.existing_days(partitions.MEASUREMENTS)


@pytest.mark.django_db
def test_the_command_ensures_and_lists(settings):
    settings.LATENCY_PARTITIONS_AHEAD_DAYS = 2
    later = datetime.now(UTC) + timedelta(days=50)
    out = StringIO()
    with time_machine.travel(later, tick=False):
        call_command("partitions", "--ensure", stdout=out)
    printed = out.getvalue()
    assert "created 6 partitions" in printed
    for spec in (partitions.MEASUREMENTS, partitions.OBSERVATIONS):
        for day in days_from(later.date(), 3):
            assert spec.day_name(day) in printed
        assert spec.default_name in printed
