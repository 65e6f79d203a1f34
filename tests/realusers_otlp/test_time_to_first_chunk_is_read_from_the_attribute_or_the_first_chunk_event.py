"""Time to first token, where an instrumentation records it: the conventions' attribute
gen_ai.response.time_to_first_chunk (seconds), or, from OpenLLMetry's openai instrumentation, the first
gen_ai.content.completion.chunk event's time after the span's start. Each observation says which it came from;
a value longer than the call itself is not trusted."""

from __future__ import annotations

import time

from probes.models import Observation
from tests.realusers_otlp.conftest import trace_request

MS = 1_000_000
BASE = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini"}


def test_each_source_of_the_time_to_first_chunk_is_read_and_named(site, source, post):
    t = time.time_ns() - 10_000 * MS
    request = trace_request(
        [
            {"start": t, "end": t + 1000 * MS,
             "attributes": {**BASE, "gen_ai.response.time_to_first_chunk": 0.25}},
            {"start": t, "end": t + 1100 * MS, "attributes": BASE,
             "events": [("gen_ai.content.completion.chunk", t + 300 * MS, {}),
                        ("gen_ai.content.completion.chunk", t + 400 * MS, {})]},
            {"start": t, "end": t + 1200 * MS,
             "attributes": {**BASE, "gen_ai.response.time_to_first_chunk": 9.0}},  # longer than the call
        ]
    )  # fmt: skip
    assert post(site, "traces", request.SerializeToString(), token=source.token).status_code == 200
    got = sorted(Observation.objects.values_list("total_ms", "ttft_ms", "ttft_from", "provider"))
    assert got == [
        (1000.0, 250.0, "gen_ai.response.time_to_first_chunk", "openai"),
        (1100.0, 300.0, "gen_ai.content.completion.chunk", "openai"),
        (1200.0, None, "", "openai"),
    ]
