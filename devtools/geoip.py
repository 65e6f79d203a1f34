"""The city database the demo and the tests place real users with: the GeoLite2 City database of 2018 packaged by
maxminddb-geolite2 (CC BY-SA 4.0), a [dev] dependency. Far too old for a real site, which names a current one in
LATENCY_GEOIP_DATABASE (docs/guides/real-users-geoip.md); fine for addresses made up for a demo or a test."""

from __future__ import annotations


def demo_city_database() -> str:
    """The path of the packaged .mmdb file."""
    from _maxminddb_geolite2 import geolite2_database

    return geolite2_database()
