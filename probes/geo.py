"""The physics of a network path: how fast a round trip could possibly be.

A measured latency only means something next to what the distance alone forces. The floor here is a lower
bound, never an estimate: real cables detour, and routers queue, so the "latency tax" above the floor is the part
a provider, a route or a region choice can actually change.
"""

from __future__ import annotations

import math

# IUGG mean Earth radius; the sphere is off from the ellipsoid by at most ~0.5%, well within what a floor needs.
EARTH_RADIUS_KM = 6371.0088
# Light in silica fiber travels at roughly c / 1.47, about 200,000 km/s, i.e. 200 km per millisecond.
FIBER_KM_PER_MS = 200.0


def _check_coordinate(name: str, value: float, limit: float) -> float:
    value = float(value)
    # Written as `not within` so NaN, which fails every comparison, is rejected too.
    if not -limit <= value <= limit:
        raise ValueError(f"{name} must be within [-{limit:g}, {limit:g}] degrees, got {value!r}")
    return value


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    lat1 = _check_coordinate("lat1", lat1, 90.0)
    lon1 = _check_coordinate("lon1", lon1, 180.0)
    lat2 = _check_coordinate("lat2", lat2, 90.0)
    lon2 = _check_coordinate("lon2", lon2, 180.0)
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlambda = math.radians(lon2 - lon1)
    # Haversine rather than the spherical law of cosines: it stays accurate for nearby points, where acos of a
    # value next to 1 loses most of its digits.
    h = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlambda / 2) ** 2
    # Rounding can push h a hair past 1 for antipodes, and asin is undefined there.
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(min(1.0, h)))


def fiber_floor_ms(distance_km: float) -> float:
    distance = float(distance_km)
    if not distance >= 0:
        raise ValueError(f"distance_km must be a non-negative number, got {distance_km!r}")
    # Round trip: a request goes out and its answer comes back over the same distance.
    return 2 * distance / FIBER_KM_PER_MS


def path_floor_ms(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    return fiber_floor_ms(great_circle_km(lat1, lon1, lat2, lon2))


def latency_tax_ms(measured_ms: float | None, floor_ms: float) -> float | None:
    """What a round trip cost beyond physics. Failed probes have no measurement, hence no tax; a negative
    result is kept rather than clamped, because it means the floor's inputs (locations) are wrong."""
    if measured_ms is None:
        return None
    return measured_ms - floor_ms


# Emulated geography (the single-machine demo). Real paths are not great circles: cables follow coasts and
# landing stations, and traffic detours through exchange points, so measured round trips typically run ~1.5-2x
# the fiber floor. 1.6 sits at the lower end of that range, so the emulation never exaggerates the tax.
ROUTING_FACTOR = 1.6
# Access network and data-center fabric at both ends: paid even when client and server share a city.
LAST_MILE_MS = 4.0
# Jitter as a share of the round trip (queues grow with the number of hops, which grows with distance), with a
# floor because even a metro path wobbles by a millisecond or so.
JITTER_SHARE = 0.05
MIN_JITTER_MS = 1.0


def emulated_rtt_ms(
    region_lat: float, region_lon: float, target_lat: float, target_lon: float, routing_factor: float = ROUTING_FACTOR
) -> float:
    """The round trip the demo adds between a region and a target's hosting location."""
    return path_floor_ms(region_lat, region_lon, target_lat, target_lon) * routing_factor + LAST_MILE_MS


def emulated_jitter_ms(rtt_ms: float) -> float:
    return max(MIN_JITTER_MS, JITTER_SHARE * rtt_ms)


# Where emulated geography places a target that names no hosting location (a target added by hand in the demo):
# the region most API providers serve from when they say nothing else. Without a place it would pay no round trip
# at all, and read a few milliseconds from every region of the world.
DEFAULT_HOSTING_NAME = "AWS us-east-1, Ashburn, Virginia"
DEFAULT_HOSTING = (39.0438, -77.4874)
# The header a probe's request carries under emulated geography, naming the region the call stands for: all the
# regions call from one machine, and a mock server (devtools/mockllm) may behave differently for one of them.
EMULATED_REGION_HEADER = "x-emulated-region"


def emulated_hosting(latitude: float | None, longitude: float | None) -> tuple[float, float, bool]:
    """(latitude, longitude, assumed) of a target's hosting location for emulated geography: its own, or
    DEFAULT_HOSTING (assumed=True) when it names none."""
    if latitude is None or longitude is None:
        return DEFAULT_HOSTING[0], DEFAULT_HOSTING[1], True
    return latitude, longitude, False
