"""Making a late row's day waits at most partitions.LOCK_WAIT for a long read of the default partition (an
export's stream): ingest then stores the row in the default partition instead of stalling behind the read, and the
next call makes the day and moves the row there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from django.db import connection

from probes import partitions
from probes.ingest import store
from probes.models import Measurement
from tests.factories import ProbeFactory, RegionFactory, measurement_payload
from tests.partitions.conftest import partition_of

SPEC = partitions.MEASUREMENTS


def test_the_row_waits_in_the_default_and_moves_later(fresh_days, settings):
    region = RegionFactory()
    probe = ProbeFactory(regions=[region])
    slot = datetime.now(UTC).replace(microsecond=0) - timedelta(days=6)
    params = connection.get_connection_params()
    with psycopg.connect(**params) as reader:
        # A read of the whole table that cannot skip the default partition, still open.
        reader.execute("SELECT count(*) FROM probes_measurement WHERE worker = 'nobody'")

        assert len(store([measurement_payload(probe, region, slot)])) == 1

        row = Measurement.objects.get()
        assert partition_of(SPEC.table, row.id) == SPEC.default_name
        assert slot.date() not in partitions.existing_days(SPEC)

    assert partitions.ensure_days(SPEC, [slot.date()]) == [slot.date()]
    assert partition_of(SPEC.table, row.id) == SPEC.day_name(slot.date())
