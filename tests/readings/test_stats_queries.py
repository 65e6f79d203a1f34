"""The dashboard's read queries: percentiles as exact as the raw rows allow
whether a window is read raw or from rollups, counts exact, the physics of
the floor and tax, phases that stack up, and parameters refused by name."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from latency.forms import dashboard_filters as parse_filters
from probes import readings
from probes.engine.result import Measurement as EngineResult
from probes.geo import EARTH_RADIUS_KM, path_floor_ms
from probes.histogram import exact_percentile
from probes.ingest import store
from probes.models import Measurement, RollupHour
from probes.readings import BadParameter, Selection
from probes.readings.plan import complete_days, coverage
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements

QUANTILES = (0.5, 0.9, 0.95, 0.99)
# 10,000 km along the equator from (0, 0).
LON_10000_KM = math.degrees(10_000 / EARTH_RADIUS_KM)


@pytest.fixture
def regions(make_region):
    return [
        make_region(slug="near", name="Near", latitude=0.0, longitude=0.0),
        make_region(slug="far", name="Far", latitude=0.0, longitude=LON_10000_KM),
    ]


@pytest.fixture
def target(make_target):
    return make_target(location_name="Gulf of Guinea", latitude=0.0, longitude=0.0)


@pytest.fixture
def probe(make_probe, regions, target):
    return make_probe(target=target, regions=regions)


def raw_rows(f: Selection, region, target=None):
    qs = Measurement.objects.filter(region=region, started_at__gte=f.since, started_at__lt=f.until)
    return qs.filter(target=target) if target is not None else qs


def values_of(rows, column):
    return [v for v in rows.values_list(column, flat=True) if v is not None]


def assert_close(got, exact, rel=0.02):
    assert got is not None
    assert abs(got - exact) <= rel * abs(exact), (got, exact)


def by_slug(rows):
    return {row["slug"]: row for row in rows}


def fill_hours(probe, regions, first_hour, hours, now, *, per_hour=40, fail_every=7):
    for k in range(hours):
        hour = first_hour + HOUR * k
        end = min(hour + HOUR, now)
        for i, region in enumerate(regions):
            spread_measurements(
                probe, region, hour, end, per_hour, seed=k * 10 + i, median=150.0 * (i + 1), fail_every=fail_every
            )


def assert_summary_matches_raw(f: Selection, regions):
    summary = by_slug(readings.summary(f))
    table = {row["region_slug"]: row for row in readings.table(f)}
    hists = readings.distribution(f)
    for region in regions:
        rows = raw_rows(f, region)
        row = summary[region.slug]
        assert row["samples"] == rows.count() == table[region.slug]["samples"]
        assert row["errors"] == rows.exclude(outcome="ok").count() == table[region.slug]["errors"]
        assert row["error_rate"] == pytest.approx(row["errors"] / row["samples"])
        exact = values_of(rows, f"{f.metric}_ms")
        assert_close(row["p50"], exact_percentile(exact, 0.5))
        assert_close(row["p95"], exact_percentile(exact, 0.95))
        assert_close(row["value"], exact_percentile(exact, f.percentile))
        assert_close(row["connect_p50"], exact_percentile(values_of(rows, "connect_ms"), 0.5))
        assert (table[region.slug]["p50"], table[region.slug]["p95"]) == (row["p50"], row["p95"])
        for q in QUANTILES:
            assert_close(hists[region.slug].percentile(q), exact_percentile(exact, q))


# Percentiles and counts --------------------------------------------------------


def test_a_raw_window_gives_percentiles_within_two_percent_of_exact_and_exact_counts(probe, regions, now):
    for i, region in enumerate(regions):
        spread_measurements(
            probe, region, now - timedelta(minutes=55), now, 300, seed=i, median=200.0 * (i + 1), fail_every=9
        )
        # Outside the window: must not count.
        spread_measurements(
            probe, region, now - timedelta(hours=3), now - timedelta(hours=2), 50, seed=50 + i, median=5000.0
        )
    f = parse_filters({"target": [str(probe.target_id)], "window": ["1h"], "percentile": ["p90"]}, now)
    assert f.raw_only
    assert_summary_matches_raw(f, regions)


def test_a_long_window_is_read_from_rollups_with_the_same_accuracy_even_after_raw_rows_are_gone(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, current - 10 * HOUR, 11, now)
    rebuild_range(current - 10 * HOUR, current)
    # Starts inside an hour: that hour's share comes from raw rows.
    f = Selection(
        target_ids=[probe.target_id], since=current - 10 * HOUR + timedelta(minutes=17), until=now, percentile=0.99
    )
    assert not f.raw_only
    plan = coverage(f.since, f.until)
    assert plan.hours == [current - HOUR * k for k in range(9, 0, -1)]
    assert_summary_matches_raw(f, regions)

    # Pruning the rolled-up hours' raw rows leaves every number as it was:
    # they really are read from the rollups.
    before = readings.summary(f), readings.table(f), readings.phases(f)
    Measurement.objects.filter(started_at__gte=current - 9 * HOUR, started_at__lt=current).delete()
    assert (readings.summary(f), readings.table(f), readings.phases(f)) == before


def test_a_late_row_in_a_rolled_up_hour_is_read_from_raw_rows_until_the_hour_is_rebuilt(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, current - 8 * HOUR, 8, now, fail_every=0)
    rebuild_range(current - 8 * HOUR, current)
    f = Selection(target_ids=[probe.target_id], since=current - 8 * HOUR, until=current)
    before = by_slug(readings.summary(f))["near"]["samples"]

    late_hour = current - 5 * HOUR
    result = EngineResult(started_at=(late_hour + timedelta(minutes=30, seconds=1)).isoformat(), ttft_ms=54_321.0)
    payload = {
        "probe_id": probe.id,
        "target_id": probe.target_id,
        "region_id": regions[0].id,
        "scheduled_for": (late_hour + timedelta(minutes=30, seconds=7)).isoformat(),
        "worker": "late",
        "result": result.to_dict(),
    }
    assert len(store([payload])) == 1
    assert not RollupHour.objects.filter(hour=late_hour).exists()

    assert by_slug(readings.summary(f))["near"]["samples"] == before + 1
    assert readings.distribution(f)["near"].percentile(1.0) == pytest.approx(54_321.0, rel=0.02)
    assert_summary_matches_raw(f, regions)

    rebuild_range(late_hour, late_hour + HOUR)
    assert RollupHour.objects.filter(hour=late_hour).exists()
    assert by_slug(readings.summary(f))["near"]["samples"] == before + 1
    assert_summary_matches_raw(f, regions)


def merges(queries) -> int:
    """Statements reading rollups' histograms: expanded in SQL, or (the time series) read as stored to merge."""
    return sum("get_byte(" in q["sql"] or "string_agg(r." in q["sql"] for q in queries.captured_queries)


def test_merged_rollups_are_reused_until_one_of_their_hours_is_rebuilt(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, current - 72 * HOUR, 73, now, per_hour=4)
    rebuild_range(current - 72 * HOUR, current)
    # Long enough for hour-sized time-series buckets, read from rollups too.
    # 71 hours, not 72: 72 would start on a midnight whenever the test runs
    # between 00:00 and 01:00 UTC, leaving whole days and no loose hours.
    f = Selection(target_ids=[probe.target_id], since=current - 71 * HOUR, until=now)
    assert readings.bucket_size(f) == HOUR
    readers = (readings.summary, readings.table, readings.phases, readings.distribution, readings.series)

    with CaptureQueriesContext(connection) as first:
        answers = [read(f) for read in readers]
    with CaptureQueriesContext(connection) as again:
        assert [read(f) for read in readers] == answers
    # Complete days and loose hours are merged apart; the time series merges
    # its hour-sized buckets in one query.
    days, hours = complete_days(coverage(f.since, f.until).hours)
    assert days and hours
    assert merges(first) == 2 * (len(readers) - 1) + 1
    assert merges(again) == 0

    # A row written behind the ingest's back leaves the hour marked: only a
    # rebuild, which stamps the mark anew, brings it into the readings.
    spread_measurements(probe, regions[0], current - 20 * HOUR + timedelta(seconds=7), current - 19 * HOUR, 1, seed=5)
    assert by_slug(readings.summary(f))["near"]["samples"] == by_slug(answers[0])["near"]["samples"]
    rebuild_range(current - 20 * HOUR, current - 19 * HOUR)
    with CaptureQueriesContext(connection) as rebuilt:
        assert by_slug(readings.summary(f))["near"]["samples"] == by_slug(answers[0])["near"]["samples"] + 1
        assert sum(row["samples"] for row in readings.series(f) if row["region"] == "near") == (
            by_slug(answers[0])["near"]["samples"] + 1
        )
    assert merges(rebuilt) == 2


# Floor and tax -------------------------------------------------------------------


def test_the_floor_is_the_round_trip_over_fiber_and_the_tax_is_connect_above_it(
    probe, regions, now, make_target, make_probe
):
    for region in regions:
        spread_measurements(probe, region, now - timedelta(minutes=30), now, 40, seed=1, connect_ms=130.0)
    f = Selection(target_ids=[probe.target_id], since=now - timedelta(hours=1), until=now)
    summary = by_slug(readings.summary(f))

    assert summary["near"]["floor_ms"] == pytest.approx(0.0, abs=1e-9)
    # 10,000 km there and back at 200 km per ms.
    assert summary["far"]["floor_ms"] == pytest.approx(100.0, rel=1e-9)
    for row in summary.values():
        assert row["connect_p50"] == pytest.approx(130.0, rel=0.01)
        assert row["tax_ms"] == pytest.approx(row["connect_p50"] - row["floor_ms"], abs=1e-9)
    assert summary["far"]["tax_ms"] == pytest.approx(30.0, abs=1.5)
    assert (summary["far"]["lat"], summary["far"]["lon"]) == (0.0, LON_10000_KM)

    # No single location to measure from: no floor, no tax.
    other = make_probe(target=make_target(latitude=10.0, longitude=10.0), regions=regions)
    both = Selection(target_ids=[probe.target_id, other.target_id], since=f.since, until=f.until)
    assert all(row["floor_ms"] is None and row["tax_ms"] is None for row in readings.summary(both))
    unplaced = make_probe(target=make_target(), regions=regions)
    alone = Selection(target_ids=[unplaced.target_id], since=f.since, until=f.until)
    assert all(row["floor_ms"] is None for row in readings.summary(alone))


def test_regions_an_enabled_probe_runs_from_are_listed_even_without_data(probe, regions, now, make_region, make_probe):
    quiet = make_region(slug="quiet", name="Quiet", latitude=10.0, longitude=20.0)
    probe.regions.add(quiet)
    disabled_only = make_region(slug="disabled-only", name="Disabled only")
    make_probe(target=probe.target, regions=[disabled_only], enabled=False)
    spread_measurements(probe, regions[0], now - timedelta(minutes=10), now, 20, seed=3)
    f = Selection(target_ids=[probe.target_id], since=now - timedelta(hours=1), until=now)

    summary = by_slug(readings.summary(f))
    assert set(summary) == {"near", "far", "quiet"}
    assert summary["near"]["samples"] == 20
    for slug in ("far", "quiet"):
        assert summary[slug]["samples"] == 0
        assert summary[slug]["p50"] is summary[slug]["value"] is summary[slug]["error_rate"] is None
    assert summary["quiet"]["floor_ms"] == pytest.approx(path_floor_ms(10.0, 20.0, 0.0, 0.0))
    assert set(readings.distribution(f)) == {"near"}
    assert [row["region"] for row in readings.phases(f)] == ["near"]


# Phases ---------------------------------------------------------------------------


def test_phase_segments_stack_up_to_the_median_total_when_every_phase_is_present(probe, regions, now):
    for i, region in enumerate(regions):
        spread_measurements(probe, region, now - timedelta(minutes=40), now, 200, seed=i)
    f = Selection(target_ids=[probe.target_id], since=now - timedelta(hours=1), until=now)
    rows = readings.phases(f)
    assert [row["region"] for row in rows] == ["far", "near"]  # by name
    for row in rows:
        region = next(r for r in regions if r.slug == row["region"])
        raw = raw_rows(f, region)
        medians, segments = row["medians"], row["segments"]
        for metric in readings.PHASE_METRICS:
            assert_close(medians[metric], exact_percentile(values_of(raw, f"{metric}_ms"), 0.5))
        assert list(segments) == list(readings.SEGMENTS)
        assert sum(segments.values()) == pytest.approx(medians["total"], rel=1e-12)
        assert segments["server_wait"] == pytest.approx(
            medians["ttfb"] - medians["dns"] - medians["connect"] - medians["tls"]
        )
        assert segments["first_token"] == pytest.approx(medians["ttft"] - medians["ttfb"])
        assert segments["streaming"] == pytest.approx(medians["total"] - medians["ttft"])


def test_phase_segments_are_never_negative_and_missing_phases_add_nothing(probe, regions, now):
    # Medians that do not add up: TTFB below DNS + connect + TLS.
    spread_measurements(
        probe,
        regions[0],
        now - timedelta(minutes=20),
        now,
        50,
        seed=1,
        dns_ms=10.0,
        connect_ms=50.0,
        tls_ms=100.0,
        ttfb_ms=120.0,
        ttft_ms=300.0,
        total_ms=1000.0,
    )
    # A warm connection to a plain-HTTP endpoint: no DNS, connect, TLS or token.
    spread_measurements(
        probe,
        regions[1],
        now - timedelta(minutes=20),
        now,
        50,
        seed=2,
        dns_ms=None,
        connect_ms=None,
        tls_ms=None,
        ttfb_ms=80.0,
        ttft_ms=None,
        ttfat_ms=None,
        total_ms=200.0,
    )
    f = Selection(target_ids=[probe.target_id], since=now - timedelta(hours=1), until=now)
    rows = {row["region"]: row for row in readings.phases(f)}

    near = rows["near"]["segments"]
    assert all(v >= 0 for v in near.values())
    assert near["server_wait"] == 0
    assert sum(near.values()) == pytest.approx(rows["near"]["medians"]["total"])
    far = rows["far"]
    assert far["medians"]["dns"] is None and far["medians"]["ttft"] is None
    assert far["segments"]["dns"] == far["segments"]["first_token"] == 0
    assert far["segments"]["server_wait"] == pytest.approx(80.0, rel=0.01)
    assert far["segments"]["streaming"] == pytest.approx(far["medians"]["total"] - far["medians"]["ttfb"])


# Time series ------------------------------------------------------------------------


def bucket_of(when: datetime, size: timedelta) -> datetime:
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return epoch + ((when - epoch) // size) * size


def assert_series_matches_raw(f: Selection, regions, size, *, rel):
    series = readings.series(f)
    got = {(row["region"], row["bucket_start"]): row for row in series}
    expected = {}
    for region in regions:
        for started, ttft in raw_rows(f, region).values_list("started_at", "ttft_ms"):
            expected.setdefault((region.slug, bucket_of(started, size)), []).append(ttft)
    assert set(got) == set(expected)
    for key, values in expected.items():
        row = got[key]
        assert row["samples"] == len(values)
        present = [v for v in values if v is not None]
        if not present:  # only failures in this bucket
            assert row["p50"] is row["p95"] is None
        elif rel == 0:
            assert (row["p50"], row["p95"]) == (exact_percentile(present, 0.5), exact_percentile(present, 0.95))
        else:
            assert_close(row["p50"], exact_percentile(present, 0.5), rel)
            assert_close(row["p95"], exact_percentile(present, 0.95), rel)
    return series


def test_time_series_of_a_short_window_are_exact_per_raw_bucket(probe, regions, now):
    for i, region in enumerate(regions):
        spread_measurements(probe, region, now - timedelta(hours=23, minutes=50), now, 400, seed=i, fail_every=5)
    f = parse_filters({"target": [str(probe.target_id)], "window": ["24h"]}, now)
    assert readings.bucket_size(f) == HOUR
    series = assert_series_matches_raw(f, regions, HOUR, rel=0)  # nothing rolled up: every bucket is raw
    assert [r["region"] for r in series] == sorted(r["region"] for r in series)
    assert all(r["bucket_start"].tzinfo is not None for r in series)


def test_time_series_of_a_long_window_merge_hourly_rollups_per_bucket(probe, regions, now):
    current = floor_hour(now)
    fill_hours(probe, regions, current - 72 * HOUR, 73, now, per_hour=12, fail_every=6)
    rebuild_range(current - 60 * HOUR, current - 2 * HOUR)  # the last two hours are not rolled up yet
    f = Selection(target_ids=[probe.target_id], since=now - timedelta(hours=72), until=now)
    assert readings.bucket_size(f) == HOUR
    series = assert_series_matches_raw(f, regions, HOUR, rel=0.02)
    # Rolled-up buckets report a histogram bucket's value, raw ones an exact sample.
    near = {row["bucket_start"]: row["p50"] for row in series if row["region"] == "near"}
    exact = set(values_of(Measurement.objects.filter(region=regions[0]), "ttft_ms"))
    assert near[current - 30 * HOUR] not in exact
    assert near[current - HOUR] in exact


@pytest.mark.parametrize(
    ("window", "since", "size"),
    [
        ("15m", None, timedelta(minutes=1)),
        ("1h", None, timedelta(minutes=2)),
        ("24h", None, HOUR),  # whole hours: rolled-up hours serve them
        ("7d", None, timedelta(hours=3)),
        ("30d", None, timedelta(hours=12)),
        ("custom", "90m", timedelta(minutes=2)),  # 1.5 min, rounded to whole minutes
        ("custom", "3h", timedelta(minutes=3)),
        ("custom", "3d", timedelta(hours=1)),  # 1.2 h, rounded to whole hours
        ("custom", "90d", timedelta(hours=36)),
        ("custom", "30m", timedelta(minutes=1)),  # never under a minute
    ],
)
def test_bucket_sizes_follow_the_window(db, window, since, size):
    params = {"window": [window]} | ({"since": [since]} if since else {})
    f = parse_filters(params, datetime(2026, 3, 1, 12, tzinfo=UTC))
    assert readings.bucket_size(f) == size


# Ranking and recent rows ---------------------------------------------------------------


def test_a_region_ranks_every_target_measured_from_it_by_median_ttft(probe, regions, now, make_probe, make_target):
    slow = make_probe(target=make_target(name="slow one"), regions=regions)
    silent = make_probe(target=make_target(name="silent one"), regions=regions)
    spread_measurements(probe, regions[0], now - timedelta(minutes=30), now, 60, seed=1, median=200.0, fail_every=10)
    spread_measurements(slow, regions[0], now - timedelta(minutes=30), now, 60, seed=2, median=2000.0)
    spread_measurements(silent, regions[1], now - timedelta(minutes=30), now, 60, seed=3, median=10.0)
    # Selection naming one target do not narrow a region's ranking.
    f = Selection(target_ids=[slow.target_id], since=now - timedelta(hours=1), until=now)

    ranking = readings.ranking("near", f)
    assert [row["target_id"] for row in ranking] == [probe.target_id, slow.target_id]
    assert [row["rank"] for row in ranking] == [1, 2]
    first = ranking[0]
    raw = Measurement.objects.filter(target=probe.target, region=regions[0])
    assert_close(first["p50"], exact_percentile(values_of(raw, "ttft_ms"), 0.5))
    assert_close(first["p95"], exact_percentile(values_of(raw, "ttft_ms"), 0.95))
    assert first["error_rate"] == pytest.approx(6 / 60)
    with pytest.raises(BadParameter) as err:
        readings.ranking("atlantis", f)
    assert err.value.param == "region"


def test_recent_measurements_are_the_newest_across_regions_and_failures_only_the_failed(
    probe, regions, now, make_probe
):
    spread_measurements(probe, regions[0], now - timedelta(hours=2), now - timedelta(hours=1), 30, seed=1, fail_every=3)
    spread_measurements(probe, regions[1], now - timedelta(minutes=50), now, 30, seed=2, fail_every=4)
    other = make_probe(regions=regions)
    spread_measurements(other, regions[0], now - timedelta(minutes=5), now, 10, seed=3, fail_every=1)

    recent = readings.recent(probe.target_id, limit=40)
    expected = list(
        Measurement.objects.filter(target=probe.target).order_by("-started_at").values_list("id", flat=True)[:40]
    )
    assert [row["id"] for row in recent] == expected
    assert {row["region"] for row in recent} == {"near", "far"}
    assert recent[0]["started_at"] > recent[-1]["started_at"]

    failures = readings.recent(probe.target_id, limit=100, failures=True)
    assert len(failures) == 10 + 7
    assert all(row["outcome"] == "timeout" for row in failures)
    assert [row["started_at"] for row in failures] == sorted((row["started_at"] for row in failures), reverse=True)
    assert readings.recent(probe.target_id, limit=3, failures=True) == failures[:3]
    with pytest.raises(BadParameter):
        readings.recent(probe.target_id, limit=0)


def test_recent_failures_can_use_the_partial_failures_index(probe, regions, now):
    spread_measurements(probe, regions[0], now - timedelta(minutes=30), now, 50, seed=1, fail_every=5)
    with connection.cursor() as cur:
        # On a table this small the planner would rather scan; forbid that
        # to learn whether the query's predicate matches the index's.
        cur.execute("SET LOCAL enable_seqscan = off")
        qs = Measurement.objects.filter(target_id=probe.target_id).exclude(outcome="ok").order_by("-started_at")
        plan = qs[:100].explain()
        cur.execute("SET LOCAL enable_seqscan = on")
    assert "meas_target_failures" in plan
    assert len(readings.recent(probe.target_id, failures=True)) == 10


# Parameters ---------------------------------------------------------------------------

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_parameters_default_to_the_last_hour_of_every_target_at_p50_ttft(db):
    f = parse_filters({}, NOW)
    assert (f.target_ids, f.region_ids, f.metric, f.percentile, f.window) == ([], [], "ttft", 0.5, "1h")
    assert (f.since, f.until) == (NOW - timedelta(hours=1), NOW)
    assert f.percentile_label == "p50"


def test_parameters_are_read_from_a_query_dict_with_repeated_values_and_blank_inputs(probe, regions):
    query = QueryDict(mutable=True)
    query.setlist("target", [str(probe.target_id), str(probe.target_id)])
    query.setlist("region", ["far", "near"])
    query.update(
        {"window": "custom", "since": "2026-02-27T00:00:00Z", "until": "", "percentile": "p99", "metric": "connect"}
    )
    f = parse_filters(query, NOW)
    assert f.target_ids == [probe.target_id]
    assert f.region_ids == [regions[1].id, regions[0].id]
    assert (f.since, f.until) == (datetime(2026, 2, 27, tzinfo=UTC), NOW)
    assert (f.percentile, f.metric, f.window) == (0.99, "connect", "custom")
    relative = parse_filters({"window": ["custom"], "since": ["36h"], "until": ["12h"], "target": ["all"]}, NOW)
    assert (relative.since, relative.until, relative.target_ids) == (
        NOW - timedelta(hours=36),
        NOW - timedelta(hours=12),
        [],
    )


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"window": ["2h"]}, "window"),
        ({"window": ["1h", "24h"]}, "window"),
        ({"percentile": ["p42"]}, "percentile"),
        ({"percentile": ["0.5"]}, "percentile"),
        ({"metric": ["latency"]}, "metric"),
        ({"target": ["abc"]}, "target"),
        ({"target": ["-1"]}, "target"),
        ({"target": ["999999999"]}, "target"),
        ({"region": ["atlantis"]}, "region"),
        ({"window": ["custom"]}, "since"),
        ({"window": ["custom"], "since": ["yesterday"]}, "since"),
        ({"window": ["custom"], "since": ["24h"], "until": ["soon"]}, "until"),
        ({"window": ["custom"], "since": ["1h"], "until": ["2h"]}, "since"),
        ({"window": ["custom"], "since": ["401d"]}, "since"),
        ({"window": ["24h"], "since": ["2h"]}, "since"),
    ],
    ids=lambda v: v if isinstance(v, str) else "&".join(f"{k}={'+'.join(x)}" for k, x in v.items()),
)
def test_a_bad_parameter_is_refused_naming_it(db, params, param):
    with pytest.raises(BadParameter) as err:
        parse_filters(params, NOW)
    assert err.value.param == param
    assert isinstance(err.value, ValueError)
    assert str(err.value)


def test_a_window_of_exactly_four_hundred_days_is_allowed(db):
    f = parse_filters({"window": ["custom"], "since": ["400d"]}, NOW)
    assert f.until - f.since == timedelta(days=400)
