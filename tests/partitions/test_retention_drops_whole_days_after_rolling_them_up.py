"""Retention drops the day partitions wholly past LATENCY_RETENTION_DAYS, never deleting from a day partition, and
only after every hour the day's rows started in is rolled up: the period reads the same afterwards, from rollups."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from django.db import connection

from probes import partitions, readings
from probes.models import HourlyRollup, Measurement, RollupHour
from probes.readings.selection import Selection
from probes.rollups import floor_hour, prune_raw, rebuild_hour
from tests.factories import MeasurementFactory, ProbeFactory, RegionFactory

SPEC = partitions.MEASUREMENTS


def refuse_deletes(day) -> None:
    """A DELETE on the day's partition fails loudly; dropping the table does not fire it."""
    with connection.cursor() as cur:
        cur.execute(
            "CREATE OR REPLACE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'a row was deleted from a day partition'; END $$"
        )
        cur.execute(
            f"CREATE TRIGGER no_delete BEFORE DELETE ON {SPEC.day_name(day)} "
            "FOR EACH ROW EXECUTE FUNCTION refuse_delete()"
        )


def deleted_from(table: str) -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_force_next_flush()")
    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_clear_snapshot()")
        cur.execute("SELECT n_tup_del FROM pg_stat_user_tables WHERE relname = %s", [table])
        return cur.fetchone()[0]


def test_old_days_are_dropped_whole_and_read_the_same(fresh_days, settings):
    settings.LATENCY_RETENTION_DAYS = 30
    now = datetime.now(UTC)
    cutoff = floor_hour(now - timedelta(days=30))
    old = [cutoff.date() - timedelta(days=3), cutoff.date() - timedelta(days=2)]
    kept = cutoff.date()
    partitions.ensure_days(SPEC, [*old, kept])
    region = RegionFactory()
    probe = ProbeFactory(regions=[region])
    midnight = datetime.combine(old[0], datetime.min.time(), tzinfo=UTC)
    slots = [midnight + timedelta(minutes=50 * n) for n in range(2 * 24 * 60 // 50)]
    # Late starts too: the last slots of a day start in the next day's first hour.
    Measurement.objects.bulk_create(
        [
            MeasurementFactory.build(
                probe=probe,
                region=region,
                scheduled_for=slot,
                started_at=slot + timedelta(minutes=n % 40),
                ttft_ms=100.0 + n,
            )
            for n, slot in enumerate(slots)
        ]
    )
    # The kept day's first slot, started before the cut (a worker's clock a little ahead): it stays until its
    # whole day can go.
    kept_midnight = datetime.combine(kept, datetime.min.time(), tzinfo=UTC)
    straddler = MeasurementFactory(
        probe=probe,
        region=region,
        scheduled_for=kept_midnight + timedelta(minutes=1),
        started_at=kept_midnight - timedelta(minutes=2),
    )
    for day in old:
        refuse_deletes(day)
    per_hour = Counter(floor_hour(slot + timedelta(minutes=n % 40)) for n, slot in enumerate(slots))
    # Some hours rolled up already (the schedule's work), the others left for retention to do first.
    for hour in sorted(per_hour)[::3]:
        rebuild_hour(hour)
    period = Selection(
        target_ids=[probe.target_id], since=midnight - timedelta(hours=1), until=cutoff - timedelta(minutes=2)
    )
    before = readings.summary(period)

    dropped = prune_raw(now)

    assert dropped == len(slots)
    assert partitions.existing_days(SPEC) >= {kept} and not partitions.existing_days(SPEC) & set(old)
    assert list(Measurement.objects.values_list("id", flat=True)) == [straddler.id]
    assert deleted_from(SPEC.day_name(kept)) == 0
    assert set(RollupHour.objects.filter(hour__in=per_hour).values_list("hour", flat=True)) == set(per_hour)
    built = Counter()
    for hour, samples in HourlyRollup.objects.filter(hour__in=per_hour).values_list("hour", "samples"):
        built[hour] += samples
    assert built == per_hour
    after = readings.summary(period)
    assert [(row["slug"], row["samples"]) for row in after] == [(row["slug"], row["samples"]) for row in before]
    # Read by whole hours: the last one holds the straddler too, unless the cut is the kept day's midnight (a run
    # between 00:00 and 01:00 UTC), which puts the period's end two minutes before midnight, at the straddler.
    straddler_read = straddler.started_at < period.until
    assert sum(row["samples"] for row in after) == len(slots) + straddler_read
