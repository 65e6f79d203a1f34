"""Where a real user was: from what the application says, else from the client's address, else from the
source's default.

In order of trust:
1. attributes (resource attributes overlaid by the span's own): `geo.country.iso_code`, `geo.locality.name`,
   `geo.location.lat` / `geo.location.lon` (OpenTelemetry's geo semantic conventions);
2. `cloud.provider` + `cloud.region`: an application running in a cloud region serves users near it, so it is
   placed at the region's city from CLOUD_REGIONS below (a table we keep);
3. the client address, looked up in the offline city database the operator names in LATENCY_GEOIP_DATABASE
   (MaxMind DB format: DB-IP's IP to City Lite or MaxMind's GeoLite2 City, docs/guides/real-users-geoip.md).
   Never a network lookup. With none configured this step is skipped: the user is stored without a place from
   the address, and the real-users panel says why. The address itself is never stored, logged or returned: only
   the city it maps to;
4. the source's default location (IngestSource.default_*).

Coordinates are kept at city resolution: rounded to 0.1 degree (about 11 km), whatever precision was sent, so a
phone's GPS fix in `geo.location.*` does not pinpoint a person. Places with fewer observations than
LATENCY_REAL_USERS_MIN_SAMPLES are never shown (probes.readings.realusers)."""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
from collections.abc import Mapping
from typing import Any

from cachetools import LRUCache
from django.conf import settings

from probes.realusers.types import NOWHERE, Place

log = logging.getLogger(__name__)

COORDINATE_DECIMALS = 1
_MAX_CITY = 100

# (cloud.provider, cloud.region) -> (country, city, latitude, longitude). The provider values are those of
# OpenTelemetry's cloud.provider attribute; regions as each cloud names them.
CLOUD_REGIONS: dict[tuple[str, str], tuple[str, str, float, float]] = {
    # Amazon Web Services
    ("aws", "us-east-1"): ("US", "Ashburn", 39.04, -77.49),
    ("aws", "us-east-2"): ("US", "Columbus", 39.96, -83.0),
    ("aws", "us-west-1"): ("US", "San Jose", 37.34, -121.89),
    ("aws", "us-west-2"): ("US", "Boardman", 45.84, -119.7),
    ("aws", "ca-central-1"): ("CA", "Montreal", 45.5, -73.57),
    ("aws", "sa-east-1"): ("BR", "São Paulo", -23.55, -46.63),
    ("aws", "eu-west-1"): ("IE", "Dublin", 53.35, -6.26),
    ("aws", "eu-west-2"): ("GB", "London", 51.51, -0.13),
    ("aws", "eu-west-3"): ("FR", "Paris", 48.86, 2.35),
    ("aws", "eu-central-1"): ("DE", "Frankfurt", 50.11, 8.68),
    ("aws", "eu-central-2"): ("CH", "Zurich", 47.37, 8.54),
    ("aws", "eu-north-1"): ("SE", "Stockholm", 59.33, 18.07),
    ("aws", "eu-south-1"): ("IT", "Milan", 45.46, 9.19),
    ("aws", "eu-south-2"): ("ES", "Zaragoza", 41.65, -0.89),
    ("aws", "af-south-1"): ("ZA", "Cape Town", -33.92, 18.42),
    ("aws", "me-south-1"): ("BH", "Manama", 26.23, 50.59),
    ("aws", "me-central-1"): ("AE", "Dubai", 25.2, 55.27),
    ("aws", "il-central-1"): ("IL", "Tel Aviv", 32.09, 34.78),
    ("aws", "ap-south-1"): ("IN", "Mumbai", 19.08, 72.88),
    ("aws", "ap-south-2"): ("IN", "Hyderabad", 17.39, 78.49),
    ("aws", "ap-southeast-1"): ("SG", "Singapore", 1.35, 103.82),
    ("aws", "ap-southeast-2"): ("AU", "Sydney", -33.87, 151.21),
    ("aws", "ap-southeast-3"): ("ID", "Jakarta", -6.21, 106.85),
    ("aws", "ap-southeast-4"): ("AU", "Melbourne", -37.81, 144.96),
    ("aws", "ap-northeast-1"): ("JP", "Tokyo", 35.68, 139.65),
    ("aws", "ap-northeast-2"): ("KR", "Seoul", 37.57, 126.98),
    ("aws", "ap-northeast-3"): ("JP", "Osaka", 34.69, 135.5),
    ("aws", "ap-east-1"): ("HK", "Hong Kong", 22.32, 114.17),
    # Google Cloud
    ("gcp", "us-central1"): ("US", "Council Bluffs", 41.26, -95.86),
    ("gcp", "us-east1"): ("US", "Moncks Corner", 33.2, -80.01),
    ("gcp", "us-east4"): ("US", "Ashburn", 39.04, -77.49),
    ("gcp", "us-east5"): ("US", "Columbus", 39.96, -83.0),
    ("gcp", "us-west1"): ("US", "The Dalles", 45.59, -121.18),
    ("gcp", "us-west2"): ("US", "Los Angeles", 34.05, -118.24),
    ("gcp", "us-west4"): ("US", "Las Vegas", 36.17, -115.14),
    ("gcp", "us-south1"): ("US", "Dallas", 32.78, -96.8),
    ("gcp", "northamerica-northeast1"): ("CA", "Montreal", 45.5, -73.57),
    ("gcp", "southamerica-east1"): ("BR", "São Paulo", -23.55, -46.63),
    ("gcp", "europe-west1"): ("BE", "St. Ghislain", 50.45, 3.82),
    ("gcp", "europe-west2"): ("GB", "London", 51.51, -0.13),
    ("gcp", "europe-west3"): ("DE", "Frankfurt", 50.11, 8.68),
    ("gcp", "europe-west4"): ("NL", "Eemshaven", 53.44, 6.83),
    ("gcp", "europe-west6"): ("CH", "Zurich", 47.37, 8.54),
    ("gcp", "europe-west9"): ("FR", "Paris", 48.86, 2.35),
    ("gcp", "europe-north1"): ("FI", "Hamina", 60.57, 27.2),
    ("gcp", "europe-southwest1"): ("ES", "Madrid", 40.42, -3.7),
    ("gcp", "me-west1"): ("IL", "Tel Aviv", 32.09, 34.78),
    ("gcp", "africa-south1"): ("ZA", "Johannesburg", -26.2, 28.05),
    ("gcp", "asia-south1"): ("IN", "Mumbai", 19.08, 72.88),
    ("gcp", "asia-southeast1"): ("SG", "Singapore", 1.35, 103.82),
    ("gcp", "asia-southeast2"): ("ID", "Jakarta", -6.21, 106.85),
    ("gcp", "asia-east1"): ("TW", "Changhua", 24.08, 120.54),
    ("gcp", "asia-east2"): ("HK", "Hong Kong", 22.32, 114.17),
    ("gcp", "asia-northeast1"): ("JP", "Tokyo", 35.68, 139.65),
    ("gcp", "asia-northeast3"): ("KR", "Seoul", 37.57, 126.98),
    ("gcp", "australia-southeast1"): ("AU", "Sydney", -33.87, 151.21),
    # Microsoft Azure
    ("azure", "eastus"): ("US", "Boydton", 36.67, -78.39),
    ("azure", "eastus2"): ("US", "Boydton", 36.67, -78.39),
    ("azure", "centralus"): ("US", "Des Moines", 41.59, -93.62),
    ("azure", "westus"): ("US", "San Francisco", 37.77, -122.42),
    ("azure", "westus2"): ("US", "Quincy", 47.23, -119.85),
    ("azure", "westus3"): ("US", "Phoenix", 33.45, -112.07),
    ("azure", "southcentralus"): ("US", "San Antonio", 29.42, -98.49),
    ("azure", "canadacentral"): ("CA", "Toronto", 43.65, -79.38),
    ("azure", "brazilsouth"): ("BR", "São Paulo", -23.55, -46.63),
    ("azure", "northeurope"): ("IE", "Dublin", 53.35, -6.26),
    ("azure", "westeurope"): ("NL", "Amsterdam", 52.37, 4.9),
    ("azure", "uksouth"): ("GB", "London", 51.51, -0.13),
    ("azure", "francecentral"): ("FR", "Paris", 48.86, 2.35),
    ("azure", "germanywestcentral"): ("DE", "Frankfurt", 50.11, 8.68),
    ("azure", "swedencentral"): ("SE", "Gävle", 60.67, 17.14),
    ("azure", "switzerlandnorth"): ("CH", "Zurich", 47.37, 8.54),
    ("azure", "southafricanorth"): ("ZA", "Johannesburg", -26.2, 28.05),
    ("azure", "uaenorth"): ("AE", "Dubai", 25.2, 55.27),
    ("azure", "centralindia"): ("IN", "Pune", 18.52, 73.86),
    ("azure", "southeastasia"): ("SG", "Singapore", 1.35, 103.82),
    ("azure", "eastasia"): ("HK", "Hong Kong", 22.32, 114.17),
    ("azure", "japaneast"): ("JP", "Tokyo", 35.68, 139.65),
    ("azure", "koreacentral"): ("KR", "Seoul", 37.57, 126.98),
    ("azure", "australiaeast"): ("AU", "Sydney", -33.87, 151.21),
}
# Other spellings of cloud.provider seen in the wild, to the semantic conventions' values.
PROVIDER_ALIASES = {"amazon": "aws", "amazon_web_services": "aws", "google": "gcp", "google_cloud": "gcp",
                    "microsoft": "azure", "azure_cloud": "azure"}  # fmt: skip


def _round(value: float) -> float:
    return round(value, COORDINATE_DECIMALS)


def _coordinate(value: Any, limit: float) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number) or not -limit <= number <= limit:
        return None
    return _round(number)


def _text(value: Any, limit: int) -> str:
    # NUL: no PostgreSQL text column takes it (probes.realusers.otlp.text says why it matters).
    return value.replace("\x00", "").strip()[:limit] if isinstance(value, str) else ""


def _from_attributes(attributes: Mapping[str, Any]) -> Place | None:
    country = _text(attributes.get("geo.country.iso_code"), 8).upper()
    if not (len(country) == 2 and country.isascii() and country.isalpha()):
        country = ""
    city = _text(attributes.get("geo.locality.name"), _MAX_CITY)
    lat = _coordinate(attributes.get("geo.location.lat"), 90.0)
    lon = _coordinate(attributes.get("geo.location.lon"), 180.0)
    if lat is None or lon is None:
        lat = lon = None
    if not (country or city or lat is not None):
        return None
    return Place(country, city, lat, lon, "attributes")


def _from_cloud(attributes: Mapping[str, Any]) -> Place | None:
    provider = _text(attributes.get("cloud.provider"), 40).lower()
    region = _text(attributes.get("cloud.region"), 60).lower()
    if not provider or not region:
        return None
    hit = CLOUD_REGIONS.get((PROVIDER_ALIASES.get(provider, provider), region))
    if hit is None:
        return None
    country, city, lat, lon = hit
    return Place(country, city, _round(lat), _round(lon), "cloud")


class _Database:
    """One reader per process, opened on first use; lookups of the same address are remembered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reader: Any = None
        self._path: str | None = None
        self._memo: LRUCache[str, Place | None] = LRUCache(maxsize=50_000)

    def reader(self) -> Any:
        """The open database, or None when LATENCY_GEOIP_DATABASE names none."""
        path = settings.LATENCY_GEOIP_DATABASE
        with self._lock:
            if self._path != path or (path and self._reader is None):
                if self._reader is not None:
                    self._reader.close()
                self._reader = None
                self._path = path
                self._memo.clear()
                if path:
                    import maxminddb

                    self._reader = maxminddb.open_database(path)
            return self._reader

    def lookup(self, address: str) -> Place | None:
        reader = self.reader()
        if reader is None:
            return None
        with self._lock:
            if address in self._memo:
                return self._memo[address]
        place = _place_of(reader.get(address))
        with self._lock:
            self._memo[address] = place
        return place


def _place_of(record: Any) -> Place | None:
    if not isinstance(record, dict):
        return None
    country = (record.get("country") or record.get("registered_country") or {}).get("iso_code") or ""
    city = ((record.get("city") or {}).get("names") or {}).get("en") or ""
    where = record.get("location") or {}
    lat = _coordinate(where.get("latitude"), 90.0)
    lon = _coordinate(where.get("longitude"), 180.0)
    if lat is None or lon is None:
        lat = lon = None
    if not (country or lat is not None):
        return None
    return Place(str(country)[:2].upper(), str(city)[:_MAX_CITY], lat, lon, "address")


_database = _Database()


def city_database_configured() -> bool:
    """Whether users can be placed by their address: LATENCY_GEOIP_DATABASE names a city database."""
    return bool(settings.LATENCY_GEOIP_DATABASE)


def place_of_address(address: str | None) -> Place | None:
    """The city of a public address, or None (private, loopback, unknown, or not an address)."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return None
    if not ip.is_global:
        return None
    try:
        return _database.lookup(str(ip))
    except (OSError, ValueError) as error:
        # A missing or corrupt database file: users go unplaced rather than calls being refused.
        log.warning("the city database could not be read: %s", error)
        return None


def _from_default(source: Any) -> Place | None:
    if source is None:
        return None
    country = (getattr(source, "default_country", "") or "").upper()
    city = getattr(source, "default_city", "") or ""
    lat, lon = getattr(source, "default_latitude", None), getattr(source, "default_longitude", None)
    if lat is None or lon is None:
        lat = lon = None
    if not (country or city or lat is not None):
        return None
    return Place(country, city, None if lat is None else _round(lat), None if lon is None else _round(lon), "default")


def place_for(attributes: Mapping[str, Any], client_ip: str | None, source: Any = None) -> Place:
    """The place of one call. `attributes`: the resource's attributes overlaid by the span's (or empty for a
    beacon); `client_ip`: the sender's address as probes.proxy believes it (used, never kept)."""
    return (
        _from_attributes(attributes)
        or _from_cloud(attributes)
        or place_of_address(client_ip)
        or _from_default(source)
        or NOWHERE
    )


def client_address(request: Any) -> str | None:
    """The sender's address: the TCP peer, or X-Forwarded-For when the peer is one of LATENCY_TRUSTED_PROXIES."""
    from probes.proxy import client_ip

    return client_ip(request)
