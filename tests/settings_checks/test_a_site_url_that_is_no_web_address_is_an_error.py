"""latency.E004: LATENCY_SITE_URL must be http(s)://host; latency.W008: in production, https://."""

import pytest

from tests.settings_checks.support import latency_ids


@pytest.mark.parametrize("url", ["atlas.example.org", "ftp://atlas.example.org", "https://atlas.example.org/?a=1"])
def test_a_site_url_that_is_no_web_address_is_error_e004(settings, url):
    settings.LATENCY_SITE_URL = url
    assert "latency.E004" in latency_ids()


def test_a_plain_http_site_url_in_production_is_warning_w008(settings):
    settings.LATENCY_SITE_URL = "http://atlas.example.org"
    settings.LATENCY_PRODUCTION = True
    settings.ALLOWED_HOSTS = ["atlas.example.org"]
    assert "latency.W008" in latency_ids()
    settings.LATENCY_SITE_URL = "https://atlas.example.org"
    assert not {"latency.E004", "latency.W008"} & set(latency_ids())
