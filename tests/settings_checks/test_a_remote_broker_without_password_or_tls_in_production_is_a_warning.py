"""latency.W011: in production, a broker on another host reached over plain TCP without a password."""

from tests.settings_checks.support import latency_ids


def test_a_remote_plain_broker_in_production_is_warning_w011(settings):
    settings.LATENCY_PRODUCTION = True
    settings.ALLOWED_HOSTS = ["atlas.example.org"]
    settings.REDIS_URL = "redis://10.0.0.5:6379/0"
    settings.CELERY_BROKER_URL = "rediss://:secret@broker.example.org:6380/0"
    assert "latency.W011" in latency_ids()
    settings.REDIS_URL = "rediss://:secret@10.0.0.5:6380/0"
    assert "latency.W011" not in latency_ids()
