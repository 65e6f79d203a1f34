"""Real users' observations live in daily partitions of observed_at too: the store makes a late call's day, and
retention drops the days wholly past LATENCY_RETENTION_DAYS, rows left in the default partition deleted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes import partitions
from probes.models import Observation, ObservationRollup
from probes.realusers.store import record
from probes.realusers.types import Observed
from probes.rollups.prune import prune_real_users
from tests.factories import IngestSourceFactory, ObservationFactory
from tests.partitions.conftest import partition_of

SPEC = partitions.OBSERVATIONS


@pytest.mark.django_db
def test_the_store_makes_a_late_calls_day():
    source = IngestSourceFactory()
    when = datetime.now(UTC).replace(microsecond=0) - timedelta(days=9)
    assert when.date() not in partitions.existing_days(SPEC)

    record(source.id, [Observed(kind="span", observed_at=when, host="api.openai.com", model="gpt-4o", total_ms=900.0)])

    row = Observation.objects.get()
    assert partition_of(SPEC.table, row.id) == SPEC.day_name(when.date())
    assert ObservationRollup.objects.get().samples == 1


@pytest.mark.django_db
def test_retention_drops_old_days_whole(settings):
    settings.LATENCY_RETENTION_DAYS = 30
    now = datetime.now(UTC)
    old = (now - timedelta(days=33)).date()
    partitions.ensure_days(SPEC, [old])
    at = datetime.combine(old, datetime.min.time(), tzinfo=UTC)
    source = IngestSourceFactory()
    ObservationFactory.create_batch(3, source=source, observed_at=at + timedelta(hours=5))
    # No partition for a call older still (the store makes none past retention): the default keeps it.
    straggler = ObservationFactory(source=source, observed_at=at - timedelta(days=2))
    recent = ObservationFactory(source=source, observed_at=now - timedelta(days=1))
    assert partition_of(SPEC.table, straggler.id) == SPEC.default_name

    deleted = prune_real_users(now)

    assert deleted["observations"] == 4
    assert old not in partitions.existing_days(SPEC)
    assert list(Observation.objects.values_list("id", flat=True)) == [recent.id]
