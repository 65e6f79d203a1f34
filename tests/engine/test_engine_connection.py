"""Cold calls measure a new connection every time; warm calls reuse one."""

import asyncio

from probes.engine import Engine, ProbeSpec


def run_twice(spec):
    async def go():
        engine = Engine()
        try:
            return await engine.measure(spec), await engine.measure(spec)
        finally:
            await engine.aclose()

    return asyncio.run(go())


def test_cold_calls_open_a_new_connection_each_time(server, probe_url):
    spec = ProbeSpec(url=probe_url(server, "openai"), model="m", ca_bundle=server.ca_pem_path or "")
    first, second = run_twice(spec)
    for m in (first, second):
        assert m.connection == "cold" and m.connect_ms is not None and m.dns_ms is not None
        assert (m.tls_ms is not None) == bool(server.ca_pem_path)


def test_warm_calls_reuse_the_connection_and_leave_its_phases_null(server, probe_url):
    spec = ProbeSpec(url=probe_url(server, "openai"), model="m", connection="warm", ca_bundle=server.ca_pem_path or "")
    first, second = run_twice(spec)
    assert first.connection == "cold", "the first call had to open the connection"
    assert second.outcome == "ok" and second.connection == "warm"
    assert (second.dns_ms, second.connect_ms, second.tls_ms) == (None, None, None)
    assert second.remote_addr in ("127.0.0.1", "::1")


def test_warm_up_makes_the_first_measured_call_warm(server, probe_url):
    spec = ProbeSpec(
        url=probe_url(server, "anthropic"),
        style="anthropic",
        model="m",
        connection="warm",
        ca_bundle=server.ca_pem_path or "",
    )

    async def go():
        engine = Engine()
        try:
            assert await engine.warm_up(spec)
            return await engine.measure(spec)
        finally:
            await engine.aclose()

    m = asyncio.run(go())
    assert m.outcome == "ok" and m.connection == "warm" and m.connect_ms is None
