"""latency.W003: read threads without the pool do nothing; latency.W004: as many read threads as pooled
connections leave none for the request itself."""

from tests.settings_checks.support import latency_ids


def test_read_threads_without_the_pool_are_warning_w003(settings):
    settings.LATENCY_DB_POOL = False
    settings.LATENCY_READ_THREADS = 2
    assert "latency.W003" in latency_ids()
    settings.LATENCY_READ_THREADS = 0
    assert "latency.W003" not in latency_ids()


def test_read_threads_filling_the_pool_are_warning_w004(settings):
    settings.LATENCY_DB_POOL = True
    settings.LATENCY_DB_POOL_MAX = 4
    settings.LATENCY_READ_THREADS = 4
    assert "latency.W004" in latency_ids()
    settings.LATENCY_DB_POOL_MAX = 20
    assert "latency.W004" not in latency_ids()
