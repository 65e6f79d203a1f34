"""The demo's history (devtools/demo_history.py), loaded for three demo regions: stored as raw rows through ingest's
statement, rolled up by the real builder, with busy hours slower than quiet ones, the two staged incidents in the
phase that moved, incident records the real evaluator made for them, and a 7-day window readable for every target x
region through the read package."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from devtools.demo_history import EDGE, HISTORY_WORKER, PAST_INCIDENTS, busy_share, load_history
from devtools.demo_seed import DEMO_REGIONAL_RULE_NAME, seed
from probes import partitions
from probes.alerts.models import Incident
from probes.models import Measurement, Region, RollupHour, Target
from probes.readings.window import read_window
from probes.rollup_models import HourlyRollup
from tests.devtools.demo_regions import demo_regions

# The tests of one loaded history read it without changing it: it is loaded once for them, on one xdist worker, and
# each reads it inside a transaction of its own.
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("demo_history")]

# The regions of both staged incidents, and one more.
SLUGS = ["eu-london", "ap-singapore", "eu-frankfurt"]
DAYS = 6  # both incidents (about 3 and 5 days ago) fall inside; the full week is the demo's own test


@pytest.fixture(scope="module")
def loaded(django_db_setup, django_db_blocker) -> Iterator[tuple]:
    # Committed: the load stores and rolls up on connections of its own. When the module's tests are done the
    # database is put back as it was (the rows the migrations made included: tests that run after these on this
    # worker read them), and the partitions of the history's days are dropped.
    with django_db_blocker.unblock():
        before = {spec.table: partitions.existing_days(spec) for spec in partitions.partitioned_tables()}
        as_it_was = connection.creation.serialize_db_to_string()
        regions = demo_regions(SLUGS)
        seed("http://localhost:9", regions)
        now = datetime.now(UTC)
        got = load_history(now, days=DAYS)
    yield now, got
    with django_db_blocker.unblock():
        call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
        connection.creation.deserialize_db_from_string(as_it_was)
        for spec in partitions.partitioned_tables():
            for day in partitions.existing_days(spec) - before.get(spec.table, set()):
                partitions.drop_day(spec, day)
        partitions.forget_known()


def medians(where: str, params: list, columns: tuple[str, ...] = ("dns_ms", "connect_ms", "ttfb_ms", "ttft_ms")):
    sql = ", ".join(f"percentile_cont(0.5) WITHIN GROUP (ORDER BY m.{c})" for c in columns)
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT {sql} FROM probes_measurement m JOIN probes_target t ON t.id = m.target_id "
            f"JOIN probes_region r ON r.id = m.region_id WHERE m.outcome = 'ok' AND {where}",
            params,
        )
        return dict(zip(columns, cur.fetchone(), strict=True))


def test_every_series_has_a_call_every_two_minutes_marked_as_history(loaded):
    now, got = loaded
    assert got.series == 5 * len(SLUGS)
    per_series = DAYS * 24 * 30
    assert got.rows == pytest.approx(got.series * per_series, abs=got.series)
    assert Measurement.objects.count() == got.rows
    assert set(Measurement.objects.values_list("worker", flat=True).distinct()) == {HISTORY_WORKER}
    oldest = Measurement.objects.order_by("started_at").first().started_at
    first = now.replace(microsecond=0) - timedelta(days=DAYS)  # the history's end is a whole second
    assert first <= oldest < first + timedelta(minutes=3)


def test_busy_hours_are_slower_than_quiet_ones_in_each_regions_local_time(loaded):
    for region in Region.objects.filter(slug__in=SLUGS):
        # Local solar hours from the longitude: busy 12-18, quiet 0-5.
        local = "mod((extract(hour from m.started_at) + %s / 15.0 + 24)::numeric, 24)"
        busy = medians(f"r.id = %s AND {local} >= 12 AND {local} < 18", [region.id, region.longitude, region.longitude])
        quiet = medians(f"r.id = %s AND {local} < 5", [region.id, region.longitude])
        assert busy["ttft_ms"] > quiet["ttft_ms"] * 1.1, region.slug
        # The network does not keep office hours.
        assert busy["connect_ms"] == pytest.approx(quiet["connect_ms"], rel=0.1), region.slug
    assert busy_share(np.array([15.0, 3.0]), 0.0).tolist() == pytest.approx([1.0, 0.0])


@pytest.mark.parametrize("incident", PAST_INCIDENTS, ids=lambda i: i.kind)
def test_each_staged_incident_moved_its_phase_and_the_evaluator_recorded_it(loaded, incident):
    now, got = loaded
    start, end = incident.span(now.replace(microsecond=0))
    pair = "t.name = %s AND r.slug = %s"
    during = medians(
        f"{pair} AND m.started_at >= %s AND m.started_at < %s", [incident.target, incident.region, start, end]
    )
    # The same hours a day later, when nothing happened.
    usual = medians(
        f"{pair} AND m.started_at >= %s AND m.started_at < %s",
        [incident.target, incident.region, start + timedelta(days=1), end + timedelta(days=1)],
    )
    if incident.kind == "server":
        assert during["ttft_ms"] - usual["ttft_ms"] > 0.8 * incident.extra_ms
        assert during["connect_ms"] == pytest.approx(usual["connect_ms"], rel=0.15)
    else:
        assert during["connect_ms"] - usual["connect_ms"] > 0.8 * incident.extra_ms
        assert during["ttfb_ms"] - usual["ttfb_ms"] > 1.6 * incident.extra_ms
        assert during["dns_ms"] > usual["dns_ms"] + 0.5 * incident.dns_extra_ms
    (record,) = Incident.objects.filter(target__name=incident.target, rule__name=DEMO_REGIONAL_RULE_NAME)
    assert [r.slug for r in record.regions.all()] == [incident.region]
    # Within the evaluator's passes around each edge (devtools.demo_history.EDGE), whatever hour the history ends in.
    assert start < record.opened_at <= start + EDGE
    assert end < record.resolved_at <= end + EDGE
    assert got.opened == len(PAST_INCIDENTS)


def test_old_hours_are_rolled_up_and_a_week_reads_for_every_target_and_region(loaded):
    now, _ = loaded
    old = (now - timedelta(days=4)).replace(minute=0, second=0, microsecond=0)
    assert RollupHour.objects.filter(hour=old).exists()
    assert HourlyRollup.objects.filter(hour=old).count() == 5 * len(SLUGS)
    week = read_window(now - timedelta(days=7), now, group_by=("target_id", "region_id"), metrics=("ttft",))
    pairs = {(int(t), int(r)) for (t, r), reading in week.items() if reading.samples > 0}
    targets = Target.objects.values_list("id", flat=True)
    regions = Region.objects.filter(slug__in=SLUGS).values_list("id", flat=True)
    assert pairs == {(t, r) for t in targets for r in regions}
