"""A traffic mix (probes.readings.mix): every target ranked by the
percentiles of the mixture its users would meet (each region's values at
that region's share), never by an average of per-region percentiles; the
share of the mix without data said per target; the fiber floor of the mix
beside it."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from probes import readings
from probes.geo import EARTH_RADIUS_KM, path_floor_ms
from probes.models import Measurement
from probes.readings import BadParameter, Selection
from probes.readings.mix import mixture_percentile
from probes.rollups import HOUR, floor_hour, rebuild_range
from tests.factories import spread_measurements

# 10,000 km along the equator from (0, 0): a 100 ms round trip in fiber.
LON_10000_KM = math.degrees(10_000 / EARTH_RADIUS_KM)


@pytest.fixture
def lagos(make_region):
    return make_region(slug="mix-lagos", name="Lagos", city="Lagos", latitude=0.0, longitude=0.0)


@pytest.fixture
def london(make_region):
    return make_region(slug="mix-london", name="London", city="London", latitude=0.0, longitude=LON_10000_KM)


def last_hour(now) -> Selection:
    return Selection(since=now - timedelta(hours=1), until=now, window="1h")


def values(probe, region, now, *ttfts: float, **fixed) -> None:
    """One measurement per TTFT given, inside the last hour."""
    for i, ttft in enumerate(ttfts):
        start = now - timedelta(minutes=50 - i % 40, seconds=i)
        spread_measurements(probe, region, start, start + timedelta(seconds=1), 1, seed=i, ttft_ms=ttft, **fixed)


def by_target(rows) -> dict[str, dict]:
    return {row["target"]: row for row in rows}


def test_a_mix_of_two_regions_ranks_targets_by_the_mixtures_percentile_not_the_mean_of_percentiles(
    lagos, london, make_target, make_probe, now
):
    # "Split" is fast for Lagos (60 % of the users) and slow for London; the
    # mean of its two medians (0.6 * 100 + 0.4 * 2000 = 860 ms) is worse than
    # "Even"'s 600 ms, but the median user of the mix waits 100 ms with it.
    split = make_probe(target=make_target(name="Split"), regions=[lagos, london])
    even = make_probe(target=make_target(name="Even"), regions=[lagos, london])
    values(split, lagos, now, *[100.0] * 5)
    values(split, london, now, *[2000.0] * 20)
    values(even, lagos, now, *[600.0] * 8)
    values(even, london, now, *[600.0] * 3)

    rows = readings.mix({lagos.id: 60, london.id: 40}, last_hour(now))

    assert [row["target"] for row in rows] == ["Split", "Even"]
    got = by_target(rows)
    assert (got["Split"]["p50"], got["Split"]["p95"]) == (100.0, 2000.0)
    assert (got["Even"]["p50"], got["Even"]["p95"]) == (600.0, 600.0)
    # London's 20 values do not outweigh Lagos's 5: shares weigh, not sample counts.
    assert got["Split"]["samples"] == 25 and got["Split"]["coverage"] == 1.0 and got["Split"]["complete"]
    assert [row["rank"] for row in rows] == [1, 2]


def test_only_the_ratio_of_the_shares_matters(lagos, london, make_probe, now):
    probe = make_probe(regions=[lagos, london])
    values(probe, lagos, now, 100.0, 120.0, 140.0)
    values(probe, london, now, 500.0, 700.0)
    f = last_hour(now)
    as_percent = readings.mix({lagos.id: 60, london.id: 40}, f)
    as_users = readings.mix({lagos.id: 3000, london.id: 2000}, f)
    assert as_percent == as_users
    shares = readings.mix_shares({lagos.id: 3, london.id: 2})
    assert [(s["slug"], s["share"]) for s in shares] == [("mix-lagos", 0.6), ("mix-london", 0.4)]


def test_a_mix_of_one_region_reads_what_the_region_alone_reads(lagos, london, make_probe, now):
    probe = make_probe(regions=[lagos, london])
    spread_measurements(probe, lagos, now - timedelta(minutes=50), now, 200, seed=3, median=250.0, fail_every=9)
    spread_measurements(probe, london, now - timedelta(minutes=50), now, 50, seed=4, median=900.0)
    f = Selection(since=now - timedelta(hours=1), until=now, window="1h", percentile=0.9)
    # London at 0 is not part of the mix: it neither covers nor weighs.
    (row,) = readings.mix({lagos.id: 1, london.id: 0}, f)
    (alone,) = readings.ranking(lagos.slug, f)
    for key in ("samples", "errors", "error_rate", "p50", "p95", "value"):
        assert row[key] == alone[key], key
    assert [r["slug"] for r in row["regions"]] == ["mix-lagos"]


def test_the_mixture_percentile_is_the_nearest_rank_of_a_region_alone_and_weighs_regions_by_share():
    points = [(float(v), 1) for v in (5, 1, 4, 2, 3)]
    assert [mixture_percentile([(1.0, points)], q) for q in (0, 0.2, 0.21, 0.5, 0.95, 1)] == [1, 1, 2, 3, 5, 5]
    # 70 % of the users meet 10 ms, 30 % meet 50 ms, whatever the counts.
    parts = [(0.7, [(10.0, 3)]), (0.3, [(50.0, 1000)])]
    assert mixture_percentile(parts, 0.7) == 10.0
    assert mixture_percentile(parts, 0.71) == 50.0
    # Weights are read relative to each other: the parts given make the whole.
    assert mixture_percentile([(0.2, [(10.0, 1)]), (0.2, [(30.0, 1)])], 0.5) == 10.0
    assert mixture_percentile([(0.5, [])], 0.5) is None


def test_a_region_without_data_lowers_coverage_and_ranks_the_target_last(lagos, london, make_target, make_probe, now):
    # "Partial" is the fastest where it is measured, but nobody measures it
    # from London: it does not get to pass for a target serving the whole mix.
    partial = make_probe(target=make_target(name="Partial"), regions=[lagos])
    whole = make_probe(target=make_target(name="Whole"), regions=[lagos, london])
    make_target(name="Unprobed")
    values(partial, lagos, now, 50.0, 60.0)
    values(whole, lagos, now, 400.0)
    values(whole, london, now, 800.0)
    # A failed call from London is a sample without a TTFT: still no data.
    spread_measurements(partial, london, now - timedelta(minutes=9), now, 1, seed=1, fail_every=1)

    rows = readings.mix({lagos.id: 75, london.id: 25}, last_hour(now))

    assert [row["target"] for row in rows] == ["Whole", "Partial", "Unprobed"]
    got = by_target(rows)
    assert got["Whole"]["coverage"] == 1.0 and got["Whole"]["missing"] == []
    assert got["Partial"]["coverage"] == pytest.approx(0.75) and not got["Partial"]["complete"]
    assert got["Partial"]["missing"] == ["London"]
    # The figures are the covered part's, said as such (coverage), not renormalised silently.
    assert got["Partial"]["p50"] == 50.0 and got["Partial"]["samples"] == 3
    assert [(r["name"], r["has_data"], r["samples"]) for r in got["Partial"]["regions"]] == [
        ("Lagos", True, 2),
        ("London", False, 1),
    ]
    assert got["Unprobed"]["coverage"] == 0 and got["Unprobed"]["p50"] is None
    assert got["Unprobed"]["missing"] == ["Lagos", "London"]


def test_the_fiber_floor_of_a_mix_is_the_percentile_of_its_regions_floors_and_the_tax_is_p50_above_it(
    lagos, london, make_target, make_probe, now
):
    # The target sits in Lagos: 0 ms from there, 100 ms (round trip) from London.
    target = make_target(name="In Lagos", location_name="Lagos", latitude=0.0, longitude=0.0)
    probe = make_probe(target=target, regions=[lagos, london])
    values(probe, lagos, now, 30.0, 30.0)
    values(probe, london, now, 180.0, 180.0)
    far = path_floor_ms(0.0, LON_10000_KM, 0.0, 0.0)
    assert far == pytest.approx(100.0)
    f = last_hour(now)

    (mostly_lagos,) = readings.mix({lagos.id: 60, london.id: 40}, f)
    assert [r["floor_ms"] for r in mostly_lagos["regions"]] == [0.0, far]
    assert (mostly_lagos["floor_p50"], mostly_lagos["floor_p95"]) == (0.0, far)
    assert mostly_lagos["tax_ms"] == 30.0

    (mostly_london,) = readings.mix({lagos.id: 40, london.id: 60}, f)
    assert (mostly_london["floor_p50"], mostly_london["floor_p95"]) == (far, far)
    assert mostly_london["tax_ms"] == pytest.approx(180.0 - far)


def test_a_target_without_a_location_has_no_floor_and_an_incomplete_mix_no_tax(
    lagos, london, make_target, make_probe, now
):
    nowhere = make_probe(target=make_target(name="Nowhere", latitude=None, longitude=None), regions=[lagos])
    somewhere = make_probe(target=make_target(name="Somewhere", latitude=0.0, longitude=0.0), regions=[lagos])
    values(nowhere, lagos, now, 100.0)
    values(somewhere, lagos, now, 100.0)
    got = by_target(readings.mix({lagos.id: 1, london.id: 1}, last_hour(now)))
    assert got["Nowhere"]["floor_p50"] is got["Nowhere"]["floor_p95"] is got["Nowhere"]["tax_ms"] is None
    assert [r["floor_ms"] for r in got["Nowhere"]["regions"]] == [None, None]
    # The floor is the whole mix's; a tax against it needs the whole mix measured.
    assert got["Somewhere"]["floor_p50"] == 0.0 and got["Somewhere"]["tax_ms"] is None


def test_tokens_per_second_ranks_the_fastest_stream_first_at_short_and_long_windows(
    lagos, london, make_target, make_probe, now
):
    quick = make_probe(target=make_target(name="Quick stream"), regions=[lagos, london])
    slow = make_probe(target=make_target(name="Slow stream"), regions=[lagos, london])
    for probe, lagos_tps, london_tps in ((quick, 90.0, 30.0), (slow, 40.0, 40.0)):
        values(probe, lagos, now, 100.0, 100.0, tokens_per_s=lagos_tps)
        values(probe, london, now, 100.0, tokens_per_s=london_tps)
    shares = {lagos.id: 3, london.id: 1}

    raw = readings.mix(shares, Selection(since=now - timedelta(hours=1), until=now, metric="tokens_per_s"))
    assert [(r["target"], r["p50"]) for r in raw] == [("Quick stream", 90.0), ("Slow stream", 40.0)]

    # Tokens per second has a histogram in the rollups too: percentiles of
    # the mixture at every window, within the histogram's 2 % buckets.
    long = readings.mix(shares, Selection(since=now - timedelta(days=7), until=now, metric="tokens_per_s"))
    assert [r["target"] for r in long] == ["Quick stream", "Slow stream"]
    assert by_target(long)["Quick stream"]["p50"] == pytest.approx(90.0, rel=0.02)
    assert by_target(long)["Slow stream"]["p50"] == pytest.approx(40.0, rel=0.02)


def test_a_long_window_reads_the_mixture_from_rollups_within_the_histograms_accuracy(lagos, london, make_probe, now):
    probe = make_probe(regions=[lagos, london])
    current = floor_hour(now)
    for k in range(9):
        hour = current - HOUR * (9 - k)
        spread_measurements(probe, lagos, hour, hour + HOUR, 30, seed=k, median=200.0)
        spread_measurements(probe, london, hour, hour + HOUR, 10, seed=50 + k, median=1500.0)
    rebuild_range(current - 9 * HOUR, current)
    f = Selection(since=current - 9 * HOUR, until=current, percentile=0.9)
    assert not f.raw_only
    (row,) = readings.mix({lagos.id: 70, london.id: 30}, f)

    def exact(region):
        rows = Measurement.objects.filter(region=region, started_at__gte=f.since, started_at__lt=f.until)
        return [(v, 1) for v in rows.values_list("ttft_ms", flat=True)]

    parts = [(0.7, exact(lagos)), (0.3, exact(london))]
    for key, q in (("p50", 0.5), ("p95", 0.95), ("value", 0.9)):
        want = mixture_percentile(parts, q)
        assert abs(row[key] - want) <= 0.01 * want, (key, row[key], want)
    # Read from the rollups indeed: the same figures once the raw rows are gone.
    Measurement.objects.filter(started_at__lt=current).delete()
    assert readings.mix({lagos.id: 70, london.id: 30}, f) == [row]


@pytest.mark.parametrize(
    "shares, message",
    [
        ({"lagos": -1.0}, "a number of 0 or more"),
        ({"lagos": math.nan}, "a number of 0 or more"),
        ({"lagos": 0.0, "london": 0.0}, "at least one region with a share above 0"),
        ({}, "at least one region with a share above 0"),
    ],
)
def test_a_mix_that_weighs_nothing_is_refused(lagos, london, now, shares, message):
    ids = {"lagos": lagos.id, "london": london.id}
    with pytest.raises(BadParameter, match=message) as refused:
        readings.mix({ids[k]: v for k, v in shares.items()}, last_hour(now))
    assert refused.value.param == "share"


def test_a_mix_naming_an_unknown_region_is_refused(lagos, now):
    with pytest.raises(BadParameter, match="unknown region id 987654"):
        readings.mix({lagos.id: 1, 987654: 1}, last_hour(now))
