"""Emulated geography (the single-machine demo): each region's delay to a
target's hosting location is added at the socket level, inside the timed
phases, without distorting the pacing of a stream."""

from __future__ import annotations

import asyncio
import math
import uuid
from datetime import UTC, datetime

import pytest

from probes import geo
from probes.engine import Engine, ProbeSpec
from probes.engine.clock import DNS_MAX_MS, DNS_RTT_FRACTION
from tests.support import mock_log

RTT = 200.0
LAGOS = (6.5244, 3.3792)
ASHBURN = (39.0438, -77.4874)
FRANKFURT = (50.1109, 8.6821)


# geo --------------------------------------------------------------------------


def test_lagos_to_ashburn_pays_its_fiber_floor_times_the_routing_factor_plus_the_last_mile():
    km = geo.great_circle_km(*LAGOS, *ASHBURN)
    assert 8_700 < km < 8_820
    floor = geo.fiber_floor_ms(km)
    assert floor == pytest.approx(87.6, abs=0.5)
    rtt = geo.emulated_rtt_ms(*LAGOS, *ASHBURN)
    assert rtt == pytest.approx(floor * 1.6 + 4.0)
    assert rtt == pytest.approx(144.2, abs=0.8)
    assert geo.emulated_rtt_ms(*LAGOS, *ASHBURN, routing_factor=2.0) == pytest.approx(floor * 2 + 4.0)


def test_the_same_place_costs_only_the_last_mile_and_jitter_has_a_floor():
    assert geo.emulated_rtt_ms(*LAGOS, *LAGOS) == pytest.approx(geo.LAST_MILE_MS)
    assert geo.emulated_jitter_ms(200.0) == pytest.approx(10.0)
    assert geo.emulated_jitter_ms(4.0) == 1.0


def test_bad_coordinates_are_rejected():
    with pytest.raises(ValueError):
        geo.emulated_rtt_ms(91.0, 0.0, 0.0, 0.0)


# ProbeSpec ----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["emulated_rtt_ms", "emulated_jitter_ms"])
@pytest.mark.parametrize("value", [-1.0, math.nan])
def test_negative_or_nan_emulated_delays_are_rejected(field, value):
    with pytest.raises(ValueError, match="emulated"):
        ProbeSpec(url="http://localhost/", **{field: value})


def test_emulated_delays_travel_in_the_spec_dict():
    spec = ProbeSpec(url="http://localhost/", emulated_rtt_ms=12.5, emulated_jitter_ms=1.5)
    again = ProbeSpec.from_dict(spec.to_dict())
    assert (again.emulated_rtt_ms, again.emulated_jitter_ms) == (12.5, 1.5)
    assert ProbeSpec(url="http://localhost/").emulated_rtt_ms == 0.0


# the engine ------------------------------------------------------------------------

STREAM = {"ttft_ms": 150, "tokens": 6, "gap_ms": 40}


def shift_ms(m, log, key):
    """How long after the server sent a milestone the probe stamped it (both
    clocks are CLOCK_MONOTONIC): about 0 on loopback, one RTT emulated."""
    return {
        "headers_sent_ns": m.ttfb_ms,
        "first_token_ns": m.ttft_ms,
    }[key] - (log[key] - m.start_ns) / 1e6


def dns_share(rtt: float) -> float:
    return min(rtt * DNS_RTT_FRACTION, DNS_MAX_MS)


def applied_once(measured: float, delay: float, unemulated: float) -> bool:
    """A phase that paid an emulated delay once: at least the delay, and less than twice it above the same phase
    measured without emulation in the same run (whatever the machine's load adds to both)."""
    return delay <= measured < unemulated + 2 * delay


def fastest(runs, phase: str) -> float:
    # Load on the test machine only ever adds: the fastest of a few runs is the phase's own time.
    return min(getattr(m, phase) for m in runs)


def test_tls_call_pays_dns_share_connect_tls_and_request_round_trips(mockllm_tls, probe_url, measure):
    url = probe_url(mockllm_tls, "openai", **STREAM)
    m = measure(
        url, "openai", mockllm_tls, emulated_rtt_ms=RTT, headers={"x-mock-request-id": (rid := uuid.uuid4().hex)}
    )
    base = [measure(url, "openai", mockllm_tls) for _ in range(3)]
    assert m.outcome == "ok", m.error
    assert applied_once(m.dns_ms, dns_share(RTT), fastest(base, "dns_ms")), m.dns_ms
    assert applied_once(m.connect_ms, RTT, fastest(base, "connect_ms")), m.connect_ms
    assert applied_once(m.tls_ms, RTT, fastest(base, "tls_ms")), "TLS 1.3: one round trip"
    # The request's round trip comes on top of connect and TLS: the first
    # byte is stamped at its emulated arrival, not at the kernel's.
    assert m.ttfb_ms >= m.dns_ms + m.connect_ms + m.tls_ms + RTT
    assert m.ttfb_ms >= 3 * RTT
    assert_shifted_by_one_rtt(m, mock_log(mockllm_tls, rid))


def assert_one_rtt_after_the_server(m, log, key):
    # The server notes a send after its write returns, a few microseconds
    # after loopback delivered it: hence the allowance below RTT. Above it,
    # a loaded machine can hold the server's next segment back, and a read
    # that takes in both segments carries the later one's kernel stamp (as
    # without emulation): a delay applied twice is what it must stay under.
    assert RTT - 1 <= shift_ms(m, log, key) < 2 * RTT, key


def assert_shifted_by_one_rtt(m, log):
    # A constant one-way delay shifts the whole response by one round trip
    # after the server sent it (stamps are kernel arrival + the delay, so the
    # test machine's load does not enter): the stream's own structure, first
    # token after headers and the gaps between tokens, is kept.
    for key in ("headers_sent_ns", "first_token_ns"):
        assert_one_rtt_after_the_server(m, log, key)
    # The gaps between tokens are the server's pacing, not squashed into
    # bursts by the delay (which a sleep before each read would do), nor each
    # stretched by a round trip (a delay paid per read): compared with the
    # server's own mean gap, which a loaded machine stretches for both.
    server_gap_ms = (log["last_byte_ns"] - log["first_token_ns"]) / 1e6 / (STREAM["tokens"] - 1)
    assert STREAM["gap_ms"] / 2 < m.itl_p50_ms < server_gap_ms + RTT / 2, (m.itl_p50_ms, server_gap_ms)
    assert m.output_tokens == STREAM["tokens"]


def test_plain_call_pays_connect_and_request_round_trips(mockllm, probe_url, measure):
    url = probe_url(mockllm, "anthropic", **STREAM)
    m = measure(url, "anthropic", emulated_rtt_ms=RTT, headers={"x-mock-request-id": (rid := uuid.uuid4().hex)})
    base = [measure(url, "anthropic") for _ in range(3)]
    assert m.outcome == "ok", m.error
    assert m.tls_ms is None
    assert applied_once(m.connect_ms, RTT, fastest(base, "connect_ms")), m.connect_ms
    assert m.ttfb_ms >= m.dns_ms + m.connect_ms + RTT
    assert_shifted_by_one_rtt(m, mock_log(mockllm, rid))


def test_jitter_varies_each_round_trip_within_its_bounds(mockllm_tls, probe_url, measure):
    url = probe_url(mockllm_tls, "openai", tokens=2)
    jitter = 20.0
    runs = [measure(url, "openai", mockllm_tls, emulated_rtt_ms=RTT, emulated_jitter_ms=jitter) for _ in range(3)]
    base = [measure(url, "openai", mockllm_tls) for _ in range(3)]
    low = RTT - jitter
    for m in runs:
        assert m.outcome == "ok", m.error
        # Each round trip at least RTT - jitter, and under twice that above the unemulated phase.
        assert applied_once(m.dns_ms, low * DNS_RTT_FRACTION, fastest(base, "dns_ms")), m.dns_ms
        assert applied_once(m.connect_ms, low, fastest(base, "connect_ms")), m.connect_ms
        assert applied_once(m.tls_ms, low, fastest(base, "tls_ms")), m.tls_ms
        assert m.ttfb_ms >= m.dns_ms + m.connect_ms + m.tls_ms + RTT - jitter
    assert len({m.connect_ms for m in runs}) > 1, "each connect draws its own jitter"


def test_zero_adds_nothing(mockllm_tls, probe_url, measure):
    url = probe_url(mockllm_tls, "openai", tokens=2)
    # The fastest of a few runs: load on the test machine only ever adds.
    base = [measure(url, "openai", mockllm_tls) for _ in range(5)]
    zero = [measure(url, "openai", mockllm_tls, emulated_rtt_ms=0.0, emulated_jitter_ms=0.0) for _ in range(5)]
    assert all(m.outcome == "ok" for m in base + zero)
    # Resolving localhost takes microseconds, so even the DNS share of a
    # round trip would show; the other phases wobble by milliseconds under
    # load, still far below one emulated round trip.
    for phase, within in (("dns_ms", 1), ("connect_ms", 20), ("tls_ms", 20), ("ttfb_ms", 20)):
        assert fastest(zero, phase) < fastest(base, phase) + within, phase


def test_a_warm_connection_still_pays_the_request_round_trip(mockllm_tls, probe_url):
    spec = ProbeSpec(
        url=probe_url(mockllm_tls, "openai", tokens=2),
        model="m",
        connection="warm",
        ca_bundle=mockllm_tls.ca_pem_path,
        emulated_rtt_ms=RTT,
        headers={"x-mock-request-id": (rid := uuid.uuid4().hex)},
    )

    async def go():
        engine = Engine()
        try:
            assert await engine.warm_up(spec)
            return await engine.measure(spec)
        finally:
            await engine.aclose()

    m = asyncio.run(go())
    assert m.outcome == "ok" and m.connection == "warm", m.error
    assert (m.dns_ms, m.connect_ms, m.tls_ms) == (None, None, None)
    assert m.ttfb_ms >= RTT
    assert_one_rtt_after_the_server(m, mock_log(mockllm_tls, rid), "headers_sent_ns")


# scheduling ------------------------------------------------------------------------


@pytest.fixture
def two_region_probe(make_region, make_target, make_probe):
    def make(**target):
        lagos = make_region(latitude=LAGOS[0], longitude=LAGOS[1])
        frankfurt = make_region(latitude=FRANKFURT[0], longitude=FRANKFURT[1])
        probe = make_probe(regions=[lagos, frankfurt], target=make_target(**target))
        return probe, {lagos.slug: LAGOS, frankfurt.slug: FRANKFURT}

    return make


def slots_of(probe):
    from probes.scheduling import due_slots

    return {s.region_slug: s.spec for s in due_slots(datetime.now(UTC)) if s.probe_id == probe.id}


def test_due_slots_give_each_region_its_own_emulated_delay(settings, two_region_probe):
    settings.LATENCY_EMULATED_GEOGRAPHY = True
    probe, places = two_region_probe(latitude=ASHBURN[0], longitude=ASHBURN[1], location_name="Ashburn, VA")
    specs = slots_of(probe)
    assert set(specs) == set(places)
    for slug, (lat, lon) in places.items():
        want = geo.emulated_rtt_ms(lat, lon, *ASHBURN)
        assert specs[slug]["emulated_rtt_ms"] == pytest.approx(want, abs=0.001)
        assert specs[slug]["emulated_jitter_ms"] == pytest.approx(geo.emulated_jitter_ms(want), abs=0.001)
        ProbeSpec.from_dict(specs[slug])  # what a region worker builds from it
    lagos, frankfurt = (specs[slug]["emulated_rtt_ms"] for slug in places)
    assert lagos > frankfurt, "Lagos is farther from Ashburn than Frankfurt is"


def test_no_setting_means_no_emulated_delay(settings, two_region_probe):
    # A target without coordinates under the setting: tests/engine/test_a_target_added_by_hand_is_emulated_from_
    # the_default_hosting_location.py.
    settings.LATENCY_EMULATED_GEOGRAPHY = False
    probe, _ = two_region_probe(latitude=ASHBURN[0], longitude=ASHBURN[1])
    specs = slots_of(probe)
    assert len(specs) == 2
    assert all(s["emulated_rtt_ms"] == 0 and s["emulated_jitter_ms"] == 0 for s in specs.values())


def test_run_now_carries_each_regions_emulated_delay(settings, two_region_probe, test_broker):
    from probes import scheduling
    from tests.support import queued_messages

    settings.LATENCY_EMULATED_GEOGRAPHY = True
    probe, places = two_region_probe(latitude=ASHBURN[0], longitude=ASHBURN[1])
    assert scheduling.run_now([probe.id]) == 2
    for slug, place in places.items():
        (message,) = queued_messages(test_broker, scheduling.region_queue(slug))
        want = geo.emulated_rtt_ms(*place, *ASHBURN)
        assert message["spec"]["emulated_rtt_ms"] == pytest.approx(want, abs=0.001)
