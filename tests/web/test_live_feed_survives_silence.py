"""A live dashboard with nothing new to show keeps its channel: waiting on
the channel layer through a quiet spell longer than channels_redis' 5 s
blocking pop must not raise (redis-py's default 5 s socket timeout used to
race that pop and close every idle dashboard socket)."""

import asyncio

import pytest
from channels.layers import channel_layers, get_channel_layer

from latency.env import channel_layer

# Longer than channels_redis' blocking pop (5 s), so at least one empty pop
# ends inside the wait; the wait itself is the assertion's window, not a
# guess at how long something takes.
QUIET_S = 8

# Spends QUIET_S of real time by design: outside `make test-fast`.
pytestmark = pytest.mark.slow


@pytest.fixture
def layer(settings, test_redis_url):
    settings.CHANNEL_LAYERS = {"default": channel_layer(test_redis_url, "latency-test-quiet")}
    channel_layers.backends = {}
    yield get_channel_layer()
    channel_layers.backends = {}


async def test_waiting_through_a_quiet_spell_raises_nothing_and_the_next_message_arrives(layer):
    channel = await layer.new_channel()
    # Our own deadline ends the wait (the builtin TimeoutError), not the
    # Redis client's (redis.exceptions.TimeoutError, which is not one).
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(layer.receive(channel), QUIET_S)
    await layer.send(channel, {"type": "measurement.items", "items": []})
    message = await asyncio.wait_for(layer.receive(channel), 30)
    assert message["type"] == "measurement.items"
