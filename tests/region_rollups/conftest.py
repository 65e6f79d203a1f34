"""Fixtures of the region rollup tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def regions(make_region):
    return [make_region(), make_region(), make_region()]


@pytest.fixture
def probes(make_probe, regions):
    """Four probes of three targets (two probes share the first), from
    overlapping sets of regions."""
    first = make_probe(regions=regions)
    return [
        first,
        make_probe(target=first.target, regions=regions[:2]),
        make_probe(regions=regions[1:]),
        make_probe(regions=regions),
    ]
