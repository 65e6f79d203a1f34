"""latency.W001: LATENCY_GEOIP_DATABASE naming a missing file, or one that is no MaxMind DB, is reported (real
users would go unplaced); a file with a MaxMind DB's metadata passes."""

from latency.checks import MMDB_MARKER
from tests.settings_checks.support import latency_ids


def test_a_missing_geoip_database_is_warning_w001(settings, tmp_path):
    settings.LATENCY_GEOIP_DATABASE = str(tmp_path / "GeoLite2-City.mmdb")
    assert "latency.W001" in latency_ids()


def test_a_file_that_is_no_mmdb_is_warning_w001(settings, tmp_path):
    path = tmp_path / "city.csv"
    path.write_text("network,city\n192.0.2.0/24,Lagos\n")
    settings.LATENCY_GEOIP_DATABASE = str(path)
    assert "latency.W001" in latency_ids()


def test_a_file_with_mmdb_metadata_passes(settings, tmp_path):
    path = tmp_path / "city.mmdb"
    path.write_bytes(b"\x00" * 4096 + MMDB_MARKER + b"\xe9[binary_format_major_version")
    settings.LATENCY_GEOIP_DATABASE = str(path)
    assert "latency.W001" not in latency_ids()
