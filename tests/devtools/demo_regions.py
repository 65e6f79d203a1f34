"""The demo regions a test of the demo's data needs, as the migration seeds them (the test database starts without
them)."""

from __future__ import annotations

import importlib

from probes.models import Region

SEEDED = {row[0]: row for row in importlib.import_module("probes.migrations.0002_seed_regions").REGIONS}


def demo_regions(slugs: list[str]) -> list[Region]:
    regions = []
    for slug in slugs:
        _, name, city, country, latitude, longitude = SEEDED[slug]
        region, _ = Region.objects.update_or_create(
            slug=slug,
            defaults={"name": name, "city": city, "country": country, "latitude": latitude, "longitude": longitude},
        )
        regions.append(region)
    return regions
