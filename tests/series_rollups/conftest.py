"""Fixtures of the series rollup tests: the region rollup tests' targets,
probes and regions (two probes share a target; regions overlap)."""

from __future__ import annotations

from tests.region_rollups.conftest import probes, regions  # noqa: F401
