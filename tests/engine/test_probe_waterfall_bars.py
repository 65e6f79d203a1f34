"""`manage.py probe` draws each phase as a bar as long as the phase: none for a phase that took no time
or did not happen, at least one block for one that took any."""

from __future__ import annotations

from probes.engine.result import Measurement, ProbeSpec
from probes.waterfall import WIDTH, render_waterfall

SPEC = ProbeSpec(url="http://localhost:8000/v1/chat/completions", model="m")


def bars(measurement: Measurement) -> dict[str, str]:
    """label -> the bar between the pipes, or None for a phase drawn as '-'."""
    found = {}
    for line in render_waterfall(SPEC, measurement).splitlines():
        if "|" in line:
            label = line[2:22].strip()
            found[label] = line.split("|")[1]
    return found


def measured(**phases) -> Measurement:
    base = {"dns_ms": 0.0, "connect_ms": 0.2, "tls_ms": None, "ttfb_ms": 400.0, "total_ms": 1000.0}
    return Measurement(outcome="ok", http_status=200, **{**base, **phases})


def test_a_phase_of_zero_milliseconds_draws_no_bar():
    drawn = bars(measured(dns_ms=0.0))
    assert "DNS" in drawn and "█" not in drawn["DNS"]
    assert len(drawn["DNS"]) == WIDTH  # the frame is kept, empty


def test_a_phase_that_rounds_to_zero_on_screen_draws_no_bar():
    assert "█" not in bars(measured(dns_ms=0.0004))["DNS"]


def test_a_short_phase_still_draws_one_block():
    assert bars(measured(connect_ms=0.2))["TCP connect"].count("█") == 1


def test_a_phase_that_did_not_happen_is_a_dash_without_a_frame():
    text = render_waterfall(SPEC, measured(tls_ms=None))
    [tls] = [line for line in text.splitlines() if "TLS handshake" in line]
    assert tls.split() == ["TLS", "handshake", "-"]


def test_bars_are_proportional_and_stay_inside_the_frame():
    drawn = bars(measured(dns_ms=0.0, connect_ms=100.0, ttfb_ms=500.0, total_ms=1000.0))
    assert drawn["total"] == "█" * WIDTH
    assert drawn["TCP connect"].count("█") == WIDTH // 10
    assert all(len(bar) == WIDTH for bar in drawn.values())


def test_a_call_that_failed_at_once_draws_no_full_blocks():
    # A refused connection: every phase 0.000 ms, total 0.000 ms.
    failed = Measurement(outcome="connect_error", dns_ms=0.0, connect_ms=None, total_ms=0.0)
    assert all("█" not in bar for bar in bars(failed).values())
