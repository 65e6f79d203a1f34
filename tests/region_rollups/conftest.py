"""Fixtures of the region rollup tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def regions(make_region):
    return [make_region(), make_region(), make_region()]


def four_probes(regions):
    """Four probes of three targets (two probes share the first), from
    overlapping sets of regions."""
    from tests.factories import ProbeFactory

    first = ProbeFactory(regions=regions)
    return [
        first,
        ProbeFactory(target=first.target, regions=regions[:2]),
        ProbeFactory(regions=regions[1:]),
        ProbeFactory(regions=regions),
    ]


@pytest.fixture
def probes(db, regions):
    return four_probes(regions)
