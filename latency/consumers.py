"""The live feed: browsers hear of each stored batch of measurements.

The consumer only relays what probes.live.broadcast sends; it never reads the
database, so a thousand open dashboards cost Redis subscriptions, not queries.
Who may listen is the dashboard's rule (latency.access) and `target` is read
by latency.forms.LiveFeedForm, as every other door reads its parameters.
"""

from __future__ import annotations

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.core.exceptions import TooManyFieldsSent
from django.http import QueryDict
from django.utils import timezone

from latency.access import can_read_dashboard
from latency.forms import LiveFeedForm
from probes.live import GLOBAL_GROUP, target_group
from probes.readings import BadParameter

# Close codes in the 4000-4999 range are ours to define. Sent before the
# handshake is accepted, the server answers HTTP 403 instead; the code still
# tells a test (and a log reader) why.
CLOSE_LOGIN_REQUIRED = 4401
CLOSE_BAD_PARAMETER = 4400
# RFC 6455: "received a type of data it cannot accept".
CLOSE_UNSUPPORTED_DATA = 1003


class MeasurementsConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        if not can_read_dashboard(self.scope.get("user")):
            await self.close(code=CLOSE_LOGIN_REQUIRED)
            return
        # The form reads no database for this one field, so it runs here, in the event loop.
        try:
            form = LiveFeedForm(QueryDict(self.scope.get("query_string", b"")), now=timezone.now())
            target_id = form.result()
        except (BadParameter, TooManyFieldsSent):
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
