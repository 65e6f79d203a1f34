"""The six segment colours of the phase chart stay distinguishable for readers with protanopia or
deuteranopia (about one man in twelve has a red-green deficiency), not only for full colour vision.

Each colour is passed through the Machado, Oliveira and Fernandes (2009) simulation at full severity, in
linear sRGB, and every pair must stay at least MIN_DELTA_E apart in CIELAB (CIE76). The segments are drawn
side by side in one stacked bar, so any two of them can meet."""

from __future__ import annotations

import itertools
import math

import pytest

from latency import charts

# A CIE76 distance of about 2 is just noticeable; 15 keeps two bars apart at a glance in a legend.
MIN_DELTA_E = 15.0

# Machado et al. 2009, severity 1.0, applied to linear RGB.
SIMULATIONS = {
    "full colour vision": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
}


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = rgb
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def seen_as(hex_colour: str, matrix) -> tuple[float, float, float]:
    rgb = [_linear(int(hex_colour[i : i + 2], 16)) for i in (1, 3, 5)]
    simulated = tuple(min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb, strict=True)))) for row in matrix)
    return _lab(simulated)


@pytest.mark.parametrize("vision", list(SIMULATIONS))
def test_every_two_phase_colours_stay_apart(vision):
    matrix = SIMULATIONS[vision]
    too_close = [
        f"{a} ({charts.SEGMENT_COLORS[a]}) and {b} ({charts.SEGMENT_COLORS[b]}): ΔE {distance:.1f}"
        for a, b in itertools.combinations(charts.SEGMENT_COLORS, 2)
        if (distance := math.dist(seen_as(charts.SEGMENT_COLORS[a], matrix), seen_as(charts.SEGMENT_COLORS[b], matrix)))
        < MIN_DELTA_E
    ]
    assert not too_close, f"with {vision}, these phase colours look alike: {too_close}"


def test_the_simulation_merges_red_and_green_as_a_deuteranope_sees_them():
    # The check above could pass by never simulating anything: pure red and green, far apart for full
    # colour vision, must come out close under deuteranopia.
    red, green = "#d62728", "#2ca02c"
    normal = math.dist(
        seen_as(red, SIMULATIONS["full colour vision"]), seen_as(green, SIMULATIONS["full colour vision"])
    )
    deutan = math.dist(seen_as(red, SIMULATIONS["deuteranopia"]), seen_as(green, SIMULATIONS["deuteranopia"]))
    assert normal > 80
    assert deutan < normal / 3
