"""TTFT stops on the first generated token, whatever comes before it, and
milestones match the server's own send times."""

import uuid

import pytest

from tests.support import mock_log

STYLES = ["openai", "responses", "anthropic", "gemini"]
# The mock sends the milestone's successor this long after it. How close our
# stamps come to the server's send times (a fraction of a millisecond) is
# bench/probe_accuracy.py's figure; a test on a loaded machine can only
# assert what a correct engine meets under any load: never before the server
# sent it, and attributed to its own event, not to the next one (a stalled
# reader that takes in two events at once carries the later one's kernel
# stamp, so the bound is half the gap, not a few milliseconds).
NEXT_TOKEN_MS = 100


def assert_stamped_at(measured_ms, server_ns, start_ns):
    sent_ms = (server_ns - start_ns) / 1e6
    assert -0.5 < measured_ms - sent_ms < NEXT_TOKEN_MS / 2, (measured_ms, sent_ms)


@pytest.mark.parametrize("style", STYLES)
def test_pings_empty_deltas_and_bookkeeping_do_not_stop_ttft(style, server, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(server, style, pings=3, ttft_ms=150, tokens=4, gap_ms=NEXT_TOKEN_MS)
    m = measure(url, style, server, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    log = mock_log(server, rid)
    # Bookkeeping (role delta, message_start, pings) went out at once; the
    # first token only after 150 ms: TTFT must be past that.
    assert m.ttft_ms >= 150
    if style == "gemini":
        assert m.first_event_ms == m.ttft_ms, "Gemini's first event is its first token"
    else:
        # The bookkeeping event, stamped when the server sent it (not against a fixed bound: on a busy machine
        # the server itself may send it hundreds of milliseconds late), and never after the first token.
        assert m.first_event_ms <= m.ttft_ms, "the bookkeeping event came first"
        assert_stamped_at(m.first_event_ms, log["first_event_ns"], m.start_ns)
    assert_stamped_at(m.ttft_ms, log["first_token_ns"], m.start_ns)


@pytest.mark.parametrize("style", STYLES)
def test_reasoning_counts_for_ttft_and_answer_for_ttfat(style, server, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(server, style, reasoning_tokens=5, tokens=3, gap_ms=NEXT_TOKEN_MS)
    m = measure(url, style, server, headers={"x-mock-request-id": rid})
    log = mock_log(server, rid)
    assert m.ttfat_ms - m.ttft_ms >= 5 * NEXT_TOKEN_MS - 5
    assert_stamped_at(m.ttfat_ms, log["first_answer_ns"], m.start_ns)


@pytest.mark.parametrize("variant", [{"crlf": 1}, {"split": 1}, {"split": 1, "crlf": 1}, {"multiline": 1}])
def test_line_endings_splits_and_multiline_data_parse_identically(variant, server, probe_url, measure):
    m = measure(
        probe_url(server, "openai", tokens=6, reasoning_tokens=2, gap_ms=2, usage=0, **variant), "openai", server
    )
    assert m.outcome == "ok", m.error
    assert (m.output_tokens, m.tokens_estimated) == (8, True)


@pytest.mark.parametrize("style", ["anthropic", "gemini"])
def test_split_reads_parse_for_every_style(style, server, probe_url, measure):
    m = measure(probe_url(server, style, tokens=5, split=1, crlf=1), style, server)
    assert m.outcome == "ok", m.error
    assert m.output_tokens == 5


def test_milestones_match_server_send_times(server, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(server, "openai", headers_delay_ms=40, ttft_ms=NEXT_TOKEN_MS, tokens=5, gap_ms=NEXT_TOKEN_MS)
    m = measure(url, "openai", server, headers={"x-mock-request-id": rid})
    log = mock_log(server, rid)
    for field, key in (("ttfb_ms", "headers_sent_ns"), ("ttft_ms", "first_token_ns"), ("total_ms", "last_byte_ns")):
        assert_stamped_at(getattr(m, field), log[key], m.start_ns)
