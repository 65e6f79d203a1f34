"""Warm HTTP/2 calls made at the same time all go over the one open
connection and all succeed. They contend for the connection's stream slots
and locks, which the engine builds itself (probes/compat/httpcore.py): a call
that finds them taken waits its turn rather than failing or opening a new
connection. (The mock server announces no stream limit, so httpcore keeps to
one stream at a time and the calls take turns.)"""

import asyncio
import dataclasses
import uuid

from probes.engine import Engine, ProbeSpec


def test_three_warm_http2_calls_at_once_share_the_open_connection(mockllm_h2, probe_url):
    url = probe_url(mockllm_h2, "openai", tokens=2, headers_delay_ms=100)
    spec = ProbeSpec(url=url, model="m", connection="warm", ca_bundle=mockllm_h2.ca_pem_path, http_version="2-only")
    rids = [uuid.uuid4().hex for _ in range(4)]
    calls = [dataclasses.replace(spec, headers={"x-mock-request-id": rid}) for rid in rids]

    async def go():
        engine = Engine()
        try:
            first = await engine.measure(calls[0])
            return first, await asyncio.gather(*(engine.measure(call) for call in calls[1:]))
        finally:
            await engine.aclose()

    first, together = asyncio.run(go())
    assert (first.outcome, first.connection, first.http_version) == ("ok", "cold", "HTTP/2")
    for m in together:
        assert (m.outcome, m.connection, m.http_version, m.error) == ("ok", "warm", "HTTP/2", None)
        assert m.ttft_ms is not None and m.total_ms >= m.ttft_ms >= m.ttfb_ms
    # One TCP accept on the server for all four requests.
    assert len({mockllm_h2.log_record(rid)["accepted_ns"] for rid in rids}) == 1
