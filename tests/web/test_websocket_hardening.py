"""The live feed survives what clients send, and only this very origin (scheme, host and port) may open it.

Over the full latency.asgi application and the real Redis channel layer, as tests/test_consumer_websocket.py."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from latency.asgi import application
from probes.live import broadcast
from tests.web.test_consumer_websocket import TIMEOUT, item

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("redis_channel_layer")]

CLOSE_UNSUPPORTED_DATA = 1003  # RFC 6455


def socket(
    *headers: tuple[bytes, bytes], host: bytes = b"127.0.0.1:8000", scheme: str = "ws", path="/ws/measurements/"
):
    ws = WebsocketCommunicator(application, path, headers=[(b"host", host), *headers])
    ws.scope["client"] = ["127.0.0.1", 50123]
    ws.scope["server"] = ["127.0.0.1", 8000]
    ws.scope["scheme"] = scheme
    return ws


async def opened(ws) -> bool:
    connected, _ = await ws.connect(timeout=TIMEOUT)
    return connected


SAME = (b"origin", b"http://127.0.0.1:8000")


async def test_a_text_frame_that_is_not_json_is_ignored_and_the_feed_keeps_working(session_cookie):
    ws = socket(session_cookie, SAME)
    assert await opened(ws)
    await ws.send_to(text_data="this is not json {")
    assert await ws.receive_nothing(timeout=0.3)
    await sync_to_async(broadcast)([item(81, target_id=2)])
    assert (await ws.receive_json_from(timeout=TIMEOUT))["items"][0]["id"] == 81
    await ws.disconnect()


async def test_a_binary_frame_closes_the_socket_cleanly_with_1003(session_cookie):
    ws = socket(session_cookie, SAME)
    assert await opened(ws)
    await ws.send_to(bytes_data=b"\x00\x01binary")
    message = await ws.receive_output(timeout=TIMEOUT)
    assert message == {"type": "websocket.close", "code": CLOSE_UNSUPPORTED_DATA}
    # The client answers the close; the consumer then ends without raising (disconnect() re-raises its errors).
    await ws.disconnect(code=CLOSE_UNSUPPORTED_DATA, timeout=TIMEOUT)


@pytest.mark.parametrize(
    "origin",
    [
        b"http://127.0.0.1:9999",  # same host, another port
        b"http://127.0.0.1",  # same host, default port
        b"https://127.0.0.1:8000",  # another scheme
        b"http://localhost:8000",  # another host, though allowed
        b"http://evil.example:8000",
        b"null",
    ],
)
async def test_an_origin_differing_in_scheme_host_or_port_is_refused(session_cookie, origin):
    assert not await opened(socket(session_cookie, (b"origin", origin)))


async def test_the_pages_own_origin_is_accepted_on_any_allowed_host(session_cookie):
    assert await opened(socket(session_cookie, (b"origin", b"http://localhost:8000"), host=b"localhost:8000"))
    assert await opened(socket(session_cookie, (b"origin", b"http://localhost"), host=b"localhost"))


async def test_a_host_outside_allowed_hosts_is_refused_even_with_a_matching_origin(session_cookie):
    ws = socket(session_cookie, (b"origin", b"http://evil.example:8000"), host=b"evil.example:8000")
    assert not await opened(ws)


async def test_a_csrf_trusted_origin_is_accepted(session_cookie, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://atlas.example.org"]
    assert await opened(socket(session_cookie, (b"origin", b"https://atlas.example.org")))
    assert not await opened(socket(session_cookie, (b"origin", b"https://atlas.example.org:8443")))


async def test_a_forwarded_proto_counts_only_from_a_trusted_proxy(session_cookie, settings):
    from probes.proxy import parse_proxies

    https_page = (b"origin", b"https://localhost")
    forwarded = (b"x-forwarded-proto", b"https")
    # From an untrusted peer the header is ignored: the socket is plain ws, the page must be http.
    assert not await opened(socket(session_cookie, https_page, forwarded, host=b"localhost"))
    settings.LATENCY_TRUSTED_PROXY_NETWORKS = parse_proxies(["127.0.0.1"])
    assert await opened(socket(session_cookie, https_page, forwarded, host=b"localhost"))
