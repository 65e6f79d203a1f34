"""latency.E001: CELERY_BROKER_URL with another scheme, no host or a bad port is reported at start-up."""

import pytest

from tests.settings_checks.support import latency_ids


@pytest.mark.parametrize(
    "url", ["http://broker.example.org/", "redis://:6379/0", "amqps://broker.example.org:99999/", "memory://"]
)
def test_a_broker_url_that_cannot_work_is_error_e001(settings, url):
    settings.CELERY_BROKER_URL = url
    assert "latency.E001" in latency_ids()


def test_a_tls_broker_with_a_host_passes(settings):
    settings.CELERY_BROKER_URL = "rediss://:secret@broker.example.org:6380/0"
    assert "latency.E001" not in latency_ids()
