"""A protobuf string may carry NUL characters, which PostgreSQL text cannot hold: the span is stored with them
removed, instead of the whole batch failing."""

from __future__ import annotations

import time

from probes.models import Observation
from tests.realusers_otlp.conftest import trace_request


def test_a_model_and_place_with_nul_are_stored_cleaned_and_the_batch_is_kept(site, source, post):
    t = time.time_ns() - 5_000_000_000
    odd = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt\x00-4o", "server.address": "api.\x00x.com",
           "geo.country.iso_code": "KE", "geo.locality.name": "Nai\x00robi"}  # fmt: skip
    plain = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "server.address": "api.x.com"}
    request = trace_request(
        [
            {"start": t, "end": t + 900_000_000, "attributes": odd},
            {"start": t, "end": t + 800_000_000, "attributes": plain},
        ]
    )
    response = post(site, "traces", request.SerializeToString(), token=source.token)
    assert response.status_code == 200
    rows = sorted(Observation.objects.values_list("model", "host", "city", "total_ms"), key=lambda r: r[3])
    assert rows == [("gpt-4o", "api.x.com", "", 800.0), ("gpt-4o", "api.x.com", "Nairobi", 900.0)]
