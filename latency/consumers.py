"""The live feed: browsers hear of each stored batch of measurements.

The consumer only relays what probes.live.broadcast sends; it never reads the
database, so a thousand open dashboards cost Redis subscriptions, not queries.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from probes.live import GLOBAL_GROUP, target_group

# Close codes in the 4000-4999 range are ours to define. Sent before the
# handshake is accepted, the server answers HTTP 403 instead; the code still
# tells a test (and a log reader) why.
CLOSE_LOGIN_REQUIRED = 4401
CLOSE_BAD_PARAMETER = 4400
# RFC 6455: "received a type of data it cannot accept".
CLOSE_UNSUPPORTED_DATA = 1003


def _target_param(query_string: bytes) -> tuple[bool, int | None]:
    """(valid, target id or None for all targets)."""
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("target")
    if not values:
        return True, None
    if len(values) != 1:
        return False, None
    raw = values[0].strip()
    if raw in ("", "all"):
        return True, None
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        return False, None
    return True, int(raw)


class MeasurementsConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if not (settings.LATENCY_PUBLIC_DASHBOARD or (user is not None and user.is_authenticated)):
            await self.close(code=CLOSE_LOGIN_REQUIRED)
            return
        valid, target_id = _target_param(self.scope.get("query_string", b""))
        if not valid:
            await self.close(code=CLOSE_BAD_PARAMETER)
            return
        self.group = GLOBAL_GROUP if target_id is None else target_group(target_id)
        # Join before accepting: once the browser sees the socket open, no
        # broadcast can slip between the two.
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        # A read-only feed: text a client sends (JSON or not) is ignored
        # without being parsed; a binary frame is no part of the protocol
        # and closes the socket cleanly (the JSON consumer's own receive
        # would raise on either and drop the connection with 1006).
        if bytes_data is not None:
            await self.close(code=CLOSE_UNSUPPORTED_DATA)

    async def measurements_new(self, event) -> None:
        await self.send_json({"type": "measurements", "items": event["items"]})
