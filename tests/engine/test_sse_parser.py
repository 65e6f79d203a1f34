"""The SSE parser follows the specification whatever the read boundaries."""

import pytest

from probes.engine.sse import SSEComment, SSEEvent, SSEParser

STREAM = (
    ": keep-alive\n"
    "event: content_block_delta\n"
    'data: {"text": "héllo 日本"}\n'
    "\n"
    "data: line one\n"
    "data: line two\n"
    "id: 7\n"
    "\n"
    "data:no space\n"
    "\n"
    "event: ping\n"
    "\n"
    "data: [DONE]\n"
    "\n"
)


def _events(items):
    return [(i.event, i.data, i.id) for i in items if isinstance(i, SSEEvent)]


EXPECTED = [
    ("content_block_delta", '{"text": "héllo 日本"}', None),
    ("message", "line one\nline two", "7"),
    ("message", "no space", "7"),
    ("message", "[DONE]", "7"),
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending_gives_the_same_events(newline):
    parser = SSEParser()
    data = STREAM.replace("\n", newline).encode()
    assert _events(parser.feed(data, 1)) == EXPECTED


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_events_split_at_every_byte_are_parsed_identically(newline):
    data = STREAM.replace("\n", newline).encode()
    for cut in range(1, len(data)):
        parser = SSEParser()
        items = parser.feed(data[:cut], 1) + parser.feed(data[cut:], 2)
        assert _events(items) == EXPECTED, f"cut at byte {cut}"


def test_one_byte_reads_inside_multibyte_characters_decode_correctly():
    parser = SSEParser()
    items = []
    for i, byte in enumerate(STREAM.replace("\n", "\r\n").encode()):
        items += parser.feed(bytes([byte]), i)
    assert _events(items) == EXPECTED


def test_event_is_stamped_with_the_read_that_completed_it():
    parser = SSEParser()
    assert parser.feed(b"data: a", 100) == []
    assert parser.feed(b"bc\n", 200) == []
    (event,) = parser.feed(b"\n", 300)
    assert (event.data, event.at_ns) == ("abc", 300)


def test_comments_are_reported_apart_from_events():
    parser = SSEParser()
    items = parser.feed(b": ping\n\n:\n\ndata: x\n\n", 5)
    assert [type(i) for i in items] == [SSEComment, SSEComment, SSEEvent]
    assert items[0].text == "ping"


def test_event_without_data_is_not_dispatched():
    parser = SSEParser()
    assert parser.feed(b"event: ping\n\nid: 3\n\n", 1) == []


def test_unfinished_event_at_end_of_stream_is_reported_partial():
    parser = SSEParser()
    parser.feed(b'data: {"half":', 1)
    assert parser.has_partial_event


def test_byte_order_mark_at_start_is_ignored():
    parser = SSEParser()
    assert _events(parser.feed(b"\xef\xbb\xbfdata: x\n\n", 1)) == [("message", "x", None)]
