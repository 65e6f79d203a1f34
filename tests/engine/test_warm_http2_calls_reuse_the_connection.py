"""A warm HTTP/2 probe reuses its connection (no DNS, connect or TLS phase)
and stays HTTP/2; a warm HTTP/2 probe never borrows an HTTP/1.1 probe's
pooled connection to the same origin."""

import asyncio

from probes.engine import Engine, ProbeSpec


def test_the_second_warm_http2_call_reuses_the_http2_connection(mockllm_h2, probe_url):
    url = probe_url(mockllm_h2, "openai", tokens=3)
    h11 = ProbeSpec(url=url, model="m", connection="warm", ca_bundle=mockllm_h2.ca_pem_path)
    h2 = ProbeSpec(url=url, model="m", connection="warm", ca_bundle=mockllm_h2.ca_pem_path, http_version="2")

    async def go():
        engine = Engine()
        try:
            return [await engine.measure(spec) for spec in (h11, h2, h2)]
        finally:
            await engine.aclose()

    over_h11, first, second = asyncio.run(go())
    assert over_h11.http_version == "HTTP/1.1"
    assert (first.connection, first.http_version) == ("cold", "HTTP/2"), "its own pool, its own connection"
    assert (second.outcome, second.connection, second.http_version, second.error) == ("ok", "warm", "HTTP/2", None)
    assert (second.dns_ms, second.connect_ms, second.tls_ms) == (None, None, None)
    assert second.ttft_ms is not None and second.ttft_ms >= second.ttfb_ms
