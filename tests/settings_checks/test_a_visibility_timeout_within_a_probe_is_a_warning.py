"""latency.W002: a visibility timeout no longer than the longest probe would hand a run in progress to a second
worker."""

from tests.settings_checks.support import latency_ids


def test_a_visibility_timeout_within_the_longest_probe_is_warning_w002(settings):
    settings.LATENCY_VISIBILITY_TIMEOUT = settings.LATENCY_MAX_PROBE_TIMEOUT
    assert "latency.W002" in latency_ids()
    settings.LATENCY_VISIBILITY_TIMEOUT = settings.LATENCY_MAX_PROBE_TIMEOUT + 30
    assert "latency.W002" not in latency_ids()
