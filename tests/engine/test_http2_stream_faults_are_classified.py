"""Stream faults over HTTP/2 get the outcomes they get over HTTP/1.1."""

import pytest


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        ("truncate", "truncated"),
        ("500", "http_error"),
        ("429", "rate_limited"),
        ("error_mid", "upstream_error"),
        ("malformed", "protocol_error"),
    ],
)
@pytest.mark.parametrize("style", ["openai", "anthropic", "gemini"])
def test_stream_fault_over_http2_is_classified(style, fault, outcome, mockllm_h2, probe_url, measure):
    m = measure(probe_url(mockllm_h2, style, fault=fault, tokens=6), style, mockllm_h2, http_version="2")
    if m.error_type == "overloaded_error":  # Anthropic's mid-stream error: the provider's load, kept apart
        outcome = "overloaded"
    assert m.outcome == outcome, m.error
    assert m.http_version == "HTTP/2"
    assert m.ttfb_ms is not None and m.total_ms >= m.ttfb_ms


def test_a_stalled_http2_stream_times_out_at_the_deadline(mockllm_h2, probe_url, measure):
    url = probe_url(mockllm_h2, "openai", fault="stall", tokens=6, stall_s=5)
    m = measure(url, "openai", mockllm_h2, http_version="2", timeout_s=0.5)
    assert m.outcome == "timeout"
    assert "response body" in m.error
    assert m.ttft_ms is not None, "the tokens before the stall were timed"


def test_a_truncated_http2_json_answer_is_cut_short(mockllm_h2, probe_url, measure):
    # A non-streamed answer shorter than its content-length, then RST_STREAM.
    m = measure(probe_url(mockllm_h2, "http", fault="truncate"), "http", mockllm_h2, http_version="2")
    assert m.outcome == "truncated", m.error
    assert m.http_version == "HTTP/2"
