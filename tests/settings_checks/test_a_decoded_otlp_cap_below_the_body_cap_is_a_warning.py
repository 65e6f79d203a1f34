"""latency.W005: a decoded-size cap below the body cap refuses, once read, a body the body cap admitted."""

from tests.settings_checks.support import latency_ids


def test_a_decoded_cap_below_the_body_cap_is_warning_w005(settings):
    settings.LATENCY_OTLP_MAX_BODY_BYTES = 4 * 1024 * 1024
    settings.LATENCY_OTLP_MAX_DECODED_BYTES = 1024 * 1024
    assert "latency.W005" in latency_ids()
    settings.LATENCY_OTLP_MAX_DECODED_BYTES = 32 * 1024 * 1024
    assert "latency.W005" not in latency_ids()
