"""latency.E002: REDIS_URL with a bad port, no host or a database that is no number is reported at start-up."""

import pytest

from tests.settings_checks.support import latency_ids


@pytest.mark.parametrize("url", ["redis://127.0.0.1:70000/0", "redis:///0", "redis://127.0.0.1:6379/live"])
def test_a_redis_url_that_cannot_work_is_error_e002(settings, url):
    settings.REDIS_URL = url
    assert "latency.E002" in latency_ids()


def test_a_unix_socket_passes(settings):
    settings.REDIS_URL = "unix:///run/redis/redis.sock"
    assert "latency.E002" not in latency_ids()
