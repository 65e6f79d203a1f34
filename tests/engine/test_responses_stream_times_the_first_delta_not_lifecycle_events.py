"""Responses API: response.created, in_progress, output_item.added and
content_part.added go out at once, the first delta only after the wait; TTFT
is that delta, at the mock's own send time, never a lifecycle event."""

import uuid

from tests.support import mock_log

GAP_MS = 100


def test_lifecycle_events_do_not_stop_ttft(server, probe_url, measure):
    rid = uuid.uuid4().hex
    url = probe_url(server, "responses", ttft_ms=150, tokens=4, gap_ms=GAP_MS)
    m = measure(url, "responses", server, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    assert m.ttft_ms >= 150 and m.ttft_ms == m.ttfat_ms
    sent_ms = (mock_log(server, rid)["first_token_ns"] - m.start_ns) / 1e6
    assert m.first_event_ms < sent_ms, "response.created came before the server sent the first delta"
    assert -0.5 < m.ttft_ms - sent_ms < GAP_MS / 2, (m.ttft_ms, sent_ms)
