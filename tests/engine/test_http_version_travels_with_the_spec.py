"""http_version travels in the spec's dict (the worker protocol); a message
without it, from an older central site, still parses as HTTP/1.1."""

import pytest

from probes.engine import ProbeSpec


def test_http_version_survives_to_dict_and_from_dict():
    spec = ProbeSpec(url="https://example.com/v1/chat/completions", http_version="2-only")
    assert ProbeSpec.from_dict(spec.to_dict()).http_version == "2-only"


def test_a_message_without_http_version_parses_as_http11():
    data = ProbeSpec(url="https://example.com/v1/chat/completions").to_dict()
    del data["http_version"]
    assert ProbeSpec.from_dict(data).http_version == "1.1"


def test_an_unknown_http_version_is_refused():
    with pytest.raises(ValueError, match="http_version"):
        ProbeSpec(url="https://example.com/", http_version="3")
