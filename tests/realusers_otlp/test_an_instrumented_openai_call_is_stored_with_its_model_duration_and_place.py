"""An application using the official openai SDK, instrumented by opentelemetry-instrumentation-openai-v2 and
exporting with the OpenTelemetry SDK's OTLP/HTTP protobuf exporter, streams a chat completion from the mock
server: its call is stored once, with the model, the duration the application saw, the place its resource
attributes name, and matched to the mock target by model and provider (openai-v2 2.4b0 with openai 3.x sends no
server.address, and no time to first chunk, so both stay empty)."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.http import Compression

from probes.models import Observation, ObservationRollup
from tests.realusers_otlp.conftest import wait_for_rows


@pytest.mark.parametrize("compression", [None, Compression.Gzip], ids=["plain", "gzip"])
def test_a_streamed_call_is_stored_placed_by_geo_attributes(site, source, mock_target, instrumented, compression):
    app = instrumented(
        site,
        source,
        resource={"geo.country.iso_code": "NG", "geo.locality.name": "Lagos", "geo.location.lat": 6.4541,
                  "geo.location.lon": 3.3947},
        compression=compression,
    )  # fmt: skip
    text, seconds = app.chat(ttft_ms=150, tokens=5, gap_ms=5)
    assert text

    [call] = wait_for_rows(Observation, 1)
    assert (call.kind, call.model, call.provider, call.operation) == ("span", "mock-model", "openai", "chat")
    assert call.target_id == mock_target.id
    assert call.host == ""  # what openai-v2 2.4b0 sends with openai 3.x
    assert call.ttft_ms is None and call.ttft_from == ""
    assert call.output_tokens == 5
    assert call.service == "chat-app"
    # The span covers the call as the application saw it: at least the mock's first-token delay, at most what
    # the test measured around the call (loosely: a busy machine stretches both alike).
    assert 150 <= call.total_ms <= seconds * 1000 + 50
    assert (call.country, call.city, call.latitude, call.longitude, call.place_from) == (
        "NG", "Lagos", 6.5, 3.4, "attributes"
    )  # fmt: skip
    [rollup] = ObservationRollup.objects.all()
    assert (rollup.target_id, rollup.samples, rollup.errors, rollup.city) == (mock_target.id, 1, 0, "Lagos")


def test_a_call_from_a_cloud_region_is_placed_at_the_regions_city(site, source, mock_target, instrumented):
    app = instrumented(site, source, resource={"cloud.provider": "aws", "cloud.region": "eu-west-2"})
    app.chat(tokens=3)
    [call] = wait_for_rows(Observation, 1)
    assert (call.country, call.city, call.place_from) == ("GB", "London", "cloud")
    assert call.target_id == mock_target.id
