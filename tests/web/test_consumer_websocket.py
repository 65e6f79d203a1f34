"""The live feed over the real ASGI stack and the real Redis channel layer:
who may listen, and that each listener hears what it asked for."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from latency.asgi import application
from latency.consumers import CLOSE_BAD_PARAMETER, CLOSE_LOGIN_REQUIRED
from probes.live import broadcast

# Sessions are looked up from another thread (database_sync_to_async), so the
# rows must be committed: hence transactional_db rather than db.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("redis_channel_layer")]

SAME_ORIGIN = (b"origin", b"http://127.0.0.1:8000")
TIMEOUT = 5


def item(measurement_id: int, target_id: int, region_id: int = 1) -> dict:
    return {
        "id": measurement_id,
        "probe_id": 1,
        "target_id": target_id,
        "region_id": region_id,
        "started_at": "2026-01-01T00:00:00+00:00",
        "outcome": "ok",
        "connection": "cold",
        "dns_ms": 1.0,
        "connect_ms": 20.0,
        "tls_ms": 30.0,
        "ttfb_ms": 200.0,
        "ttft_ms": 250.0,
        "ttfat_ms": 250.0,
        "total_ms": 900.0,
        "tokens_per_s": 50.0,
        "output_tokens": 12,
        "http_status": 200,
    }


class Socket(WebsocketCommunicator):
    """A browser's websocket, spoken as ASGI messages to the full
    latency.asgi application (origin check, session auth, routing)."""

    def __init__(self, path: str, headers: list[tuple[bytes, bytes]]) -> None:
        super().__init__(application, path, headers=headers)
        self.scope["client"] = ["127.0.0.1", 50123]
        self.scope["server"] = ["127.0.0.1", 8000]

    async def connect(self, timeout: float = TIMEOUT) -> tuple[bool, int | None]:
        """(accepted, close code when refused)."""
        accepted, detail = await super().connect(timeout)
        return accepted, (None if accepted else detail)


def socket(path: str = "/ws/measurements/", *headers) -> Socket:
    return Socket(path, list(headers))


async def test_a_signed_in_user_receives_measurements_broadcast_after_ingest(session_cookie):
    ws = socket("/ws/measurements/", session_cookie, SAME_ORIGIN)
    connected, _ = await ws.connect(timeout=TIMEOUT)
    assert connected
    # broadcast is synchronous (ingest calls it after commit): run it from a thread.
    await sync_to_async(broadcast)([item(41, target_id=7), item(42, target_id=8)])
    message = await ws.receive_json_from(timeout=TIMEOUT)
    assert message["type"] == "measurements"
    assert [m["id"] for m in message["items"]] == [41, 42]
    assert message["items"][0]["ttft_ms"] == 250.0
    # One message per batch, not one per row.
    assert await ws.receive_nothing(timeout=0.3)
    await ws.disconnect()


async def test_an_anonymous_connection_is_refused():
    ws = socket("/ws/measurements/", SAME_ORIGIN)
    connected, code = await ws.connect(timeout=TIMEOUT)
    assert not connected
    assert code == CLOSE_LOGIN_REQUIRED


async def test_a_cross_origin_connection_is_refused_even_with_a_valid_session(session_cookie):
    ws = socket("/ws/measurements/", session_cookie, (b"origin", b"http://evil.example"))
    connected, _ = await ws.connect(timeout=TIMEOUT)
    assert not connected


async def test_a_connection_without_an_origin_header_is_refused(session_cookie):
    ws = socket("/ws/measurements/", session_cookie)
    connected, _ = await ws.connect(timeout=TIMEOUT)
    assert not connected


async def test_in_public_mode_an_anonymous_connection_is_accepted_and_hears_broadcasts(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    ws = socket("/ws/measurements/", SAME_ORIGIN)
    connected, _ = await ws.connect(timeout=TIMEOUT)
    assert connected
    await sync_to_async(broadcast)([item(51, target_id=3)])
    message = await ws.receive_json_from(timeout=TIMEOUT)
    assert [m["id"] for m in message["items"]] == [51]
    await ws.disconnect()


async def test_a_target_scoped_socket_gets_only_that_targets_items(session_cookie):
    scoped = socket("/ws/measurements/?target=7", session_cookie, SAME_ORIGIN)
    everything = socket("/ws/measurements/", session_cookie, SAME_ORIGIN)
    assert (await scoped.connect(timeout=TIMEOUT))[0]
    assert (await everything.connect(timeout=TIMEOUT))[0]
    await sync_to_async(broadcast)([item(61, target_id=7), item(62, target_id=8), item(63, target_id=7)])

    message = await scoped.receive_json_from(timeout=TIMEOUT)
    assert [m["id"] for m in message["items"]] == [61, 63]
    assert {m["target_id"] for m in message["items"]} == {7}
    assert await scoped.receive_nothing(timeout=0.3)

    message = await everything.receive_json_from(timeout=TIMEOUT)
    assert [m["id"] for m in message["items"]] == [61, 62, 63]

    # A batch for another target only: the scoped socket hears nothing.
    await sync_to_async(broadcast)([item(64, target_id=8)])
    assert (await everything.receive_json_from(timeout=TIMEOUT))["items"][0]["id"] == 64
    assert await scoped.receive_nothing(timeout=0.5)
    await scoped.disconnect()
    await everything.disconnect()


@pytest.mark.parametrize("query", ["target=abc", "target=-3", "target=0", "target=1&target=2", "target=1.5"])
async def test_a_bad_target_parameter_closes_the_socket(session_cookie, query):
    ws = socket(f"/ws/measurements/?{query}", session_cookie, SAME_ORIGIN)
    connected, code = await ws.connect(timeout=TIMEOUT)
    assert not connected
    assert code == CLOSE_BAD_PARAMETER


async def test_what_a_client_sends_is_ignored_and_the_feed_keeps_working(session_cookie):
    ws = socket("/ws/measurements/", session_cookie, SAME_ORIGIN)
    assert (await ws.connect(timeout=TIMEOUT))[0]
    await ws.send_json_to({"type": "measurements.new", "items": [{"id": 1}]})
    assert await ws.receive_nothing(timeout=0.3)
    await sync_to_async(broadcast)([item(71, target_id=2)])
    assert (await ws.receive_json_from(timeout=TIMEOUT))["items"][0]["id"] == 71
    await ws.disconnect()
