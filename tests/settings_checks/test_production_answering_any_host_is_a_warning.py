"""latency.W007: production with ALLOWED_HOSTS left at the development default, or '*'."""

import pytest

from tests.settings_checks.support import latency_ids


@pytest.mark.parametrize("hosts", [["127.0.0.1", "localhost", "[::1]"], ["*"], []])
def test_production_without_a_public_host_name_is_warning_w007(settings, hosts):
    settings.LATENCY_PRODUCTION = True
    settings.ALLOWED_HOSTS = hosts
    assert "latency.W007" in latency_ids()


def test_production_with_its_host_name_passes(settings):
    settings.LATENCY_PRODUCTION = True
    settings.ALLOWED_HOSTS = ["atlas.example.org"]
    assert "latency.W007" not in latency_ids()
