"""A histogram bucket's calls are stored at one representative value: the geometric midpoint of its bounds,
narrowed by the point's min and max; the open first bucket from the min (else half its bound), the open last
one at the max (else its lower bound, never an invented value)."""

from __future__ import annotations

import math

import pytest

from probes.realusers.otlp_metrics import representative


def test_a_closed_bucket_is_its_geometric_midpoint():
    assert representative(0.5, 2.0, None, None) == pytest.approx(1.0)
    assert representative(1.0, 4.0, None, None) == pytest.approx(2.0)


def test_min_and_max_narrow_the_bucket():
    assert representative(0.5, 2.0, 0.9, 1.1) == pytest.approx(math.sqrt(0.9 * 1.1))
    assert representative(0.0, 5.0, 0.2, 0.2) == pytest.approx(0.2)  # one value in a wide bucket: that value


def test_the_open_buckets():
    assert representative(None, 0.1, None, None) == pytest.approx(0.05)
    assert representative(None, 0.1, 0.04, None) == pytest.approx(math.sqrt(0.04 * 0.1))
    assert representative(10.0, None, None, 30.0) == pytest.approx(math.sqrt(10.0 * 30.0))
    assert representative(10.0, None, None, None) == pytest.approx(10.0)
    assert representative(0.0, 0.0, None, None) == 0.0  # an exponential histogram's zero bucket
