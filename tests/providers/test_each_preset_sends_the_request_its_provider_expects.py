"""The request as each provider wants it, read back from the mock's request log: the key in Azure's api-key
header and in a bearer token elsewhere (a digest in the log, never the key), no stream_options for Mistral
(its scenario refuses them, so an ok proves it), include_usage for the others."""

import hashlib
import uuid

import pytest

from tests.providers.conftest import CHAT_PRESETS, KEY
from tests.support import mock_log


@pytest.mark.parametrize("provider", CHAT_PRESETS)
def test_key_header_and_stream_options_are_the_providers(provider, mockllm, preset_url, measure_preset):
    rid = uuid.uuid4().hex
    m = measure_preset(preset_url(mockllm, provider, tokens=2), provider, headers={"x-mock-request-id": rid})
    assert m.outcome == "ok", m.error
    log = mock_log(mockllm, rid)
    expected_header = "api-key" if provider == "azure-openai" else "authorization"
    assert log["credential"]["header"] == expected_header
    assert log["credential"]["sha256"] == hashlib.sha256(KEY.encode()).hexdigest()
    assert KEY not in str(log)
    if provider == "mistral":
        assert log["stream_options"] is None
    else:
        assert log["stream_options"] == {"include_usage": True}
