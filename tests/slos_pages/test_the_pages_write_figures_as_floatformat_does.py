"""The objective pages build their repeated figures in Python (latency.templatetags.objectives) rather than with
floatformat, for speed: the text must be floatformat's, to the digit, in every language, halves and negative
zero included."""

from __future__ import annotations

import pytest
from django.template.defaultfilters import floatformat
from django.utils import translation

from latency.templatetags.objectives import fixed

VALUES = [
    0.0,
    -0.0,
    0.125,
    0.375,
    2.675,
    1.005,
    -0.04,
    -0.05,
    1e-9,
    99.9995,
    99.99949,
    12345.6789,
    -3.14159,
    1e12,
    14.4,
]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("digits", [1, 2, 3])
def test_every_figure_reads_as_floatformat_writes_it(language, digits):
    with translation.override(language):
        for value in VALUES:
            assert fixed(value, digits) == floatformat(value, digits), value


def test_a_missing_figure_is_a_dash():
    assert fixed(None, 1) == "–"
