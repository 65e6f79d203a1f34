"""Great-circle distances and the fiber round-trip floor they imply."""

import math

import pytest

from probes.geo import EARTH_RADIUS_KM, fiber_floor_ms, great_circle_km, latency_tax_ms, path_floor_ms

LONDON = (51.5074, -0.1278)
NEW_YORK = (40.7128, -74.0060)
LAGOS = (6.5244, 3.3792)
ASHBURN = (39.0438, -77.4874)


def test_london_to_new_york_is_about_5570_km():
    assert great_circle_km(*LONDON, *NEW_YORK) == pytest.approx(5570, rel=0.01)


def test_lagos_to_ashburn_is_within_2_percent_of_the_geodesic():
    # 8,769 km is the WGS-84 ellipsoid distance (Vincenty) between these coordinates; a sphere should be
    # within half a percent of it, so 2% leaves room for any reasonable choice of city centre.
    assert great_circle_km(*LAGOS, *ASHBURN) == pytest.approx(8769, rel=0.02)


def test_distance_is_the_same_in_both_directions():
    assert great_circle_km(*LAGOS, *ASHBURN) == pytest.approx(great_circle_km(*ASHBURN, *LAGOS))


def test_same_point_is_zero_km():
    assert great_circle_km(*LONDON, *LONDON) == 0.0


def test_antipodes_are_half_the_circumference_apart():
    assert great_circle_km(0, 0, 0, 180) == pytest.approx(20015, rel=0.001)
    assert great_circle_km(45, 90, -45, -90) == pytest.approx(math.pi * EARTH_RADIUS_KM)


def test_fiber_floor_of_10000_km_is_100_ms():
    assert fiber_floor_ms(10_000) == pytest.approx(100.0)


def test_path_floor_is_the_fiber_floor_of_the_distance():
    assert path_floor_ms(*LONDON, *NEW_YORK) == pytest.approx(fiber_floor_ms(great_circle_km(*LONDON, *NEW_YORK)))


def test_latency_tax_is_what_was_measured_beyond_the_floor():
    assert latency_tax_ms(120.0, 55.7) == pytest.approx(64.3)
    assert latency_tax_ms(None, 55.7) is None


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((91, 0, 0, 0), "lat1"),
        ((0, 0, -90.5, 0), "lat2"),
        ((0, 180.1, 0, 0), "lon1"),
        ((0, 0, 0, float("nan")), "lon2"),
    ],
)
def test_out_of_range_coordinate_raises_naming_the_argument(args, name):
    with pytest.raises(ValueError, match=name):
        great_circle_km(*args)


def test_negative_distance_has_no_floor():
    with pytest.raises(ValueError, match="distance_km"):
        fiber_floor_ms(-1)
